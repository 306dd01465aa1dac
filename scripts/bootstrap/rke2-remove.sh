#!/usr/bin/env bash
# Take RKE2 off this host (when the host leaves the config). Idempotent: no RKE2, nothing to do.
set -euo pipefail
UNINSTALL="${RKE2_UNINSTALL:-/usr/local/bin/rke2-uninstall.sh}"
if [ ! -x "$UNINSTALL" ] && [ -x /usr/bin/rke2-uninstall.sh ]; then UNINSTALL=/usr/bin/rke2-uninstall.sh; fi
if [ ! -x "$UNINSTALL" ]; then
  echo "rke2 is not installed: nothing to do"
  exit 0
fi
"$UNINSTALL"
echo "rke2 removed"
