#!/bin/bash
# Slurm prolog: give the job a private node-local scratch directory, /tmp/slurm-<job id>, owned by
# the job's user (mode 0700). The epilog removes it, so nothing outlives the job.
set -eu

scratch="/tmp/slurm-${SLURM_JOB_ID:?}"
mkdir -p "$scratch"
chmod 0700 "$scratch"
chown "${SLURM_JOB_UID:?}:${SLURM_JOB_GID:?}" "$scratch"
exit 0
