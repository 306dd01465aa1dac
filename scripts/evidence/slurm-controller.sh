#!/usr/bin/env bash
# Evidence: slurmctld answers (scontrol ping from the controller pod).
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
require SLURM_NAMESPACE SLURM_CONTROLLER

check() {
  local output
  if ! output=$(k -n "$SLURM_NAMESPACE" exec "statefulset/$SLURM_CONTROLLER" -c slurmctld -- scontrol ping 2>&1); then
    echo "scontrol ping failed: $output"
    return 1
  fi
  if ! grep -q "is UP" <<<"$output"; then
    echo "slurmctld is not up: $output"
    return 1
  fi
  echo "$output" | head -n 1
}

converge slurm-controller check
