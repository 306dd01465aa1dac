#!/bin/bash
# Slurm prolog: on GPU nodes, every GPU the job was given must answer nvidia-smi. A GPU that fell
# off the bus drains the node instead of failing the job minutes later.
set -u

if [ -z "${CUDA_VISIBLE_DEVICES:-}" ] && [ -z "${SLURM_JOB_GPUS:-}" ]; then
  exit 0
fi
if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "prolog: job has GPUs but nvidia-smi is missing" >&2
  exit 1
fi
if ! nvidia-smi --query-gpu=index,health --format=csv,noheader >/dev/null 2>&1; then
  echo "prolog: nvidia-smi failed; GPUs unhealthy" >&2
  exit 1
fi
exit 0
