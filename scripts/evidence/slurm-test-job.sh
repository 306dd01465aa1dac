#!/usr/bin/env bash
# Evidence: a test job submitted from a login node runs (srun, one node, one minute at most).
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
require SLURM_NAMESPACE SLURM_LOGIN SLURM_PARTITION

check() {
  local output
  if ! output=$(k -n "$SLURM_NAMESPACE" exec "deployment/$SLURM_LOGIN" -- \
    srun --partition="$SLURM_PARTITION" --nodes=1 --time=1 --job-name=hpcforge-evidence hostname 2>&1); then
    echo "test job in partition $SLURM_PARTITION failed: $output"
    return 1
  fi
  echo "test job in partition $SLURM_PARTITION ran on $(tail -n 1 <<<"$output")"
}

converge slurm-test-job check
