#!/usr/bin/env bash
# Evidence: a job on a GPU node sees its RDMA devices (/sys/class/infiniband, one per fabric at least)
# and may lock unlimited memory (what RDMA registration needs); its slurmd pod was allocated the fabrics'
# device-plugin resources (RDMA_RESOURCES); NCCL is pointed at the rails (/etc/nccl.conf, RDMA_NCCL_IB_HCA);
# and GPUDirect RDMA can work on the node: nvidia_peermem loaded, or the open kernel module (DMA-BUF).
#
# Why the pod's resources and not only the devices: slurmd runs privileged (slurm-operator v1.2.1,
# worker_app.go), and a privileged container sees every device of its host, so /sys/class/infiniband lists the
# HCAs whether or not the device plugin gave the pod any. What was allocated is in the pod's spec: a pod that
# requests rdma/<fabric> runs only once the plugin has granted it.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
require SLURM_NAMESPACE SLURM_LOGIN GPU_PARTITION RDMA_MIN_DEVICES
: "${RDMA_RESOURCES:=}"
: "${RDMA_NCCL_IB_HCA:=}"

# Run by the job's shell on the GPU node (hence not expanded here). SLURMD_NODENAME is the slurmd pod's name.
# shellcheck disable=SC2016
PROBE='echo "node: $SLURMD_NODENAME"; echo "devices: $(ls /sys/class/infiniband 2>/dev/null | tr "\n" " ")"; echo "memlock: $(ulimit -l)"; echo "nccl: $(grep -h "^NCCL_IB_HCA=" /etc/nccl.conf 2>/dev/null)"; echo "peermem: $([ -d /sys/module/nvidia_peermem ] && echo loaded || echo absent)"; echo "kmod: $(grep -c "Open Kernel Module" /proc/driver/nvidia/version 2>/dev/null)"'

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
  local node limits resource nccl peermem kmod
  node=$(sed -n 's/^node: //p' <<<"$output")
  if [ -n "$RDMA_RESOURCES" ]; then
    limits=$(k -n "$SLURM_NAMESPACE" get pod "$node" -o jsonpath='{.spec.containers[?(@.name=="slurmd")].resources.limits}' 2>&1) || {
      echo "cannot read the slurmd pod $node: $limits"
      return 1
    }
    for resource in $RDMA_RESOURCES; do
      if ! grep -q "\"$resource\":" <<<"$limits"; then
        echo "the slurmd pod $node was allocated no $resource: its job sees the host's HCAs only because slurmd runs privileged"
        return 1
      fi
    done
  fi
  nccl=$(sed -n 's/^nccl: //p' <<<"$output")
  if [ -n "$RDMA_NCCL_IB_HCA" ] && [ "$nccl" != "NCCL_IB_HCA=$RDMA_NCCL_IB_HCA" ]; then
    echo "NCCL on $node is not pointed at the rails: /etc/nccl.conf has '${nccl:-no NCCL_IB_HCA}', expected NCCL_IB_HCA=$RDMA_NCCL_IB_HCA"
    return 1
  fi
  peermem=$(sed -n 's/^peermem: //p' <<<"$output")
  kmod=$(sed -n 's/^kmod: //p' <<<"$output")
  if [ "$peermem" != loaded ] && [ "${kmod:-0}" = 0 ]; then
    echo "GPUDirect RDMA cannot work on $node: nvidia_peermem is not loaded and the driver is not the open kernel module (DMA-BUF): NCCL would copy through host memory"
    return 1
  fi
  echo "${#found[@]} RDMA device(s) (${devices% }), memlock unlimited${RDMA_RESOURCES:+, pod $node allocated $RDMA_RESOURCES}, GPUDirect: $([ "$peermem" = loaded ] && echo nvidia_peermem || echo DMA-BUF)"
}

converge rdma-devices check
