#!/bin/bash
# Capture what nvidia-smi prints on this machine, in the format tests/fakes/nvidia-smi replays, and run
# the GPU prolog and epilog here for real. Run it on a machine with an NVIDIA GPU and its driver (no
# Slurm, no Kubernetes needed), from a checkout of the repository:
#
#   bash scripts/gpu/capture-nvidia-smi.sh OUTDIR
#
# Writes, in OUTDIR:
#   fixture.txt     a fixture for tests/fixtures/nvidia-smi/: [gpus] (the fields the scripts ask for that
#                   this driver accepts), [apps] (compute processes), [q] (`nvidia-smi -q` byte for byte),
#                   under a header saying where and when it was captured
#   transcript.txt  each command the scripts run and a few more (--help-query-gpu, a field that does
#                   not exist, an index that does not exist, -L, the MIG modes, topo -m, dcgmi where
#                   installed), and what says whether GPUDirect RDMA can work here (ls -l /dev/nvidia*,
#                   /proc/driver/nvidia/version: open or proprietary kernel module, lsmod: nvidia_peermem):
#                   the command, its output byte for byte and its exit status
#   checks.txt      the prolog and epilog run against this machine's GPUs: GPU 0, every GPU, and an
#                   index that does not exist, in both index orders (nvml, and file over /dev); and the
#                   prolog against a hung nvidia-smi (a wrapper that ignores SIGTERM and sleeps), which
#                   must fail within its time limit (GPU_CHECK_TIMEOUT_SECONDS + GPU_CHECK_KILL_AFTER_SECONDS)
# Exit status: 0 when the prolog passed GPU 0 and every GPU, refused the missing index and the hung
# nvidia-smi in time, and the epilog passed GPU 0; 2 otherwise (checks.txt says which; a GPU that is
# really unhealthy, or in MIG mode, also gives 2). Runs in well under 2 minutes on a healthy machine.
# Nothing is drained (GPU_CHECK_DRAIN=no) and nothing is changed on the machine.
set -u

out="${1:?usage: capture-nvidia-smi.sh OUTDIR}"
smi="${NVIDIA_SMI:-nvidia-smi}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
prolog="$here/../slurm/prolog/10-gpu-check.sh"
epilog="$here/../slurm/epilog/10-gpu-check.sh"
mkdir -p "$out"
if ! command -v "$smi" >/dev/null 2>&1; then
  echo "capture-nvidia-smi: $smi is not installed here" >&2
  exit 1
fi

# Every --query-gpu field the prolog and epilog ask for (tests/scripts/gpu/test_gpu_capture.py keeps this in step).
gpu_fields=(index name pci.bus_id memory.used ecc.errors.uncorrected.volatile.total retired_pages.pending
  remapped_rows.pending remapped_rows.failure gpu_recovery_action mig.mode.current)
app_fields=(gpu_bus_id pid process_name used_memory)

transcript="$out/transcript.txt"
: >"$transcript"
# record ARGS...: run nvidia-smi (or, with --cmd, any command) and append it to the transcript.
record() {
  local output rc
  if [ "$1" = --cmd ]; then
    shift
    output=$(timeout 60 "$@" 2>&1)
    rc=$?
    printf '$ %s\n' "$*" >>"$transcript"
  else
    output=$(timeout 120 "$smi" "$@" 2>&1)
    rc=$?
    printf '$ nvidia-smi %s\n' "$*" >>"$transcript"
  fi
  printf '%s\n[exit %s]\n\n' "$output" "$rc" >>"$transcript"
}

# accepted FIELD OPTION: true when this driver answers the field (nvidia-smi refuses a whole query naming one it lacks).
accepted() {
  timeout 120 "$smi" "$2=$1" --format=csv,noheader,nounits >/dev/null 2>&1
}

# table OPTION FIELDS...: the fake's CSV section: the accepted fields, then nvidia-smi's rows for them.
table() {
  local option="$1" field fields=()
  shift
  for field in "$@"; do
    accepted "$field" "$option" && fields+=("$field")
  done
  if [ "${#fields[@]}" -eq 0 ]; then
    return
  fi
  local IFS=,
  local header="${fields[*]}"
  printf '%s\n' "${header//,/, }"
  timeout 120 "$smi" "$option=$header" --format=csv,noheader,nounits
}

# first FIELD: the first GPU's value of FIELD, empty where this driver refuses the field.
first() {
  local value
  value=$(timeout 120 "$smi" --query-gpu="$1" --format=csv,noheader,nounits 2>/dev/null) || return 0
  printf '%s' "${value%%$'\n'*}"
}
name=$(first name)
driver=$(first driver_version)
count=$(timeout 120 "$smi" --query-gpu=index --format=csv,noheader,nounits 2>/dev/null | grep -c '^[0-9]')
when=$(date -u +%Y-%m-%dT%H:%M:%SZ)

