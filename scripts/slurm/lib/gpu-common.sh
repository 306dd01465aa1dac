#!/bin/bash
# shellcheck shell=bash
# Functions shared by the GPU prolog and epilog (scripts/slurm/prolog/10-gpu-check.sh,
# scripts/slurm/epilog/10-gpu-check.sh). The scripts source this file where they run from the
# repository; the Slurm layer puts its text in their place when it renders them into the ConfigMaps
# (components/layers/slurm/script_include.py), so each deployed script is one self-contained file.
# Expects the caller's settings (GPU_CHECK_*) and GPU_CHECK_TAG (the prefix of its messages).

# fail REASON...: print "<tag>: REASON", drain the node with it (it becomes Slurm's drain reason), exit 1.
fail() {
  local reason="$GPU_CHECK_TAG: $*"
  echo "$reason" >&2
  if [ "$GPU_CHECK_DRAIN" = yes ] && [ -n "${SLURMD_NODENAME:-}" ] && command -v scontrol >/dev/null 2>&1; then
    scontrol update NodeName="$SLURMD_NODENAME" State=DRAIN Reason="${reason:0:200}" >/dev/null 2>&1 || true
  fi
  exit 1
}

# read_scope_file: the node's own GPU_CHECK_SCOPE from GPU_CHECK_SCOPE_FILE when it exists ("job" or "node"). The
# Slurm layer writes one prolog and epilog for every nodeset, so what differs per nodeset comes from the node: the
# join script of a bare-metal host of a MIG nodeset writes "node" there (components/layers/slurm/face.py
# render_join_script), any other GPU nodeset's host "job"; slurmd pods have no file and keep the setting ("job").
read_scope_file() {
  local scope
  [ -n "${GPU_CHECK_SCOPE_FILE:-}" ] && [ -r "$GPU_CHECK_SCOPE_FILE" ] || return 0
  scope=$(tr -d '[:space:]' <"$GPU_CHECK_SCOPE_FILE")
  # shellcheck disable=SC2034 # GPU_CHECK_SCOPE is the caller's setting
  case "$scope" in
    job | node) GPU_CHECK_SCOPE="$scope" ;;
    *) fail "$GPU_CHECK_SCOPE_FILE says '$scope' (expected job or node)" ;;
  esac
}

