#!/usr/bin/env bash
# Evidence: Grendel's API answers and knows the whole host inventory.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
require GRENDEL_NAMESPACE GRENDEL_HOSTS

check() {
  local output count
  if ! output=$(k -n "$GRENDEL_NAMESPACE" exec deployment/grendel -- grendel -c /secret/grendel.toml host list 2>&1); then
    echo "the Grendel API did not answer: $output"
    return 1
  fi
  count=$(grep -c . <<<"$output" || true)
  if [ "$count" -lt "$GRENDEL_HOSTS" ]; then
    echo "Grendel lists $count hosts, expected at least $GRENDEL_HOSTS"
    return 1
  fi
  echo "Grendel API answers with $count hosts"
}

converge grendel-api check
