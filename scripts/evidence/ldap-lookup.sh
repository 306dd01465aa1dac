#!/usr/bin/env bash
# Evidence: a directory user resolves through SSSD on a login node (getent passwd).
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
require SLURM_NAMESPACE SLURM_LOGIN LOOKUP_USER LOOKUP_UID

check() {
  local entry uid
  if ! entry=$(k -n "$SLURM_NAMESPACE" exec "deployment/$SLURM_LOGIN" -- getent passwd "$LOOKUP_USER" 2>&1); then
    echo "user $LOOKUP_USER is unknown on the login node (SSSD/LDAP): $entry"
    return 1
  fi
  uid=$(cut -d: -f3 <<<"$entry")
  if [ "$uid" != "$LOOKUP_UID" ]; then
    echo "user $LOOKUP_USER resolved with uid $uid, expected $LOOKUP_UID"
    return 1
  fi
  echo "$LOOKUP_USER resolves to uid $uid"
}

converge ldap-lookup check
