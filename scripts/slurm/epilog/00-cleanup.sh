#!/bin/bash
# Slurm epilog: remove what the job left in node-local scratch, so the next job starts clean.
set -u

scratch_root="${HPCFORGE_SCRATCH_ROOT:-/tmp}"
job_id="${SLURM_JOB_ID:-}"
if [ -n "$job_id" ] && [ -d "$scratch_root/slurm-$job_id" ]; then
  rm -rf -- "${scratch_root:?}/slurm-$job_id"
fi

if [ -n "${HPCFORGE_EPILOG_EVIDENCE:-}" ]; then
  printf 'epilog job=%s user=%s node=%s\n' "${job_id:-?}" "${SLURM_JOB_USER:-?}" "$(hostname)" >>"$HPCFORGE_EPILOG_EVIDENCE"
fi
exit 0
