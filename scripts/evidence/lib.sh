#!/usr/bin/env bash
# Shared helpers of the deployment evidence checks (sourced, not run).
#
# Every check polls until the platform has converged or HPCFORGE_EVIDENCE_TIMEOUT seconds have
# passed; then it prints one JSON line on success, or explains on stderr what is wrong and exits 1
# (which fails `pulumi up`).
# shellcheck shell=bash

set -euo pipefail

KUBECTL="${HPCFORGE_KUBECTL:-kubectl}"
TIMEOUT="${HPCFORGE_EVIDENCE_TIMEOUT:-600}"
INTERVAL="${HPCFORGE_EVIDENCE_INTERVAL:-10}"
CONTEXT_ARGS=()
if [ -n "${HPCFORGE_KUBE_CONTEXT:-}" ]; then
  CONTEXT_ARGS=(--context "$HPCFORGE_KUBE_CONTEXT")
fi
# A bootstrapped cluster's kubeconfig arrives as data (a Pulumi secret): a private temporary file.
if [ -n "${HPCFORGE_KUBECONFIG_DATA:-}" ]; then
  HPCFORGE_KUBECONFIG_FILE=$(mktemp)
  trap 'rm -f "$HPCFORGE_KUBECONFIG_FILE"' EXIT
  chmod 600 "$HPCFORGE_KUBECONFIG_FILE"
  printf '%s\n' "$HPCFORGE_KUBECONFIG_DATA" >"$HPCFORGE_KUBECONFIG_FILE"
  CONTEXT_ARGS+=(--kubeconfig "$HPCFORGE_KUBECONFIG_FILE")
fi

# kubectl with the stack's context.
k() {
  "$KUBECTL" "${CONTEXT_ARGS[@]}" "$@"
}

# require NAME...: fail early when an environment variable the check needs is missing.
require() {
  local name
  for name in "$@"; do
    if [ -z "${!name:-}" ]; then
      echo "evidence: $name is not set" >&2
      exit 2
    fi
  done
}

# converge CHECK NAME FUNCTION: run FUNCTION until it succeeds or the timeout passes. FUNCTION
# prints a one-line detail on success, or what is wrong on failure.
converge() {
  local check="$1" function="$2" deadline output
  deadline=$((SECONDS + TIMEOUT))
  while true; do
    if output=$("$function" 2>&1); then
      printf '{"check":"%s","ok":true,"detail":"%s"}\n' "$check" "${output//\"/\'}"
      return 0
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      printf 'evidence: %s failed after %ss: %s\n' "$check" "$TIMEOUT" "$output" >&2
      exit 1
    fi
    sleep "$INTERVAL"
  done
}
