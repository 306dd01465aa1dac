#!/usr/bin/env bash
# Prepare a host for RKE2, idempotently: swap off (now and in fstab), SELinux left enforcing where it is
# on (RKE2 runs with rke2-selinux), the firewall ports RKE2 needs opened, and an administrator account.
#
# Environment: RKE2_TYPE (server | agent), RKE2_SYSADMIN (account name), RKE2_SYSADMIN_KEYS (OpenSSH
# public keys, one per line; may be empty). Test hooks: RKE2_FSTAB, RKE2_SUDOERS_DIR, RKE2_HOME_ROOT.
set -euo pipefail

: "${RKE2_TYPE:?RKE2_TYPE is required}"
: "${RKE2_SYSADMIN:?RKE2_SYSADMIN is required}"
FSTAB="${RKE2_FSTAB:-/etc/fstab}"
SUDOERS_DIR="${RKE2_SUDOERS_DIR:-/etc/sudoers.d}"
HOME_ROOT="${RKE2_HOME_ROOT:-/home}"
changed=0

case "$RKE2_TYPE" in
  server)
    # Kubernetes API, RKE2 supervisor (joins), kubelet, etcd client/peer, canal VXLAN and health, NodePorts.
    ports=(6443/tcp 9345/tcp 10250/tcp 2379-2380/tcp 8472/udp 9099/tcp 30000-32767/tcp) ;;
  agent) ports=(10250/tcp 8472/udp 9099/tcp 30000-32767/tcp) ;;
  *) echo "rke2-prepare: unknown type $RKE2_TYPE" >&2; exit 2 ;;
esac

# Swap: the kubelet refuses to start with swap on.
if [ -n "$(swapon --show=NAME --noheadings 2>/dev/null || true)" ]; then
  swapoff -a
  changed=1
fi
if grep -Eq '^[^#].*[[:space:]]swap[[:space:]]' "$FSTAB" 2>/dev/null; then
  sed -i -E 's/^([^#].*[[:space:]]swap[[:space:]].*)$/# disabled for RKE2: \1/' "$FSTAB"
  changed=1
fi

# SELinux: report it; never switch it off (config.yaml says `selinux: true` and rke2-selinux is installed
# by the RKE2 installer on SELinux hosts).
if command -v getenforce >/dev/null 2>&1; then
  echo "SELinux: $(getenforce)"
fi

# Firewall: open the ports in firewalld where it runs.
if command -v firewall-cmd >/dev/null 2>&1 && firewall-cmd --state >/dev/null 2>&1; then
  opened=0
  for port in "${ports[@]}"; do
    if ! firewall-cmd --permanent --query-port="$port" >/dev/null 2>&1; then
      firewall-cmd --permanent --add-port="$port" >/dev/null
      opened=1
    fi
  done
  if [ "$opened" = 1 ]; then
    firewall-cmd --reload >/dev/null
    changed=1
  fi
fi

# The administrator account: key login, sudo without a password.
if ! id "$RKE2_SYSADMIN" >/dev/null 2>&1; then
  useradd --create-home --home-dir "$HOME_ROOT/$RKE2_SYSADMIN" --shell /bin/bash "$RKE2_SYSADMIN"
  changed=1
fi
sudoers="$SUDOERS_DIR/90-$RKE2_SYSADMIN"
want="$RKE2_SYSADMIN ALL=(ALL) NOPASSWD: ALL"
if [ "$(cat "$sudoers" 2>/dev/null || true)" != "$want" ]; then
  mkdir -p "$SUDOERS_DIR"
  printf '%s\n' "$want" >"$sudoers"
  chmod 0440 "$sudoers"
  changed=1
fi
if [ -n "${RKE2_SYSADMIN_KEYS:-}" ]; then
  keys="$HOME_ROOT/$RKE2_SYSADMIN/.ssh/authorized_keys"
  if [ "$(cat "$keys" 2>/dev/null || true)" != "$RKE2_SYSADMIN_KEYS" ]; then
    mkdir -p "$(dirname "$keys")"
    printf '%s\n' "$RKE2_SYSADMIN_KEYS" >"$keys"
    chmod 0700 "$(dirname "$keys")"
    chmod 0600 "$keys"
    chown -R "$RKE2_SYSADMIN" "$(dirname "$keys")"
    changed=1
  fi
fi

if [ "$changed" = 0 ]; then
  echo "host already prepared for RKE2 ($RKE2_TYPE): nothing to do"
else
  echo "host prepared for RKE2 ($RKE2_TYPE)"
fi
