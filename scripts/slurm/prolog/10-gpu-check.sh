#!/bin/bash
# Slurm prolog: every GPU the job was given must exist, answer nvidia-smi and be fit to run:
# no pending row remapping or page retirement, no failed row remapping, volatile uncorrectable
# ECC errors within the threshold, and (optionally) a short DCGM diagnostic. A failing check
# prints "GPU <index> (<bus id>): <reason>", drains the node with that reason and exits 1
# (Slurm also drains a node whose prolog fails, and requeues the job).
#
# Only `nvidia-smi --query-gpu` fields that exist are used (`nvidia-smi --help-query-gpu`); there
# is no `health` field (asking for it exits 2: 'Field "health" is not a valid field to query.').
# The row-remapping fields exist only in newer drivers; older ones (535) answer them from `-q`.
# A value of [N/A] or [Not Supported] means the GPU does not report that property (H100s have
# no page retirement, only row remapping; ECC counters are N/A with ECC disabled): that check is
# skipped for that GPU. Any other bracketed value ([Unknown Error], ...) fails the check.
# GPU_CHECK_SCOPE=node checks every GPU of the node instead of the job's: with MIG, SLURM_JOB_GPUS
# holds MIG device indexes, which are not nvidia-smi GPU indexes. It is set per node, for the nodes of MIG nodesets
# only, by GPU_CHECK_SCOPE_FILE (read_scope_file in scripts/slurm/lib/gpu-common.sh).
#
# Which GPU is SLURM_JOB_GPUS's index N (GPU_CHECK_INDEX_ORDER: nvml or file): see
# file_order_bus_ids in scripts/slurm/lib/gpu-common.sh, with Slurm's rules and sources.
set -u

# --- settings (hpcforge:gpu.health; the Slurm layer rewrites this block) ---
: "${GPU_CHECK_NVIDIA_SMI:=nvidia-smi}"
: "${GPU_CHECK_MAX_VOLATILE_UNCORRECTED_ECC:=0}"
: "${GPU_CHECK_PENDING_ROW_REMAP:=fail}"
: "${GPU_CHECK_ROW_REMAP_FAILURE:=fail}"
: "${GPU_CHECK_PENDING_PAGE_RETIREMENT:=fail}"
: "${GPU_CHECK_DCGM_DIAG_LEVEL:=0}"
: "${GPU_CHECK_TIMEOUT_SECONDS:=60}"
: "${GPU_CHECK_KILL_AFTER_SECONDS:=5}"
: "${GPU_CHECK_DRAIN:=yes}"
: "${GPU_CHECK_SCOPE:=job}"
: "${GPU_CHECK_SCOPE_FILE:=/etc/hpcforge/gpu-check-scope}"
: "${GPU_CHECK_INDEX_ORDER:=nvml}"
: "${GPU_CHECK_DEV_DIR:=/dev}"
: "${GPU_CHECK_JOB_MAP_DIR:=}"
# --- end settings ---

gpus="${SLURM_JOB_GPUS:-${CUDA_VISIBLE_DEVICES:-}}"
if [ -z "$gpus" ]; then
  exit 0
fi

GPU_CHECK_TAG="gpu-check"
# --- include ../lib/gpu-common.sh ---
# shellcheck source=SCRIPTDIR/../lib/gpu-common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/gpu-common.sh"
# --- end include ---
read_scope_file

# refused RC OUTPUT FIELD: true when nvidia-smi refused the whole query because this driver has no field matching
# the regular expression FIELD (exit 2 and 'Field "<name>" is not a valid field to query.').
refused() {
  [ "$1" -eq 2 ] && printf '%s' "$2" | grep -q "^Field \"$3\" is not a valid field to query\\.\$"
}

# unreported VALUE: true when nvidia-smi says the GPU does not report this property.
unreported() {
  case "$1" in
    "[N/A]" | "N/A" | "[Not Supported]" | "Not Supported") return 0 ;;
  esac
  return 1
}

