#!/usr/bin/env bash
# What the cluster shows around `pulumi up`, for `./hpcforge diff --verify` (offline/diff/verify.py reads these files).
#
#   scripts/ci/collect_cluster.sh before DIR    # right before the update: its start time, the jobs
#   scripts/ci/collect_cluster.sh after DIR     # right after: pods, NodeSets and Controllers, slurmctld's config and
#                                               # partitions, the jobs
#
# Runs where kubectl reaches the cluster (KUBECONFIG); the Slurm commands run in the slurmctld container of the
# Controller's pod (`<controller>-controller-0`, container `slurmctld`: slurm-operator v1.2.1
# api/v1beta1/controller_keys.go:25), whose image installs Slurm's clients (SlinkyProject/containers
# schedmd/slurm/26.05/ubuntu24.04/Dockerfile, stage slurmctld: slurm-smd-client). Environment: SLURM_NAMESPACE
# (default slurm), SLURM_CONTROLLER (the Controller's name, default slurm), KUBECTL (default kubectl).
#
# A command that fails leaves its file out with a warning, and the claims that need it are `unchecked`: collecting
# never fails the deploy.
set -uo pipefail

phase=${1:-}
dir=${2:-}
if [ "$phase" != before ] && [ "$phase" != after ] || [ -z "$dir" ]; then
    echo "usage: $0 before|after DIR" >&2
    exit 2
fi
namespace=${SLURM_NAMESPACE:-slurm}
pod="${SLURM_CONTROLLER:-slurm}-controller-0"
kubectl=${KUBECTL:-kubectl}
mkdir -p "$dir"

save() { # save FILE COMMAND...: the command's stdout into DIR/FILE, or a warning and no file
    local file=$1
    shift
    if "$@" > "$dir/$file.part" 2> "$dir/$file.err"; then
        mv "$dir/$file.part" "$dir/$file"
        rm -f "$dir/$file.err"
    else
        echo "::warning::collect_cluster.sh: $file not collected: $(tail -n 1 "$dir/$file.err")" >&2
        rm -f "$dir/$file.part" "$dir/$file.err"
    fi
}

# shellcheck disable=SC2317  # called through save()
slurm() { # the Slurm client in the slurmctld container
    "$kubectl" -n "$namespace" exec "$pod" -c slurmctld -- "$@"
}

if [ "$phase" = before ]; then
    date +%s > "$dir/started_at"
    save jobs-before.json slurm scontrol show jobs --json
    exit 0
fi

started=$(cat "$dir/started_at" 2> /dev/null || echo 0)
printf '{"started_at": %s, "finished_at": %s}\n' "$started" "$(date +%s)" > "$dir/deploy.json"
save pods.json "$kubectl" get pods -A -o json
save slurm-objects.json "$kubectl" get nodesets.slinky.slurm.net,controllers.slinky.slurm.net -A -o json
save scontrol-config.json slurm scontrol show config --json
save scontrol-config.txt slurm scontrol show config
save partitions.json slurm scontrol show partitions --json
save jobs-after.json slurm scontrol show jobs --json
exit 0
