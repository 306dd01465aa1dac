#!/usr/bin/env bash
# Print the cluster's admin kubeconfig (read back as a Pulumi secret), pointed at this server's address.
# Environment: RKE2_API_HOST (the address the Kubernetes provider uses).
set -euo pipefail
: "${RKE2_API_HOST:?RKE2_API_HOST is required}"
CONFIG_DIR="${RKE2_CONFIG_DIR:-/etc/rancher/rke2}"
sed "s#https://127.0.0.1:6443#https://${RKE2_API_HOST}:6443#" "$CONFIG_DIR/rke2.yaml"
