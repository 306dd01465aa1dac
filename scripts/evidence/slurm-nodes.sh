#!/usr/bin/env bash
# Evidence: every NodeSet's nodes are registered in Slurm and idle.
# SLURM_NODESETS: space-separated "nodeset:replicas" pairs (nodesets with 0 replicas are skipped).
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
require SLURM_NAMESPACE SLURM_CONTROLLER SLURM_NODESETS

check() {
  local rows pair nodeset want have problems=""
  if ! rows=$(k -n "$SLURM_NAMESPACE" exec "statefulset/$SLURM_CONTROLLER" -c slurmctld -- sinfo -h -N -o '%N|%T|%f' 2>&1); then
    echo "sinfo failed: $rows"
    return 1
  fi
  for pair in $SLURM_NODESETS; do
    nodeset="${pair%%:*}"
    want="${pair##*:}"
    [ "$want" -gt 0 ] || continue
    have=$(awk -F'|' -v ns="$nodeset" '
      { n = split($3, features, ","); member = 0
        for (i = 1; i <= n; i++) if (features[i] == ns) member = 1
        if (member && $2 == "idle") seen[$1] = 1 }
      END { print length(seen) }' <<<"$rows")
    if [ "$have" -lt "$want" ]; then
      problems+="nodeset $nodeset has $have of $want nodes idle; "
    fi
  done
  if [ -n "$problems" ]; then
    echo "${problems%; }"
    return 1
  fi
  echo "all nodesets registered and idle ($SLURM_NODESETS)"
}

converge slurm-nodes check
