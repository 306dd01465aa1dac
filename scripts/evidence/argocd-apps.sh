#!/usr/bin/env bash
# Evidence: every Argo CD Application is Synced and Healthy.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

ARGOCD_NAMESPACE="${ARGOCD_NAMESPACE:-argocd}"

check() {
  local rows bad count
  if ! rows=$(k -n "$ARGOCD_NAMESPACE" get applications.argoproj.io \
    -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.status.sync.status}{" "}{.status.health.status}{"\n"}{end}'); then
    echo "cannot list Argo CD applications in namespace $ARGOCD_NAMESPACE"
    return 1
  fi
  if [ -z "$rows" ]; then
    echo "no Argo CD application found in namespace $ARGOCD_NAMESPACE"
    return 1
  fi
  bad=$(awk '$2 != "Synced" || $3 != "Healthy" { printf "%s is %s/%s; ", $1, ($2 == "" ? "Unknown" : $2), ($3 == "" ? "Unknown" : $3) }' <<<"$rows")
  if [ -n "$bad" ]; then
    echo "not converged: ${bad%; }"
    return 1
  fi
  count=$(grep -c . <<<"$rows")
  echo "$count applications Synced and Healthy"
}

converge argocd-apps check
