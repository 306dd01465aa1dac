#!/usr/bin/env bash
# Take k0s off this host (when the host leaves the config). Idempotent: no k0s, nothing to do.
set -euo pipefail
K0S_BIN="${K0S_BIN:-/usr/local/bin/k0s}"
if [ ! -x "$K0S_BIN" ]; then
  echo "k0s is not installed: nothing to do"
  exit 0
fi
"$K0S_BIN" stop || true
"$K0S_BIN" reset || true
echo "k0s removed"