{
  echo "# CAPTURED ON A GPU by scripts/gpu/capture-nvidia-smi.sh, $when, host $(hostname), $(command -v "$smi"):"
  echo "# ${count}x ${name:-unknown GPU}, driver ${driver:-unknown}. Every section is nvidia-smi's output"
  echo "# byte for byte; the [gpus]/[apps] header rows are the fields asked for (the ones this driver accepts)."
  echo "[gpus]"
  table --query-gpu "${gpu_fields[@]}"
  echo "[apps]"
  table --query-compute-apps "${app_fields[@]}"
  echo "[q]"
  timeout 120 "$smi" -q
} >"$out/fixture.txt"

record --version
record -L
record --help-query-gpu
record --help-query-compute-apps
record --query-gpu=index,health --format=csv,noheader
record --query-gpu=index,pci.bus_id,ecc.errors.uncorrected.volatile.total,retired_pages.pending,remapped_rows.pending,remapped_rows.failure,name --format=csv,noheader,nounits
record --query-gpu=index,pci.bus_id,ecc.errors.uncorrected.volatile.total,retired_pages.pending,name --format=csv,noheader,nounits
record --query-gpu=index,pci.bus_id,memory.used --format=csv,noheader,nounits
record --query-compute-apps=gpu_bus_id,pid,process_name,used_memory --format=csv,noheader,nounits
record --query-gpu=index,pci.bus_id,ecc.errors.uncorrected.volatile.total,remapped_rows.pending --format=csv
record -i "$count"
record -q -d ROW_REMAPPER,PAGE_RETIREMENT,ECC
record topo -m
record --query-gpu=index,mig.mode.current,mig.mode.pending --format=csv,noheader
record --cmd bash -c 'ls -l /dev/nvidia*'
record --cmd cat /proc/driver/nvidia/version
record --cmd bash -c 'lsmod | grep -e nvidia_peermem -e nvidia'
if command -v dcgmi >/dev/null 2>&1; then
  record --cmd dcgmi discovery -l
  record --cmd dcgmi diag -r 1
fi

checks="$out/checks.txt"
: >"$checks"
verdict=0
# check WHAT EXPECT SCRIPT GPUS [NAME=VALUE...]: run SCRIPT for the job's GPUS; EXPECT is pass or fail.
check() {
  local what="$1" expect="$2" script="$3" gpus="$4" output rc
  shift 4
  output=$(env SLURM_JOB_GPUS="$gpus" GPU_CHECK_DRAIN=no GPU_CHECK_NVIDIA_SMI="$smi" "$@" bash "$script" 2>&1)
  rc=$?
  printf '%s, SLURM_JOB_GPUS=%s: exit %s (expected: %s)\n%s\n\n' "$what" "$gpus" "$rc" "$expect" "$output" >>"$checks"
  if { [ "$expect" = pass ] && [ "$rc" -ne 0 ]; } || { [ "$expect" = fail ] && [ "$rc" -eq 0 ]; }; then
    verdict=2
  fi
}

all=$(seq -s, 0 $((count - 1)))
for order in nvml file; do
  check "prolog ($order order)" pass "$prolog" 0 GPU_CHECK_INDEX_ORDER="$order"
  check "prolog ($order order)" pass "$prolog" "$all" GPU_CHECK_INDEX_ORDER="$order"
  check "prolog ($order order)" fail "$prolog" "$count" GPU_CHECK_INDEX_ORDER="$order"
  check "epilog ($order order)" pass "$epilog" 0 GPU_CHECK_INDEX_ORDER="$order" GPU_CHECK_SETTLE_SECONDS=2
  check "epilog ($order order)" fail "$epilog" "$count" GPU_CHECK_INDEX_ORDER="$order" GPU_CHECK_SETTLE_SECONDS=0
done

# A hung GPU: nvidia-smi that never answers and ignores SIGTERM (as one blocked in the driver does). The prolog
# must give up within GPU_CHECK_TIMEOUT_SECONDS + GPU_CHECK_KILL_AFTER_SECONDS (here 3 + 2) and say so.
hung="$out/hung-nvidia-smi"
printf '#!/bin/bash\ntrap "" TERM\nsleep 120\n' >"$hung"
chmod +x "$hung"
started=$(date +%s)
check "prolog (hung nvidia-smi)" fail "$prolog" 0 GPU_CHECK_NVIDIA_SMI="$hung" GPU_CHECK_TIMEOUT_SECONDS=3 GPU_CHECK_KILL_AFTER_SECONDS=2
elapsed=$(($(date +%s) - started))
echo "prolog (hung nvidia-smi): gave up after ${elapsed}s" >>"$checks"
if [ "$elapsed" -gt 15 ] || ! tail -n 4 "$checks" | grep -q 'did not answer within 3s'; then
  echo "prolog (hung nvidia-smi): did not fail within 15s with 'did not answer within 3s'" >>"$checks"
  verdict=2
fi
rm -f "$hung"

cat "$checks"
echo "capture-nvidia-smi: wrote $out/fixture.txt, $out/transcript.txt, $out/checks.txt (verdict $verdict)"
exit "$verdict"
