#!/bin/bash
# An active GPU health check, run as the batch script of a Slurm job on the nodes it tests (submitted by
# scripts/gpu/active_checks.py in the check's maintenance reservation, with the nodes' GPUs: --gres, --mem=0,
# --exclusive). Kinds (ACTIVE_CHECK_KIND):
#   dcgm-diag       `dcgmi diag -r <ACTIVE_CHECK_DCGM_LEVEL>` against the node's own DCGM host engine
#                   (ACTIVE_CHECK_DCGM_HOST), dcgmi alone started in ACTIVE_CHECK_IMAGE through Pyxis; the verdict is
#                   judged and recorded here, in the slurmd pod, which has scontrol (the DCGM image has not)
#   nccl-allreduce  nccl-tests' all_reduce_perf_mpi across the job's nodes (srun --mpi=pmix, every GPU a rank,
#                   in ACTIVE_CHECK_IMAGE through Pyxis when set), "Avg bus bandwidth" against ACTIVE_CHECK_MIN_BUSBW
#   ib-link         every port of the pool's HCAs (ACTIVE_CHECK_HCAS, from rdma.pools[].nics[].hca) on every node, as
#                   the kernel reports them in sysfs: ACTIVE, LinkUp, at least ACTIVE_CHECK_MIN_RATE Gb/s
# The script judges and never changes a node: the driver drains, from the verdict it reads in accounting (sacct).
# The verdict is the exit status, its reason the job's AdminComment ("active-check <name>: <reason>"):
#   0   PASS   the hardware passed
#   10  FAIL   the check ran and judged the hardware failing: a test failed in dcgmi's table, a port down or slow,
#              a bus bandwidth measured below the floor, wrong all-reduce results
#   11  ERROR  the check could not judge: a tool missing, unreachable or not finishing in time, a launch that failed,
#              an all-reduce whose ranks ran alone; never a reason to drain
# Every tool call is bounded (`timeout -k`). With ACTIVE_CHECK_NODE set, the script is one node's part of a
# dcgm-diag or ib-link run (started by srun below); srun exits with its tasks' highest status. A dcgm-diag job has
# one node (the driver's groups): its batch script is that node's part.
set -u

: "${ACTIVE_CHECK_NAME:?}" "${ACTIVE_CHECK_KIND:?}"
: "${ACTIVE_CHECK_TIMEOUT_SECONDS:=600}"
: "${ACTIVE_CHECK_DCGM_LEVEL:=2}"
: "${ACTIVE_CHECK_MIN_BUSBW:=50}"
: "${ACTIVE_CHECK_MESSAGE_SIZE:=1G}"
: "${ACTIVE_CHECK_MIN_RATE:=100}"
: "${ACTIVE_CHECK_IMAGE:=}"
: "${ACTIVE_CHECK_DCGM_HOST:=}"
: "${ACTIVE_CHECK_HCAS:=}"
: "${ACTIVE_CHECK_SYSFS:=/sys/class/infiniband}"

FAIL_EXIT=10
ERROR_EXIT=11
GPU_CHECK_TAG="active-check $ACTIVE_CHECK_NAME"
# --- include ../slurm/lib/gpu-common.sh ---
# shellcheck source=SCRIPTDIR/../slurm/lib/gpu-common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../slurm/lib/gpu-common.sh"
# --- end include ---

# record TEXT: the job's AdminComment, which accounting keeps after the job ends (slurm.conf(5) AccountingStoreFlags:
# "AdminComment and SystemComment are always recorded"); setting it needs AdminLevel=Administrator, as draining does.
record() {
  if [ -n "${SLURM_JOB_ID:-}" ] && command -v scontrol >/dev/null 2>&1; then
    bounded 30 scontrol update JobId="$SLURM_JOB_ID" AdminComment="${1:0:200}" >/dev/null 2>&1 ||
      echo "$GPU_CHECK_TAG: could not record the verdict in job $SLURM_JOB_ID's AdminComment" >&2
  fi
}

# judged_failing REASON...: the hardware failed the check: print and record "<tag>: REASON", exit FAIL_EXIT.
judged_failing() {
  local reason="$GPU_CHECK_TAG: $*"
  echo "$reason" >&2
  record "$reason"
  exit "$FAIL_EXIT"
}

# not_judged REASON...: the check could not judge the hardware: print and record why, exit ERROR_EXIT.
not_judged() {
  local reason="$GPU_CHECK_TAG: not judged: $*"
  echo "$reason" >&2
  record "$reason"
  exit "$ERROR_EXIT"
}

