#!/usr/bin/env bash
# Print a join token for ROLE (worker | controller) from the first controller.
set -euo pipefail
: "${K0S_TOKEN_ROLE:?K0S_TOKEN_ROLE is required}"
K0S_BIN="${K0S_BIN:-/usr/local/bin/k0s}"
exec "$K0S_BIN" token create --role="$K0S_TOKEN_ROLE" --expiry=2h