# flag_set VALUE: true for Yes/1, false for No/0; anything else is unreadable (exit status 2).
flag_set() {
  case "$1" in
    Yes | yes | 1 | True | true) return 0 ;;
    No | no | 0 | False | false) return 1 ;;
  esac
  return 2
}

require_gpus "$gpus"

# Row remapping (Ampere and newer) is a --query-gpu field only in newer drivers: the H100 with
# driver 580.159.04 of issue 17 answers remapped_rows.pending/failure, but the --help-query-gpu of
# driver 535.129.03 (tests/fixtures/nvidia-smi/help-query-gpu-535.129.03.fields) lists neither,
# and nvidia-smi refuses a whole query that names an unknown field (exit 2). There, the same
# facts come from `nvidia-smi -q` ("Remapped Rows" / "Pending" / "Remapping Failure Occurred"
# under each "GPU <bus id>"), and the other fields from a query without the two.
base_fields=index,pci.bus_id,ecc.errors.uncorrected.volatile.total,retired_pages.pending,name
output=$(smi --query-gpu="index,pci.bus_id,ecc.errors.uncorrected.volatile.total,retired_pages.pending,remapped_rows.pending,remapped_rows.failure,name" --format=csv,noheader,nounits)
rc=$?
if refused "$rc" "$output" 'remapped_rows\.[a-z_]*'; then
  base=$(smi --query-gpu="$base_fields" --format=csv,noheader,nounits)
  smi_ok "$?" "$base"
  details=$(smi -q)
  smi_ok "$?" "$details"
  remaps=$(printf '%s\n' "$details" | awk '
    /^GPU [0-9A-Fa-f]+:/ { bus = $2; remap = 0; next }
    /^    [^ ]/ { remap = ($0 ~ /^    Remapped Rows[[:space:]]*$/); next }
    remap && /^        Pending[[:space:]]*:/ { sub(/^[^:]*: */, ""); pending[bus] = $0 }
    remap && /^        Remapping Failure Occurred[[:space:]]*:/ { sub(/^[^:]*: */, ""); failure[bus] = $0 }
    END { for (b in pending) print b "|" pending[b] "|" failure[b] }')
  output=""
  while IFS=, read -r index bus ecc retired name; do
    bus=$(trim "$bus")
    pending="[N/A]"
    failure="[N/A]"
    while IFS='|' read -r remap_bus remap_pending remap_failure; do
      if [ "$remap_bus" = "$bus" ]; then
        pending="${remap_pending:-[N/A]}"
        failure="${remap_failure:-[N/A]}"
      fi
    done <<<"$remaps"
    output="${output:+$output
}$index, $bus, $ecc, $retired, $pending, $failure, $name"
  done <<<"$base"
else
  smi_ok "$rc" "$output"
fi

if [ "$GPU_CHECK_SCOPE" = node ]; then
  gpus=""
  while IFS=, read -r index _; do
    gpus="${gpus:+$gpus,}$(trim "$index")"
  done <<<"$output"
  GPU_CHECK_INDEX_ORDER=nvml
fi

# want[N]: the PCI bus id of the job's GPU N.
declare -A want=()
if [ "$GPU_CHECK_INDEX_ORDER" = file ]; then
  if [ -z "${details:-}" ]; then
    details=$(smi -q)
    smi_ok "$?" "$details"
  fi
  want_file_order "$gpus" "$details"
else
  while IFS=, read -r index bus _; do
    want[$(trim "$index")]=$(trim "$bus")
  done <<<"$output"
fi

