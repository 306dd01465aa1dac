#!/usr/bin/env bash
# Evidence: an NCCL all-reduce across GPU nodes through Slurm (srun from a login node, nccl-tests in a
# pinned container image started by Pyxis), its average bus bandwidth held against a floor.
# `--mpi=pmix`: the Slinky slurmd image has Slurm's PMIx plugin. SlinkyProject/containers (main at 05efda0,
# schedmd/slurm/26.05/ubuntu26.04/Dockerfile) builds Slurm 26.05.1 with `debuild` from Slurm's own debian/ and
# installs slurm-smd; at SchedMD/slurm tag slurm-26-05-1-1, debian/control build-depends on libpmix-dev and
# debian/rules configures `--with-pmix`.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
require SLURM_NAMESPACE SLURM_LOGIN GPU_PARTITION NCCL_NODES NCCL_GPUS_PER_NODE NCCL_IMAGE NCCL_MESSAGE_SIZE NCCL_MIN_BUSBW

check() {
  local output busbw
  if ! output=$(k -n "$SLURM_NAMESPACE" exec "deployment/$SLURM_LOGIN" -- \
    srun --partition="$GPU_PARTITION" --nodes="$NCCL_NODES" --ntasks-per-node="$NCCL_GPUS_PER_NODE" \
    --gpus-per-node="$NCCL_GPUS_PER_NODE" --mpi=pmix --time=10 --job-name=hpcforge-nccl \
    --container-image="$NCCL_IMAGE" \
    all_reduce_perf_mpi -b "$NCCL_MESSAGE_SIZE" -e "$NCCL_MESSAGE_SIZE" -f 2 -g 1 2>&1); then
    echo "NCCL all-reduce in partition $GPU_PARTITION failed: $(tail -n 3 <<<"$output" | tr '\n' ' ')"
    return 1
  fi
  # nccl-tests ends with "# Avg bus bandwidth    : 371.52" (GB/s).
  busbw=$(awk -F: '/Avg bus bandwidth/ { gsub(/[[:space:]]/, "", $2); value = $2 } END { print value }' <<<"$output")
  if [ -z "$busbw" ]; then
    echo "NCCL all-reduce printed no average bus bandwidth: $(tail -n 3 <<<"$output" | tr '\n' ' ')"
    return 1
  fi
  # An all-reduce over one rank moves nothing: nccl-tests prints a bus bandwidth of 0 when each process formed a
  # communicator of its own ("nranks 1"), e.g. nccl-tests built without MPI or srun's --mpi not matching the image's
  # MPI (NVIDIA/nccl-tests#294, the run quoted in tests/fixtures/nccl-tests/ranks-ran-alone.txt).
  if awk -v have="$busbw" 'BEGIN { exit !(have + 0 == 0) }'; then
    echo "NCCL all-reduce over $NCCL_NODES nodes x $NCCL_GPUS_PER_NODE GPUs: bus bandwidth 0 GB/s, so each rank ran alone instead of in one communicator (is all_reduce_perf_mpi built with MPI, and does srun --mpi=pmix reach it?)"
    return 1
  fi
  if ! awk -v have="$busbw" -v floor="$NCCL_MIN_BUSBW" 'BEGIN { exit !(have + 0 >= floor + 0) }'; then
    echo "NCCL all-reduce over $NCCL_NODES nodes x $NCCL_GPUS_PER_NODE GPUs: bus bandwidth $busbw GB/s is below the floor of $NCCL_MIN_BUSBW GB/s"
    return 1
  fi
  echo "NCCL all-reduce over $NCCL_NODES nodes x $NCCL_GPUS_PER_NODE GPUs: bus bandwidth $busbw GB/s (floor $NCCL_MIN_BUSBW GB/s)"
}

converge nccl-allreduce check
