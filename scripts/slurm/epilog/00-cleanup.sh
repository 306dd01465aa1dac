#!/bin/bash
# Slurm epilog: remove the job's node-local scratch directory (created by the 05-scratch prolog),
# so the next job starts clean.
set -u

job_id="${SLURM_JOB_ID:-}"
if [ -n "$job_id" ] && [ -d "/tmp/slurm-$job_id" ]; then
  rm -rf -- "/tmp/slurm-$job_id"
fi
exit 0