listed=""
smi_ids=""  # nvidia-smi (NVML) indexes of the job's GPUs, for dcgmi
job_gpus="" # "<Slurm index>|<bus id>|<name>" lines, for the recovery check
for gpu in ${gpus//,/ }; do
  found=no
  while IFS=, read -r index bus ecc retired remap_pending remap_failure name; do
    bus=$(trim "$bus")
    if [ -z "${want[$gpu]:-}" ] || [ "$bus" != "${want[$gpu]}" ]; then
      continue
    fi
    found=yes
    smi_ids="${smi_ids:+$smi_ids,}$(trim "$index")"
    job_gpus="${job_gpus:+$job_gpus
}$gpu|$bus|$(trim "$name")"
    where="GPU $gpu ($bus, $(trim "$name"))"
    ecc=$(trim "$ecc")
    if ! unreported "$ecc"; then
      case "$ecc" in
        '' | *[!0-9]*) fail "$where: unreadable volatile uncorrectable ECC count '$ecc'" ;;
      esac
      if [ "$ecc" -gt "$GPU_CHECK_MAX_VOLATILE_UNCORRECTED_ECC" ]; then
        fail "$where: $ecc volatile uncorrectable ECC error(s) (allowed: $GPU_CHECK_MAX_VOLATILE_UNCORRECTED_ECC)"
      fi
    fi
    for check in "remapped_rows.pending|$(trim "$remap_pending")|$GPU_CHECK_PENDING_ROW_REMAP|row remapping pending (reset the GPU)" \
      "remapped_rows.failure|$(trim "$remap_failure")|$GPU_CHECK_ROW_REMAP_FAILURE|row remapping failed (replace the GPU)" \
      "retired_pages.pending|$(trim "$retired")|$GPU_CHECK_PENDING_PAGE_RETIREMENT|page retirement pending (reset the GPU)"; do
      IFS='|' read -r field value policy message <<<"$check"
      [ "$policy" = fail ] || continue
      unreported "$value" && continue
      flag_set "$value"
      case $? in
        0) fail "$where: $message" ;;
        2) fail "$where: unreadable $field value '$value'" ;;
      esac
    done
  done <<<"$output"
  if [ "$found" = no ]; then
    while IFS=, read -r index _; do
      listed="$listed $(trim "$index")"
    done <<<"$output"
    fail "GPU $gpu: not found (nvidia-smi lists:${listed:- none})"
  fi
done

# The recovery the driver asks for (`gpu_recovery_action`: NVML's GPU recovery action, set with Xid 154, e.g.
# "GPU recovery action changed from 0x0 (None) to 0x4 (Drain and Reset)"). Drivers 580.173.02 and 590.48.01 list the
# field and print None for every healthy GPU captured (tests/fixtures/nvidia-smi/captures/); 535.129.03 does not
# list it, and nvidia-smi refuses a query naming it there (exit 2): nothing to check then. Anything but None (or
# not reported) fails: the GPU must be recovered before it runs a job.
recovery=$(smi --query-gpu=pci.bus_id,gpu_recovery_action --format=csv,noheader,nounits)
rc=$?
if refused "$rc" "$recovery" 'gpu_recovery_action'; then
  recovery=""
else
  smi_ok "$rc" "$recovery"
fi
while IFS='|' read -r gpu bus name; do
  while IFS=, read -r recovery_bus action; do
    if [ -z "$gpu" ] || [ "$(trim "$recovery_bus")" != "$bus" ]; then
      continue
    fi
    action=$(trim "$action")
    if [ "$action" != None ] && [ -n "$action" ] && ! unreported "$action"; then
      fail "GPU $gpu ($bus, $name): the driver asks for recovery: $action"
    fi
  done <<<"$recovery"
done <<<"$job_gpus"

