#!/bin/bash
# An active GPU health check, run as the batch script of a Slurm job on the nodes it tests (submitted by
# scripts/gpu/active_checks.py in the check's maintenance reservation). Kinds (ACTIVE_CHECK_KIND):
#   dcgm-diag       `dcgmi diag -r <ACTIVE_CHECK_DCGM_LEVEL>` on every node of the job (one task per node)
#   nccl-allreduce  nccl-tests' all_reduce_perf_mpi across the job's nodes (srun --mpi=pmix, every GPU a rank,
#                   in ACTIVE_CHECK_IMAGE through Pyxis when set), "Avg bus bandwidth" against ACTIVE_CHECK_MIN_BUSBW
#   ib-link         every port `ibstat` lists on every node: State Active, Physical state LinkUp, Rate at least
#                   ACTIVE_CHECK_MIN_RATE Gb/s
# A node that fails is drained with "active-check <name>: <reason>" (what the driver looks for to resume it after a
# later pass); the job exits 1 then. Every tool call is bounded (`timeout -k`), so a hung GPU fails the check too.
# With ACTIVE_CHECK_NODE set, the script is one node's part of a dcgm-diag or ib-link run (started by srun below).
set -u

: "${ACTIVE_CHECK_NAME:?}" "${ACTIVE_CHECK_KIND:?}"
: "${ACTIVE_CHECK_TIMEOUT_SECONDS:=600}"
: "${ACTIVE_CHECK_DCGM_LEVEL:=2}"
: "${ACTIVE_CHECK_MIN_BUSBW:=50}"
: "${ACTIVE_CHECK_MESSAGE_SIZE:=1G}"
: "${ACTIVE_CHECK_MIN_RATE:=100}"
: "${ACTIVE_CHECK_IMAGE:=}"
: "${ACTIVE_CHECK_DRAIN:=yes}"

GPU_CHECK_TAG="active-check $ACTIVE_CHECK_NAME"
GPU_CHECK_DRAIN="$ACTIVE_CHECK_DRAIN"
# --- include ../slurm/lib/gpu-common.sh ---
# shellcheck source=SCRIPTDIR/../slurm/lib/gpu-common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../slurm/lib/gpu-common.sh"
# --- end include ---

# drain_nodes REASON: drain every node of the job (an all-reduce cannot tell which node was slow), print, exit 1.
drain_nodes() {
  local reason="$GPU_CHECK_TAG: $*" node
  echo "$reason" >&2
  if [ "$GPU_CHECK_DRAIN" = yes ] && command -v scontrol >/dev/null 2>&1; then
    for node in $(scontrol show hostnames "${SLURM_JOB_NODELIST:-}" 2>/dev/null); do
      scontrol update NodeName="$node" State=DRAIN Reason="${reason:0:200}" >/dev/null 2>&1 || true
    done
  fi
  exit 1
}

dcgm_node() {
  local output rc reason failed
  if ! command -v dcgmi >/dev/null 2>&1; then
    fail "dcgmi is not installed here (run the check in an image with DCGM)"
  fi
  output=$(bounded "$ACTIVE_CHECK_TIMEOUT_SECONDS" dcgmi diag -r "$ACTIVE_CHECK_DCGM_LEVEL" 2>&1)
  rc=$?
  if timed_out "$rc"; then
    fail "dcgmi diag -r $ACTIVE_CHECK_DCGM_LEVEL did not finish within ${ACTIVE_CHECK_TIMEOUT_SECONDS}s"
  fi
  reason=$(dcgm_reason "$output")
  failed=$?
  if [ "$rc" -ne 0 ] || [ "$failed" -ne 0 ]; then
    [ -n "$reason" ] || reason=$(printf '%s\n' "$output" | tail -n 1)
    fail "dcgmi diag -r $ACTIVE_CHECK_DCGM_LEVEL failed (exit $rc): $reason"
  fi
  echo "$GPU_CHECK_TAG: $SLURMD_NODENAME: dcgmi diag -r $ACTIVE_CHECK_DCGM_LEVEL passed"
}

