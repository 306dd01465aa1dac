#!/usr/bin/env bash
# Install and start k0s on this host, idempotently: a host that already runs the wanted k0s version
# in the wanted role is left untouched, so `pulumi up` may run this again at any time.
#
# Environment: K0S_VERSION (e.g. v1.33.4+k0s.0), K0S_ROLE (controller | controller+worker | worker).
# Joining hosts (workers, extra controllers) read their join token on standard input.
set -euo pipefail

: "${K0S_VERSION:?K0S_VERSION is required}"
: "${K0S_ROLE:?K0S_ROLE is required}"
K0S_BIN="${K0S_BIN:-/usr/local/bin/k0s}"
TOKEN_FILE="${K0S_TOKEN_FILE:-/etc/k0s/join-token}"
WAIT_SECONDS="${K0S_WAIT_SECONDS:-300}"

installed_version() {
  if [ -x "$K0S_BIN" ]; then "$K0S_BIN" version 2>/dev/null || true; fi
}

running() {
  [ -x "$K0S_BIN" ] && "$K0S_BIN" status >/dev/null 2>&1
}

case "$K0S_ROLE" in
  controller | controller+worker | worker) ;;
  *) echo "k0s-install: unknown role $K0S_ROLE" >&2; exit 2 ;;
esac

current="$(installed_version)"
if [ "$current" = "$K0S_VERSION" ] && running; then
  echo "k0s $K0S_VERSION ($K0S_ROLE) already running: nothing to do"
  exit 0
fi

if [ -n "$current" ] && [ "$current" != "$K0S_VERSION" ] && running; then
  # An upgrade: stop the old release first, so its binary can be replaced and the new one runs.
  echo "upgrading k0s $current to $K0S_VERSION"
  "$K0S_BIN" stop
fi

if [ "$current" != "$K0S_VERSION" ]; then
  # The official installer, pinned to the release.
  curl -sSfL https://get.k0s.sh | K0S_VERSION="$K0S_VERSION" sh
fi

join_args=()
if [ "$K0S_ROLE" = "worker" ] || [ -n "${K0S_JOIN:-}" ]; then
  mkdir -p "$(dirname "$TOKEN_FILE")"
  umask 077
  cat >"$TOKEN_FILE"
  if [ ! -s "$TOKEN_FILE" ]; then
    echo "k0s-install: no join token on standard input" >&2
    exit 2
  fi
  join_args=(--token-file "$TOKEN_FILE")
fi

if ! "$K0S_BIN" status >/dev/null 2>&1; then
  case "$K0S_ROLE" in
    controller) "$K0S_BIN" install controller "${join_args[@]}" || true ;;
    controller+worker) "$K0S_BIN" install controller --enable-worker --no-taints "${join_args[@]}" || true ;;
    worker) "$K0S_BIN" install worker "${join_args[@]}" || true ;;
  esac
  "$K0S_BIN" start || true
fi

deadline=$((SECONDS + WAIT_SECONDS))
until running; do
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "k0s-install: k0s did not start within ${WAIT_SECONDS}s" >&2
    exit 1
  fi
  sleep 5
done
echo "k0s $K0S_VERSION ($K0S_ROLE) running"
