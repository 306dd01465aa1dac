#!/bin/sh
# Deliver the Slurm auth key (auth/slurm) to bare-metal hosts after they boot, over SSH.
#
# The key signs every Slurm identity: it is never baked into a boot image (Grendel hands images to every booting
# host, and anyone who downloads one would hold it). Each host's join script (served by Grendel) waits for
# /etc/slurm/slurm.key before it starts slurmd. Run this from an admin workstation that has kubectl access to the
# Slurm namespace and SSH access to the hosts (the keys in hpcforge:provisioning.adminSshPublicKeys):
#
#   scripts/provisioning/deliver-slurm-key.sh [-n NAMESPACE] HOST...
#
# The key goes from the cluster's Secret to the host through pipes only: it is never on a command line, in the
# environment or in a file on this workstation. On the host it lands as root:root 0400.
set -eu
namespace=slurm
secret=slurm-auth-slurm
if [ "${1:-}" = "-n" ]; then namespace=$2; shift 2; fi
if [ "$#" -eq 0 ]; then
  echo "usage: $0 [-n NAMESPACE] HOST..." >&2
  exit 2
fi
for host in "$@"; do
  kubectl -n "$namespace" get secret "$secret" -o 'go-template={{index .data "slurm.key"}}' \
    | base64 -d \
    | ssh -o BatchMode=yes "root@$host" \
      'umask 077 && mkdir -p /etc/slurm && cat > /etc/slurm/slurm.key.new && chmod 0400 /etc/slurm/slurm.key.new && mv /etc/slurm/slurm.key.new /etc/slurm/slurm.key'
  echo "delivered the Slurm key to $host" >&2
done
