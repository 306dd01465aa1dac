#!/usr/bin/env bash
# Evidence: a job on a GPU node sees its RDMA devices (/sys/class/infiniband, one per fabric at least)
# and may lock unlimited memory (what RDMA registration needs).
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
require SLURM_NAMESPACE SLURM_LOGIN GPU_PARTITION RDMA_MIN_DEVICES

# Run by the job's shell on the GPU node (hence not expanded here).
# shellcheck disable=SC2016
PROBE='echo "devices: $(ls /sys/class/infiniband 2>/dev/null | tr "\n" " ")"; echo "memlock: $(ulimit -l)"'

check() {
  local output devices memlock
  if ! output=$(k -n "$SLURM_NAMESPACE" exec "deployment/$SLURM_LOGIN" -- \
    srun --partition="$GPU_PARTITION" --nodes=1 --time=1 --job-name=hpcforge-rdma bash -c "$PROBE" 2>&1); then
    echo "RDMA device check in partition $GPU_PARTITION failed: $(tail -n 3 <<<"$output" | tr '\n' ' ')"
    return 1
  fi
  devices=$(sed -n 's/^devices: //p' <<<"$output")
  memlock=$(sed -n 's/^memlock: //p' <<<"$output")
  read -r -a found <<<"$devices"
  if [ "${#found[@]}" -lt "$RDMA_MIN_DEVICES" ]; then
    echo "a job in partition $GPU_PARTITION sees ${#found[@]} RDMA device(s) (${devices:-none}), expected at least $RDMA_MIN_DEVICES"
    return 1
  fi
  if [ "$memlock" != unlimited ]; then
    echo "a job in partition $GPU_PARTITION may lock only ${memlock:-?} KiB of memory (RDMA needs unlimited)"
    return 1
  fi
  echo "${#found[@]} RDMA device(s) (${devices% }), memlock unlimited"
}

converge rdma-devices check
