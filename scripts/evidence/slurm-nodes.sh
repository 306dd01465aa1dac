#!/usr/bin/env bash
# Evidence: every NodeSet's nodes are registered in Slurm and ready for work: idle, or running jobs
# on a cluster that is already busy (mixed, allocated, completing). Down, drained, failed or missing
# nodes fail the check.
# SLURM_NODESETS: space-separated "nodeset:replicas" pairs (nodesets with 0 replicas are skipped).
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
require SLURM_NAMESPACE SLURM_CONTROLLER SLURM_NODESETS

check() {
  local rows pair nodeset want have idle problems="" summary=""
  if ! rows=$(k -n "$SLURM_NAMESPACE" exec "statefulset/$SLURM_CONTROLLER" -c slurmctld -- sinfo -h -N -o '%N|%T|%f' 2>&1); then
    echo "sinfo failed: $rows"
    return 1
  fi
  for pair in $SLURM_NODESETS; do
    nodeset="${pair%%:*}"
    want="${pair##*:}"
    [ "$want" -gt 0 ] || continue
    read -r have idle < <(awk -F'|' -v ns="$nodeset" '
      { n = split($3, features, ","); member = 0
        for (i = 1; i <= n; i++) if (features[i] == ns) member = 1
        if (member && $2 ~ /^(idle|mixed|allocated|completing)$/) { ready[$1] = 1; if ($2 == "idle") free[$1] = 1 } }
      END { print length(ready), length(free) }' <<<"$rows")
    if [ "$have" -lt "$want" ]; then
      problems+="nodeset $nodeset has $have of $want nodes ready; "
    fi
    summary+="$nodeset $have/$want ready ($idle idle); "
  done
  if [ -n "$problems" ]; then
    echo "${problems%; }"
    return 1
  fi
  echo "${summary%; }"
}

converge slurm-nodes check