# run_dcgmi ARGS...: `dcgmi ARGS...` against the node's host engine, bounded; in ACTIVE_CHECK_IMAGE through Pyxis when
# set (one task, on this node: the job has only this node), else dcgmi from PATH. Prints its output, returns its status
# (srun's: the task's). GPU Operator v26.7.0 runs nv-hostengine in the nvidia-dcgm DaemonSet, in the pod network
# (no hostNetwork) behind Service nvidia-dcgm with internalTrafficPolicy: Local (assets/state-dcgm/0400_dcgm.yml,
# 0500_service.yaml): from a slurmd pod, that Service reaches the engine of the pod's own node; the engine runs the
# diagnostic on the node's GPUs, outside the job's cgroup. An enroot container shares the slurmd pod's network and gets
# its /etc/resolv.conf (NVIDIA/enroot conf/mounts/20-config.fstab), so the Service's name resolves there.
run_dcgmi() {
  local host=() image=()
  [ -n "$ACTIVE_CHECK_DCGM_HOST" ] && host=(--host "$ACTIVE_CHECK_DCGM_HOST")
  if [ -n "$ACTIVE_CHECK_IMAGE" ]; then
    image=(srun --ntasks=1 --nodes=1 --container-image="$ACTIVE_CHECK_IMAGE")
  elif ! command -v dcgmi >/dev/null 2>&1; then
    echo "dcgmi is not installed here (run the check in an image with DCGM)"
    return 127
  fi
  bounded "$ACTIVE_CHECK_TIMEOUT_SECONDS" "${image[@]}" dcgmi "$@" "${host[@]}" 2>&1
}

dcgm_node() {
  local output rc reason found
  output=$(run_dcgmi diag -r "$ACTIVE_CHECK_DCGM_LEVEL")
  rc=$?
  if [ "$rc" -eq 127 ] && [ -z "$ACTIVE_CHECK_IMAGE" ]; then
    not_judged "$output"
  fi
  if timed_out "$rc"; then
    not_judged "dcgmi diag -r $ACTIVE_CHECK_DCGM_LEVEL did not finish within ${ACTIVE_CHECK_TIMEOUT_SECONDS}s"
  fi
  reason=$(dcgm_reason "$output")
  found=$?
  # A failed test, or an Error/Warning note in dcgmi's result table, is DCGM's verdict on the GPUs; a non-zero exit
  # without a table (no host engine to talk to, a bad option, an image that would not start) is not.
  if [ "$found" -ne 0 ] || { [ "$rc" -ne 0 ] && [ -n "$reason" ]; }; then
    judged_failing "dcgmi diag -r $ACTIVE_CHECK_DCGM_LEVEL failed (exit $rc): $reason"
  fi
  if [ "$rc" -ne 0 ]; then
    not_judged "dcgmi diag -r $ACTIVE_CHECK_DCGM_LEVEL exited $rc without a result table: $(printf '%s\n' "$output" | tail -n 1)"
  fi
  echo "$GPU_CHECK_TAG: ${SLURMD_NODENAME:-}: dcgmi diag -r $ACTIVE_CHECK_DCGM_LEVEL passed"
}

# read_attr FILE: one sysfs attribute, bounded (a read goes to the HCA's driver, which can hang on a broken adapter).
read_attr() {
  bounded "$ACTIVE_CHECK_TIMEOUT_SECONDS" cat "$1" 2>/dev/null
}