ib_node() {
  local output rc bad
  if ! command -v ibstat >/dev/null 2>&1; then
    fail "ibstat is not installed here"
  fi
  output=$(bounded "$ACTIVE_CHECK_TIMEOUT_SECONDS" ibstat 2>&1)
  rc=$?
  if [ "$rc" -ne 0 ]; then
    fail "ibstat failed (exit $rc): $(printf '%s\n' "$output" | head -n 1)"
  fi
  # ibstat: "CA 'mlx5_0'" then per "Port N:" the lines "State: Active", "Physical state: LinkUp", "Rate: 400".
  bad=$(printf '%s\n' "$output" | awk -v min="$ACTIVE_CHECK_MIN_RATE" '
    /^CA '"'"'/ { ca = $2; gsub(/'"'"'/, "", ca); next }
    /^[[:space:]]*Port [0-9]+:/ { port = $2; sub(/:$/, "", port); ports++; next }
    /^[[:space:]]*State:/ { state = $2; if (state != "Active" && bad == "") bad = ca " port " port ": state " state; next }
    /^[[:space:]]*Physical state:/ { phys = $3; if (phys != "LinkUp" && bad == "") bad = ca " port " port ": physical state " phys; next }
    /^[[:space:]]*Rate:/ { if ($2 + 0 < min + 0 && bad == "") bad = ca " port " port ": rate " $2 " Gb/s (at least " min ")"; next }
    END { if (ports == 0) print "no port listed"; else print bad }')
  if [ -n "$bad" ]; then
    fail "$bad"
  fi
  echo "$GPU_CHECK_TAG: $SLURMD_NODENAME: every port Active, LinkUp, at least $ACTIVE_CHECK_MIN_RATE Gb/s"
}

nccl_job() {
  local output rc busbw gpus="${SLURM_GPUS_ON_NODE:-${SLURM_GPUS_PER_NODE:-1}}"
  local image=()
  [ -n "$ACTIVE_CHECK_IMAGE" ] && image=(--container-image="$ACTIVE_CHECK_IMAGE")
  output=$(bounded "$ACTIVE_CHECK_TIMEOUT_SECONDS" srun --mpi=pmix --ntasks-per-node="$gpus" "${image[@]}" \
    all_reduce_perf_mpi -b "$ACTIVE_CHECK_MESSAGE_SIZE" -e "$ACTIVE_CHECK_MESSAGE_SIZE" -f 2 -g 1 2>&1)
  rc=$?
  if timed_out "$rc"; then
    drain_nodes "all-reduce did not finish within ${ACTIVE_CHECK_TIMEOUT_SECONDS}s"
  elif [ "$rc" -ne 0 ]; then
    drain_nodes "all-reduce failed (exit $rc): $(printf '%s\n' "$output" | tail -n 1)"
  fi
  # nccl-tests ends with "# Avg bus bandwidth    : 371.52" (GB/s); 0 means every rank ran alone.
  busbw=$(printf '%s\n' "$output" | awk -F: '/Avg bus bandwidth/ { gsub(/[[:space:]]/, "", $2); value = $2 } END { print value }')
  if [ -z "$busbw" ]; then
    drain_nodes "all-reduce printed no average bus bandwidth"
  fi
  if ! awk -v have="$busbw" -v floor="$ACTIVE_CHECK_MIN_BUSBW" 'BEGIN { exit !(have + 0 >= floor + 0) }'; then
    drain_nodes "all-reduce bus bandwidth $busbw GB/s is below $ACTIVE_CHECK_MIN_BUSBW GB/s"
  fi
  echo "$GPU_CHECK_TAG: all-reduce bus bandwidth $busbw GB/s (at least $ACTIVE_CHECK_MIN_BUSBW)"
}

if [ -n "${ACTIVE_CHECK_NODE:-}" ]; then
  # One node's part, run by srun: `fail` drains this node (SLURMD_NODENAME) with the reason.
  case "$ACTIVE_CHECK_KIND" in
    dcgm-diag) dcgm_node ;;
    ib-link) ib_node ;;
  esac
  exit 0
fi

case "$ACTIVE_CHECK_KIND" in
  nccl-allreduce) nccl_job ;;
  dcgm-diag | ib-link)
    # One task per node, running this script's own text (the batch script exists only on the first node; it is
    # submitted with its include inlined); each node's part drains its own node when it fails.
    self=$(cat "${BASH_SOURCE[0]}")
    image=()
    [ -n "$ACTIVE_CHECK_IMAGE" ] && image=(--container-image="$ACTIVE_CHECK_IMAGE")
    ACTIVE_CHECK_NODE=1 srun --ntasks-per-node=1 "${image[@]}" bash -c "$self" || exit 1
    ;;
  *) drain_nodes "unknown check kind '$ACTIVE_CHECK_KIND'" ;;
esac