trim() {
  local value="$1"
  value="${value#"${value%%[![:space:]]*}"}"
  value="${value%"${value##*[![:space:]]}"}"
  printf '%s' "$value"
}

# require_gpus GPUS: fails unless GPUS is a list of indexes (0,1,...) and nvidia-smi can be run.
require_gpus() {
  local gpu
  for gpu in ${1//,/ }; do
    case "$gpu" in
      '' | *[!0-9]*) fail "cannot read the job's GPU list '$1' (expected indexes like 0,1)" ;;
    esac
  done
  if ! command -v "$GPU_CHECK_NVIDIA_SMI" >/dev/null 2>&1; then
    fail "the job has GPUs ($1) but $GPU_CHECK_NVIDIA_SMI is missing"
  fi
}

# bounded SECONDS COMMAND...: COMMAND with a time limit that holds for a hung GPU too. A GPU that stops answering
# leaves nvidia-smi (and dcgmi) blocked in the driver, where SIGTERM may never be acted on: plain `timeout N` then
# waits for ever, and so does the prolog (Slurm waits indefinitely for it unless PrologEpilogTimeout is set,
# slurm.conf(5) of 26.05). `-k` sends SIGKILL GPU_CHECK_KILL_AFTER_SECONDS after SIGTERM, to the command's whole
# process group (coreutils timeout: its own group, signalled whole unless --foreground). Exit status 124 (TERM
# worked) or 137 (128 + KILL) means it did not answer in time. A process stuck in uninterruptible sleep survives
# even SIGKILL: PrologEpilogTimeout (hpcforge:slurm.controller.timeouts.prologEpilog) is the backstop for that.
bounded() {
  local seconds="$1"
  shift
  timeout -k "${GPU_CHECK_KILL_AFTER_SECONDS:-5}" "$seconds" "$@"
}

# timed_out RC: true for the exit statuses of `bounded` when the time limit was reached.
timed_out() {
  [ "$1" -eq 124 ] || [ "$1" -eq 137 ]
}

# smi ARGS...: nvidia-smi with the settings' timeout; prints what it printed (stdout and stderr), returns its status.
smi() {
  bounded "$GPU_CHECK_TIMEOUT_SECONDS" "$GPU_CHECK_NVIDIA_SMI" "$@" 2>&1
}

# smi_ok RC OUTPUT: fails the check when nvidia-smi timed out or failed.
smi_ok() {
  if timed_out "$1"; then
    fail "nvidia-smi did not answer within ${GPU_CHECK_TIMEOUT_SECONDS}s"
  elif [ "$1" -ne 0 ]; then
    fail "nvidia-smi failed (exit $1): $(printf '%s' "$2" | head -n 1)"
  fi
}

# file_order_bus_ids GPUS DETAILS: one "index|PCI bus id" line per index of GPUS, for GPU_CHECK_INDEX_ORDER=file.
# Which GPU is SLURM_JOB_GPUS's index N: slurmd writes the positions of the job's devices in the node's GPU list
# (Slurm src/plugins/gres/common/gres_common.c: SLURM_JOB_GPUS from gres_device->index; src/interfaces/gres.c
# _init_gres_device: index = place in the list), and orders that list (src/plugins/gres/gpu/gres_gpu.c, 22.05 and
# 26.05): by File name as strings (_sort_gpu_by_file), then, with AutoDetect=nvml, by NVML's enumeration, i.e. PCI
# bus order (_sort_gpu_by_links_order). With gres.conf File= lines, N is the N-th /dev/nvidia<minor> in string
# order, and the GPU is the one whose `nvidia-smi -q` (DETAILS) "Minor Number" is that minor; minor numbers need not
# follow PCI order, so nvidia-smi's index may differ. (GPU_CHECK_INDEX_ORDER=nvml: N is nvidia-smi's index N.)
# Run it in a command substitution and exit when it fails: a GPU without a device file or a GPU fails the check.
file_order_bus_ids() {
  local files=() file gpu minor minors bus
  for file in "$GPU_CHECK_DEV_DIR"/nvidia*; do
    case "${file##*/nvidia}" in
      '' | *[!0-9]*) ;;
      *) files+=("$file") ;;
    esac
  done
  if [ "${#files[@]}" -gt 0 ]; then
    mapfile -t files < <(printf '%s\n' "${files[@]}" | LC_ALL=C sort)
  fi
  minors=$(printf '%s\n' "$2" | awk '
    /^GPU [0-9A-Fa-f]+:/ { bus = $2; next }
    /^    Minor Number[[:space:]]*:/ { sub(/^[^:]*: */, ""); print $0 "|" bus }')
  for gpu in ${1//,/ }; do
    file="${files[$gpu]:-}"
    if [ -z "$file" ]; then
      fail "GPU $gpu: not found (Slurm's device files here: ${files[*]:-none})"
    fi
    minor="${file##*/nvidia}"
    bus=$(printf '%s\n' "$minors" | awk -F'|' -v m="$minor" '$1 == m { print $2; exit }')
    if [ -z "$bus" ]; then
      fail "GPU $gpu ($file): nvidia-smi lists no GPU with minor number $minor"
    fi
    echo "$gpu|$bus"
  done
}

# want_file_order GPUS DETAILS: fills the caller's associative array `want` (index -> PCI bus id) by
# file_order_bus_ids; exits when an index has no device file or GPU.
want_file_order() {
  local pairs gpu bus
  pairs=$(file_order_bus_ids "$1" "$2") || exit 1
  while IFS='|' read -r gpu bus; do
    # shellcheck disable=SC2034,SC2004 # `want` is the caller's associative array
    want[$gpu]=$bus
  done <<<"$pairs"
}

# job_map JOB DIR add INDEXES | job_map JOB DIR remove: dcgm-exporter's HPC job mapping (NVIDIA/dcgm-exporter
# internal/pkg/transformation/hpc.go, 4.6.0-4.8.3): in DIR, one file per GPU named by its DCGM GPU id (= nvidia-smi's
# index, see the dcgmi note in the prolog; names other than `^\d+(\.\d+)?$` are ignored), one job id per line; the
# exporter gives that GPU's metrics the label hpc_job=<id>, one series per line. `add` makes JOB the only line of
# each file of INDEXES (Slurm gives a GPU to one job at a time, and a file left by a job whose epilog never ran is
# overwritten, not added to); `remove` takes JOB's line out of every file and deletes a file it empties, so a late
# epilog does not remove the next job's line. Each file is replaced whole (a temporary file, then mv) under a lock
# (flock, where present), so the exporter never reads half a file. Telemetry only: a failure is reported on stderr
# and never fails the job.
job_map() {
  local job="$1" dir="$2" action="$3" indexes="${4:-}"
  case "$job" in
    '' | *[!0-9]*)
      echo "$GPU_CHECK_TAG: job mapping: job id '$job' is not a number: not recorded" >&2
      return 0
      ;;
  esac
  if [ "$action" = add ]; then
    mkdir -p "$dir" 2>/dev/null
  elif [ ! -d "$dir" ]; then
    return 0
  fi
  if [ ! -d "$dir" ] || [ ! -w "$dir" ]; then
    echo "$GPU_CHECK_TAG: job mapping: cannot write $dir: job $job not recorded" >&2
    return 0
  fi
  (
    if command -v flock >/dev/null 2>&1; then
      flock -w 10 9 || echo "$GPU_CHECK_TAG: job mapping: $dir/.lock stayed locked 10s; going on" >&2
    fi
    local index file
    if [ "$action" = add ]; then
      for index in ${indexes//,/ }; do
        job_map_write "$dir/$index" "$job"
      done
    else
      for file in "$dir"/*; do
        case "${file##*/}" in
          '' | *[!0-9.]*) continue ;;
        esac
        [ -f "$file" ] && grep -qxF -- "$job" "$file" && job_map_write "$file" "" "$job"
      done
    fi
  ) 9>>"$dir/.lock"
  return 0
}