# ib_node: every port of the pool's HCAs (ACTIVE_CHECK_HCAS) as the kernel reports it under ACTIVE_CHECK_SYSFS
# (/sys/class/infiniband; `%n` in it stands for the node's name), the files ibstat itself reads through libibumad
# (rdma-core libibumad/umad.c `get_port`: ports/<n>/state, phys_state, rate), in the kernel's formats
# (drivers/infiniband/core/sysfs.c `state_show` "4: ACTIVE", `phys_state_show` "5: LinkUp", `rate_show`
# "400 Gb/sec (4X NDR)"). No tool is needed (the slurmd images install no infiniband-diags), and no HCA the pool does
# not declare is judged (a privileged slurmd pod sees every RDMA device of its host).
ib_node() {
  local sysfs="${ACTIVE_CHECK_SYSFS//%n/${SLURMD_NODENAME:-}}" hca port name state phys rate gbps ports=0 counted
  if [ -z "$ACTIVE_CHECK_HCAS" ]; then
    not_judged "no HCA to check (ACTIVE_CHECK_HCAS is empty: rdma.pools[].nics[].hca)"
  fi
  if [ -z "$(ls -A "$sysfs" 2>/dev/null)" ]; then
    not_judged "$sysfs lists no RDMA device (no driver loaded, or this pod does not see the host's devices)"
  fi
  for hca in ${ACTIVE_CHECK_HCAS//,/ }; do
    if [ ! -d "$sysfs/$hca" ]; then
      judged_failing "$hca: not present (the node has $(cd "$sysfs" && printf '%s ' *| sed 's/ $//'))"
    fi
    counted=0
    for port in "$sysfs/$hca"/ports/*/; do
      [ -e "${port}state" ] || continue
      name=$(basename "$port")
      state=$(read_attr "${port}state") phys=$(read_attr "${port}phys_state") rate=$(read_attr "${port}rate")
      if [ -z "$state" ] || [ -z "$phys" ] || [ -z "$rate" ]; then
        not_judged "$hca port $name: its state, physical state or rate could not be read within ${ACTIVE_CHECK_TIMEOUT_SECONDS}s"
      fi
      ports=$((ports + 1)) counted=$((counted + 1))
      state="${state#*: }" phys="${phys#*: }" gbps="${rate%% *}"
      [ "$state" = ACTIVE ] || judged_failing "$hca port $name: state $state"
      [ "$phys" = LinkUp ] || judged_failing "$hca port $name: physical state $phys"
      if ! awk -v have="$gbps" -v min="$ACTIVE_CHECK_MIN_RATE" 'BEGIN { exit !(have + 0 >= min + 0) }'; then
        judged_failing "$hca port $name: rate $gbps Gb/s (at least $ACTIVE_CHECK_MIN_RATE)"
      fi
    done
    if [ "$counted" -eq 0 ]; then
      not_judged "$hca: no port under $sysfs"
    fi
  done
  echo "$GPU_CHECK_TAG: ${SLURMD_NODENAME:-}: $ACTIVE_CHECK_HCAS: $ports port(s) ACTIVE, LinkUp, at least $ACTIVE_CHECK_MIN_RATE Gb/s"
}

nccl_job() {
  local output rc busbw wrong gpus="${SLURM_GPUS_ON_NODE:-}"
  local image=()
  if [ -z "$gpus" ]; then
    not_judged "the job has no GPUs (SLURM_GPUS_ON_NODE is empty: submitted without --gres?)"
  fi
  [ -n "$ACTIVE_CHECK_IMAGE" ] && image=(--container-image="$ACTIVE_CHECK_IMAGE")
  output=$(bounded "$ACTIVE_CHECK_TIMEOUT_SECONDS" srun --mpi=pmix --ntasks-per-node="$gpus" "${image[@]}" \
    all_reduce_perf_mpi -b "$ACTIVE_CHECK_MESSAGE_SIZE" -e "$ACTIVE_CHECK_MESSAGE_SIZE" -f 2 -g 1 2>&1)
  rc=$?
  # nccl-tests ends with "# Out of bounds values : N OK|FAILED" and "# Avg bus bandwidth    : 371.52" (GB/s).
  wrong=$(printf '%s\n' "$output" | awk -F: '/Out of bounds values/ { split($2, f, " "); value = f[1] } END { print value + 0 }')
  if [ "$wrong" -gt 0 ]; then
    judged_failing "all-reduce returned wrong results ($wrong values out of bounds)"
  fi
  if timed_out "$rc"; then
    not_judged "all-reduce did not finish within ${ACTIVE_CHECK_TIMEOUT_SECONDS}s"
  elif [ "$rc" -ne 0 ]; then
    not_judged "all-reduce failed (exit $rc): $(printf '%s\n' "$output" | tail -n 1)"
  fi
  busbw=$(printf '%s\n' "$output" | awk -F: '/Avg bus bandwidth/ { gsub(/[[:space:]]/, "", $2); value = $2 } END { print value }')
  if [ -z "$busbw" ]; then
    not_judged "all-reduce printed no average bus bandwidth"
  fi
  # 0 means every rank ran alone (nccl-tests without MPI, or ranks the launcher did not connect): nothing measured.
  if awk -v have="$busbw" 'BEGIN { exit !(have + 0 == 0) }'; then
    not_judged "all-reduce bus bandwidth 0: every rank ran alone, nothing was measured"
  fi
  if ! awk -v have="$busbw" -v floor="$ACTIVE_CHECK_MIN_BUSBW" 'BEGIN { exit !(have + 0 >= floor + 0) }'; then
    judged_failing "all-reduce bus bandwidth $busbw GB/s is below $ACTIVE_CHECK_MIN_BUSBW GB/s"
  fi
  echo "$GPU_CHECK_TAG: all-reduce bus bandwidth $busbw GB/s (at least $ACTIVE_CHECK_MIN_BUSBW)"
}

if [ -n "${ACTIVE_CHECK_NODE:-}" ]; then
  # One node's part, run by srun: its exit status is the node's verdict.
  case "$ACTIVE_CHECK_KIND" in
    dcgm-diag) dcgm_node ;;
    ib-link) ib_node ;;
  esac
  exit 0
fi

case "$ACTIVE_CHECK_KIND" in
  nccl-allreduce) nccl_job ;;
  # One node per job: the batch script runs on it, in the slurmd pod (scontrol is there), and starts dcgmi alone in
  # the DCGM image.
  dcgm-diag) dcgm_node ;;
  ib-link)
    # One task per node, running this script's own text (the batch script exists only on the first node; it is
    # submitted with its include inlined).
    self=$(cat "${BASH_SOURCE[0]}")
    image=()
    [ -n "$ACTIVE_CHECK_IMAGE" ] && image=(--container-image="$ACTIVE_CHECK_IMAGE")
    ACTIVE_CHECK_NODE=1 srun --ntasks-per-node=1 "${image[@]}" bash -c "$self"
    rc=$?
    case "$rc" in
      0 | "$FAIL_EXIT" | "$ERROR_EXIT") exit "$rc" ;;
      *) not_judged "srun exited $rc (the check did not run to its verdict)" ;;
    esac
    ;;
  *) not_judged "unknown check kind '$ACTIVE_CHECK_KIND'" ;;
esac
