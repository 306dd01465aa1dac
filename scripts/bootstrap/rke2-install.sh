#!/usr/bin/env bash
# Install, configure and start RKE2 on this host, idempotently; upgrade a server only while every
# server is Ready (so etcd keeps quorum with this one down) and return only once it is Ready again,
# so that the next server (which depends on this one in Pulumi) starts its upgrade after.
#
# Environment: RKE2_VERSION (e.g. v1.33.4+rke2r1), RKE2_TYPE (server | agent), RKE2_SERVER_URL
# (https://<first server>:9345; empty on the first server), RKE2_SERVERS (number of servers),
# RKE2_CLUSTER_CIDR, RKE2_SERVICE_CIDR, RKE2_TLS_SAN (comma-separated), RKE2_KUBECONFIG_MODE,
# RKE2_SELINUX (true | false), RKE2_NODE_NAME (this host's node name, default: hostname).
# The cluster token arrives on standard input, never on a command line.
set -euo pipefail

: "${RKE2_VERSION:?RKE2_VERSION is required}"
: "${RKE2_TYPE:?RKE2_TYPE is required}"
CONFIG_DIR="${RKE2_CONFIG_DIR:-/etc/rancher/rke2}"
RKE2_BIN="${RKE2_BIN:-rke2}"
KUBECTL="${RKE2_KUBECTL:-/var/lib/rancher/rke2/bin/kubectl}"
WAIT_SECONDS="${RKE2_WAIT_SECONDS:-900}"
SLEEP="${RKE2_POLL_SECONDS:-5}"
SERVERS="${RKE2_SERVERS:-1}"
NODE_NAME="${RKE2_NODE_NAME:-$(hostname)}"
service="rke2-$RKE2_TYPE"

case "$RKE2_TYPE" in
  server | agent) ;;
  *) echo "rke2-install: unknown type $RKE2_TYPE" >&2; exit 2 ;;
esac

token="$(cat)"
if [ -z "$token" ]; then
  echo "rke2-install: no cluster token on standard input" >&2
  exit 2
fi

render_config() {
  echo "# written by hpcforge (scripts/bootstrap/rke2-install.sh)"
  echo "token: \"$token\""
  if [ -n "${RKE2_SERVER_URL:-}" ]; then echo "server: \"$RKE2_SERVER_URL\""; fi
  if [ "${RKE2_SELINUX:-true}" = true ]; then echo "selinux: true"; fi
  if [ "$RKE2_TYPE" = server ]; then
    echo "write-kubeconfig-mode: \"${RKE2_KUBECONFIG_MODE:-0640}\""
    echo "cluster-cidr: \"${RKE2_CLUSTER_CIDR:-10.42.0.0/16}\""
    echo "service-cidr: \"${RKE2_SERVICE_CIDR:-10.43.0.0/16}\""
    if [ -n "${RKE2_TLS_SAN:-}" ]; then
      echo "tls-san:"
      IFS=, read -r -a sans <<<"$RKE2_TLS_SAN"
      for san in "${sans[@]}"; do echo "  - \"$san\""; done
    fi
  fi
}

installed_version() {
  if command -v "$RKE2_BIN" >/dev/null 2>&1; then
    { "$RKE2_BIN" --version 2>/dev/null || true; } | awk 'NR == 1 { print $3 }'
  fi
}

ready_servers() {
  # Control-plane nodes whose Ready condition is True.
  KUBECONFIG="$CONFIG_DIR/rke2.yaml" "$KUBECTL" get nodes -l node-role.kubernetes.io/control-plane=true \
    -o 'jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' 2>/dev/null \
    | grep -c '=True$' || true
}

node_ready() {
  KUBECONFIG="$CONFIG_DIR/rke2.yaml" "$KUBECTL" get node "$NODE_NAME" \
    -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null | grep -qx True
}

wait_for() {
  local what="$1"
  shift
  local deadline=$((SECONDS + WAIT_SECONDS))
  until "$@"; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "rke2-install: $what did not happen within ${WAIT_SECONDS}s" >&2
      exit 1
    fi
    sleep "$SLEEP"
  done
}

all_servers_ready() { [ "$(ready_servers)" -ge "$SERVERS" ]; }
active() { systemctl is-active --quiet "$service"; }

current="$(installed_version)"
mkdir -p "$CONFIG_DIR"
new_config="$(render_config)"
old_config="$(cat "$CONFIG_DIR/config.yaml" 2>/dev/null || true)"

if [ "$current" = "$RKE2_VERSION" ] && [ "$new_config" = "$old_config" ] && active; then
  echo "rke2 $RKE2_VERSION ($RKE2_TYPE) already running: nothing to do"
  exit 0
fi

upgrade=0
if [ -n "$current" ] && active; then
  upgrade=1
  if [ "$RKE2_TYPE" = server ] && [ "$SERVERS" -gt 1 ]; then
    # Take this server down only while all servers are Ready: etcd keeps its quorum without it.
    echo "waiting for all $SERVERS servers to be Ready before changing this one"
    wait_for "all $SERVERS servers Ready" all_servers_ready
  fi
fi

if [ "$current" != "$RKE2_VERSION" ]; then
  echo "installing rke2 $RKE2_VERSION ($RKE2_TYPE)${current:+, replacing $current}"
  curl -sfL https://get.rke2.io | INSTALL_RKE2_VERSION="$RKE2_VERSION" INSTALL_RKE2_TYPE="$RKE2_TYPE" sh -
fi

umask 077
printf '%s\n' "$new_config" >"$CONFIG_DIR/config.yaml"

systemctl enable "$service" >/dev/null
if [ "$upgrade" = 1 ]; then
  systemctl restart "$service"
else
  systemctl start "$service"
fi
wait_for "$service to be active" active
if [ "$RKE2_TYPE" = server ]; then
  wait_for "node $NODE_NAME to be Ready" node_ready
  if [ "$upgrade" = 1 ]; then
    wait_for "all $SERVERS servers Ready again" all_servers_ready
  fi
fi
echo "rke2 $RKE2_VERSION ($RKE2_TYPE) running"
