#!/usr/bin/env bash
# Print the cluster's admin kubeconfig (read back as a Pulumi secret).
set -euo pipefail
K0S_BIN="${K0S_BIN:-/usr/local/bin/k0s}"
exec "$K0S_BIN" kubeconfig admin
