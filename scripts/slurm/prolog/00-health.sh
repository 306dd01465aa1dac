#!/bin/bash
# Slurm prolog: refuse to start a job on a node that is not healthy. A non-zero exit makes
# slurmctld drain the node (and requeue the job), so a broken node stops taking work.
set -u

min_free_tmp_mb=1024
tmp_dir=/tmp

free_mb=$(df -Pm "$tmp_dir" | awk 'NR == 2 { print $4 }')
if [ -z "$free_mb" ] || [ "$free_mb" -lt "$min_free_tmp_mb" ]; then
  echo "prolog: only ${free_mb:-?} MB free in $tmp_dir (need $min_free_tmp_mb MB)" >&2
  exit 1
fi
exit 0