# MIG mode (`mig.mode.current`: Enabled/Disabled, [N/A] on GPUs without MIG). In job scope the job was given whole
# GPUs (Slurm's gpu GRES, the device plugin's nvidia.com/gpu with migStrategy none): a GPU in MIG mode cannot run
# a CUDA process as a whole GPU (CUDA sees only MIG devices made visible to it, NVIDIA MIG user guide "CUDA
# Device Enumeration"), so the job would fail on it. With migStrategy none the device plugin counts such a GPU as
# a whole one (k8s-device-plugin v0.20.0, internal/rm/nvml_manager.go: strategy none lists GPUs, MIG mode or
# not), so nothing else notices. Driver 535 and later list the field (help-query-gpu-535.129.03.fields); where a
# driver refuses it, there is nothing to check. Node scope (a MIG strategy is configured) expects MIG mode.
if [ "$GPU_CHECK_SCOPE" = job ]; then
  modes=$(smi --query-gpu=pci.bus_id,mig.mode.current --format=csv,noheader,nounits)
  rc=$?
  if refused "$rc" "$modes" 'mig\.mode\.current'; then
    modes=""
  else
    smi_ok "$rc" "$modes"
  fi
  while IFS='|' read -r gpu bus name; do
    while IFS=, read -r mode_bus mode; do
      if [ -z "$gpu" ] || [ "$(trim "$mode_bus")" != "$bus" ]; then
        continue
      fi
      if [ "$(trim "$mode")" = Enabled ]; then
        fail "GPU $gpu ($bus, $name): MIG mode is enabled, but the job was given the whole GPU (disable MIG on it, or set gpu.operator.migStrategy)"
      fi
    done <<<"$modes"
  done <<<"$job_gpus"
fi

# dcgmi's `-i` takes DCGM GPU ids, which are NVML indexes (DCGM v4.6.0 dcgmlib/src/DcgmCacheManager.cpp: gpuId = i,
# the i-th NVML device; dcgmi/CommandLineParser.cpp: `-i, --entity-id`, "Basic GPU IDs: '0,1,2'"), not Slurm's
# indexes: with GPU_CHECK_INDEX_ORDER=file they differ where minor numbers do not follow the PCI order. A failed
# diagnostic exits non-zero (DCGM_ST_NVVS_ERROR = -30, exit status 226).
# Asked for but not possible here (the Slinky slurmd images install no DCGM): said on stderr (slurmd's log), not failed.
if [ "$GPU_CHECK_DCGM_DIAG_LEVEL" -gt 0 ] && ! command -v dcgmi >/dev/null 2>&1; then
  echo "$GPU_CHECK_TAG: dcgmi diag -r $GPU_CHECK_DCGM_DIAG_LEVEL skipped: dcgmi is not installed here" >&2
elif [ "$GPU_CHECK_DCGM_DIAG_LEVEL" -gt 0 ]; then
  diag=$(bounded "$GPU_CHECK_TIMEOUT_SECONDS" dcgmi diag -r "$GPU_CHECK_DCGM_DIAG_LEVEL" -i "$smi_ids" 2>&1)
  rc=$?
  reason=$(dcgm_reason "$diag")
  failed_test=$?
  # A table naming a failed test fails the check whatever the exit status says.
  if [ "$rc" -ne 0 ] || [ "$failed_test" -ne 0 ]; then
    [ -n "$reason" ] || reason=$(printf '%s' "$diag" | grep -m 1 -i 'fail' || printf '%s' "$diag" | tail -n 1)
    fail "GPU $gpus (nvidia-smi $smi_ids): dcgmi diag -r $GPU_CHECK_DCGM_DIAG_LEVEL failed (exit $rc): $reason"
  fi
fi

# The GPUs passed: dcgm-exporter labels their metrics with the job (GPU_CHECK_JOB_MAP_DIR, job_map in gpu-common.sh).
# Its files are named by DCGM GPU ids, i.e. nvidia-smi's indexes (smi_ids). Not with MIG (GPU_CHECK_SCOPE=node): the
# job's devices are then GPU instances, whose ids these queries do not give.
if [ -n "$GPU_CHECK_JOB_MAP_DIR" ] && [ "$GPU_CHECK_SCOPE" = job ]; then
  job_map "${SLURM_JOB_ID:-}" "$GPU_CHECK_JOB_MAP_DIR" add "$smi_ids"
fi
exit 0