# job_map_write FILE ADD [REMOVE]: FILE's lines without REMOVE, then ADD (if not empty), written to a temporary file
# that replaces FILE; an empty result deletes FILE.
job_map_write() {
  local tmp="$1.tmp.$$"
  {
    if [ -n "${3:-}" ] && [ -f "$1" ]; then
      grep -vxF -- "$3" "$1"
    fi
    if [ -n "$2" ]; then
      echo "$2"
    fi
  } >"$tmp" 2>/dev/null || {
    echo "$GPU_CHECK_TAG: job mapping: cannot write $tmp" >&2
    rm -f "$tmp"
    return 0
  }
  if [ -s "$tmp" ]; then
    mv -f "$tmp" "$1"
  else
    rm -f "$tmp" "$1"
  fi
}

# dcgm_reason OUTPUT: from a `dcgmi diag` table, the first failed test ("GPU Memory: Fail - GPU: 0") and the Warning
# or Error note dcgmi printed right after it; without a failed test, the first Error (else Warning) note. Rows are
# "| <test> | <result> |"; a note longer than its column continues on rows with an empty test, cut at a fixed
# width (one space of margin before it, two after), so the pieces join without a separator. Info notes are
# skipped. Prints nothing for output that is not such a table (outputs quoted in tests/fixtures/dcgmi/). Exits 3
# when the table names a failed test, else 0.
dcgm_reason() {
  printf '%s\n' "$1" | awk -F'|' '
    function rtrim(text) { sub(/ +$/, "", text); return text }
    function close_note() {
      if (kind == "Warning" || kind == "Error") {
        text = kind ": " rtrim(note)
        if (follows && fail_note == "") fail_note = text
        if (kind == "Error" && first_error == "") first_error = text
        if (kind == "Warning" && first_warning == "") first_warning = text
      }
      kind = ""; note = ""
    }
    /^\|/ && NF >= 3 {
      name = $2; gsub(/^ +| +$/, "", name)
      cell = (NF >= 4) ? substr($3, 2, length($3) - 3) : substr($3, 2)
      if (name ~ /^-----/) { close_note(); follows = 0; next }
      if (name == "") { if (kind != "") { note = note cell; next } }
      else {
        close_note()
        if (name == "Warning" || name == "Error" || name == "Info") { kind = name; note = cell; next }
        current = name; follows = 0
      }
      result = rtrim(cell)
      if (failed == "" && result ~ /^Fail/) { failed = current ": " result; follows = 1 }
    }
    END {
      close_note()
      if (failed != "") printf "%s%s\n", failed, (fail_note != "" ? " (" fail_note ")" : "")
      else if (first_error != "") print first_error
      else if (first_warning != "") print first_warning
      exit (failed != "" ? 3 : 0)
    }'
}
