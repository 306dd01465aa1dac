#!/bin/bash
# Slurm epilog: after a GPU job, its GPUs must be free again: no compute process left on them
# (`nvidia-smi --query-compute-apps`) and no more than a threshold of memory still in use. The
# check waits a little for processes that are still exiting; what is left then drains the node
# ("GPU <index> (<bus id>): <reason>") so the next job does not land on a busy GPU.
#
# In a slurmd pod the memory threshold is what catches a leftover, not the process list: NVML reports
# processes by their host PIDs, and the pod has its own PID namespace (slurm-operator v1.2.1 sets no
# hostPID, worker_app.go; hpcforge does not add it: every job would see, and as root in a privileged pod
# could signal, every process of the host). nvidia-smi in a container without the host's PID namespace
# lists no process or PIDs that mean nothing there (NVIDIA/nvidia-docker#1483, #179), so a leftover below
# GPU_CHECK_MAX_MEMORY_USED_MIB goes unnoticed in pods. The process check still acts on bare-metal hosts.
# SLURM_JOB_GPUS's indexes are mapped to GPUs as in the prolog (GPU_CHECK_INDEX_ORDER; see
# file_order_bus_ids in scripts/slurm/lib/gpu-common.sh for Slurm's rules and sources).
set -u

# --- settings (hpcforge:gpu.health; the Slurm layer rewrites this block) ---
: "${GPU_CHECK_NVIDIA_SMI:=nvidia-smi}"
: "${GPU_CHECK_MAX_MEMORY_USED_MIB:=1024}"
: "${GPU_CHECK_SETTLE_SECONDS:=10}"
: "${GPU_CHECK_TIMEOUT_SECONDS:=60}"
: "${GPU_CHECK_KILL_AFTER_SECONDS:=5}"
: "${GPU_CHECK_DRAIN:=yes}"
: "${GPU_CHECK_SCOPE:=job}"
: "${GPU_CHECK_SCOPE_FILE:=/etc/hpcforge/gpu-check-scope}"
: "${GPU_CHECK_INDEX_ORDER:=nvml}"
: "${GPU_CHECK_DEV_DIR:=/dev}"
: "${GPU_CHECK_JOB_MAP_DIR:=}"
# --- end settings ---

GPU_CHECK_TAG="gpu-epilog"
# --- include ../lib/gpu-common.sh ---
# shellcheck source=SCRIPTDIR/../lib/gpu-common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/gpu-common.sh"
# --- end include ---
read_scope_file

# First, whatever the checks find: the job's GPUs no longer carry its id in dcgm-exporter's metrics (job_map).
if [ -n "$GPU_CHECK_JOB_MAP_DIR" ] && [ -n "${SLURM_JOB_ID:-}" ]; then
  job_map "$SLURM_JOB_ID" "$GPU_CHECK_JOB_MAP_DIR" remove
fi

gpus="${SLURM_JOB_GPUS:-${CUDA_VISIBLE_DEVICES:-}}"
# With MIG (GPU_CHECK_SCOPE=node) the job's indexes are MIG devices, and other jobs may run on the same GPUs:
# leftovers cannot be told apart from their processes, so there is nothing this check can decide.
if [ -z "$gpus" ] || [ "$GPU_CHECK_SCOPE" = node ]; then
  exit 0
fi

require_gpus "$gpus"

# want[N]: the PCI bus id of the job's GPU N, from the device files (GPU_CHECK_INDEX_ORDER=file) or
# nvidia-smi's index (nvml, filled in by problems()).
declare -A want=()
if [ "$GPU_CHECK_INDEX_ORDER" = file ]; then
  details=$(smi -q)
  smi_ok "$?" "$details"
  want_file_order "$gpus" "$details"
fi

# csv ARGS...: nvidia-smi's CSV answer to a query (no header, no units); fails the check when nvidia-smi fails.
csv() {
  local out
  out=$(smi "$@" --format=csv,noheader,nounits)
  smi_ok "$?" "$out"
  printf '%s\n' "$out"
}

# problems: prints the first leftover found on the job's GPUs (nothing when they are free).
problems() {
  local gpu_rows apps gpu index bus used found app_bus pid process memory
  gpu_rows=$(csv --query-gpu=index,pci.bus_id,memory.used) || exit 1
  apps=$(csv --query-compute-apps=gpu_bus_id,pid,process_name,used_memory) || exit 1
  if [ "$GPU_CHECK_INDEX_ORDER" != file ]; then
    while IFS=, read -r index bus _; do
      want[$(trim "$index")]=$(trim "$bus")
    done <<<"$gpu_rows"
  fi
  for gpu in ${gpus//,/ }; do
    found=no
    while IFS=, read -r index bus used; do
      bus=$(trim "$bus")
      if [ -z "${want[$gpu]:-}" ] || [ "$bus" != "${want[$gpu]}" ]; then
        continue
      fi
      found=yes
      used=$(trim "$used")
      while IFS=, read -r app_bus pid process memory; do
        if [ "$(trim "$app_bus")" = "$bus" ]; then
          echo "GPU $gpu ($bus): process $(trim "$pid") ($(trim "$process")) still holds $(trim "$memory") MiB"
          return
        fi
      done <<<"$apps"
      case "$used" in
        '' | *[!0-9]*) ;; # [N/A]: not reported
        *)
          if [ "$used" -gt "$GPU_CHECK_MAX_MEMORY_USED_MIB" ]; then
            # No process listed for it: in a pod NVML's processes are the host's (see the top of this file).
            echo "GPU $gpu ($bus): $used MiB of memory still in use by no process visible here (allowed: $GPU_CHECK_MAX_MEMORY_USED_MIB MiB)"
            return
          fi
          ;;
      esac
    done <<<"$gpu_rows"
    if [ "$found" = no ]; then
      echo "GPU $gpu: not found by nvidia-smi after the job"
      return
    fi
  done
}

waited=0
while :; do
  problem=$(problems) || exit 1
  [ -z "$problem" ] && exit 0
  if [ "$waited" -ge "$GPU_CHECK_SETTLE_SECONDS" ]; then
    fail "$problem"
  fi
  sleep 1
  waited=$((waited + 1))
done
