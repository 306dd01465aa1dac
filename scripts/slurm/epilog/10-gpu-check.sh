#!/bin/bash
# Slurm epilog: after a GPU job, its GPUs must be free again: no compute process left on them
# (`nvidia-smi --query-compute-apps`) and no more than a threshold of memory still in use. The
# check waits a little for processes that are still exiting; what is left then drains the node
# ("GPU <index> (<bus id>): <reason>") so the next job does not land on a busy GPU.
# SLURM_JOB_GPUS's indexes are mapped to GPUs as in the prolog (GPU_CHECK_INDEX_ORDER; see
# prolog/10-gpu-check.sh for Slurm's rules and sources).
set -u

# --- settings (hpcforge:gpu.health; the Slurm layer rewrites this block) ---
: "${GPU_CHECK_NVIDIA_SMI:=nvidia-smi}"
: "${GPU_CHECK_MAX_MEMORY_USED_MIB:=1024}"
: "${GPU_CHECK_SETTLE_SECONDS:=10}"
: "${GPU_CHECK_TIMEOUT_SECONDS:=60}"
: "${GPU_CHECK_DRAIN:=yes}"
: "${GPU_CHECK_SCOPE:=job}"
: "${GPU_CHECK_INDEX_ORDER:=nvml}"
: "${GPU_CHECK_DEV_DIR:=/dev}"
# --- end settings ---

gpus="${SLURM_JOB_GPUS:-${CUDA_VISIBLE_DEVICES:-}}"
# With MIG (GPU_CHECK_SCOPE=node) the job's indexes are MIG devices, and other jobs may run on the same GPUs:
# leftovers cannot be told apart from their processes, so there is nothing this check can decide.
if [ -z "$gpus" ] || [ "$GPU_CHECK_SCOPE" = node ]; then
  exit 0
fi

fail() {
  local reason="gpu-epilog: $*"
  echo "$reason" >&2
  if [ "$GPU_CHECK_DRAIN" = yes ] && [ -n "${SLURMD_NODENAME:-}" ] && command -v scontrol >/dev/null 2>&1; then
    scontrol update NodeName="$SLURMD_NODENAME" State=DRAIN Reason="${reason:0:200}" >/dev/null 2>&1 || true
  fi
  exit 1
}

trim() {
  local value="$1"
  value="${value#"${value%%[![:space:]]*}"}"
  value="${value%"${value##*[![:space:]]}"}"
  printf '%s' "$value"
}

for gpu in ${gpus//,/ }; do
  case "$gpu" in
    '' | *[!0-9]*) fail "cannot read the job's GPU list '$gpus' (expected indexes like 0,1)" ;;
  esac
done
if ! command -v "$GPU_CHECK_NVIDIA_SMI" >/dev/null 2>&1; then
  fail "the job had GPUs ($gpus) but $GPU_CHECK_NVIDIA_SMI is missing"
fi

smi() {
  local out rc
  out=$(timeout "$GPU_CHECK_TIMEOUT_SECONDS" "$GPU_CHECK_NVIDIA_SMI" "$@" --format=csv,noheader,nounits 2>&1)
  rc=$?
  if [ "$rc" -eq 124 ]; then
    fail "nvidia-smi did not answer within ${GPU_CHECK_TIMEOUT_SECONDS}s"
  elif [ "$rc" -ne 0 ]; then
    fail "nvidia-smi failed (exit $rc): $(printf '%s' "$out" | head -n 1)"
  fi
  printf '%s\n' "$out"
}

# want[N]: the PCI bus id of the job's GPU N, from the device files (GPU_CHECK_INDEX_ORDER=file) or
# nvidia-smi's index (nvml, filled in by problems()).
declare -A want=()
if [ "$GPU_CHECK_INDEX_ORDER" = file ]; then
  files=()
  for file in "$GPU_CHECK_DEV_DIR"/nvidia*; do
    case "${file##*/nvidia}" in
      '' | *[!0-9]*) ;;
      *) files+=("$file") ;;
    esac
  done
  if [ "${#files[@]}" -gt 0 ]; then
    mapfile -t files < <(printf '%s\n' "${files[@]}" | LC_ALL=C sort)
  fi
  details=$(timeout "$GPU_CHECK_TIMEOUT_SECONDS" "$GPU_CHECK_NVIDIA_SMI" -q 2>&1)
  rc=$?
  if [ "$rc" -ne 0 ]; then
    fail "nvidia-smi failed (exit $rc): $(printf '%s' "$details" | head -n 1)"
  fi
  minors=$(printf '%s\n' "$details" | awk '
    /^GPU [0-9A-Fa-f]+:/ { bus = $2; next }
    /^    Minor Number[[:space:]]*:/ { sub(/^[^:]*: */, ""); print $0 "|" bus }')
  for gpu in ${gpus//,/ }; do
    file="${files[$gpu]:-}"
    minor="${file##*/nvidia}"
    if [ -n "$file" ]; then
      want[$gpu]=$(printf '%s\n' "$minors" | awk -F'|' -v m="$minor" '$1 == m { print $2; exit }')
    fi
  done
fi

# problems: prints the first leftover found on the job's GPUs (nothing when they are free).
problems() {
  local gpu_rows apps gpu index bus used found app_bus pid process memory
  gpu_rows=$(smi --query-gpu=index,pci.bus_id,memory.used) || exit 1
  apps=$(smi --query-compute-apps=gpu_bus_id,pid,process_name,used_memory) || exit 1
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
            echo "GPU $gpu ($bus): $used MiB of memory still in use (allowed: $GPU_CHECK_MAX_MEMORY_USED_MIB MiB)"
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
