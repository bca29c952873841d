#!/usr/bin/env bash
#SBATCH --job-name=virtrepro
#SBATCH --exclusive
# The workflow on the nodes of a SLURM allocation (testbed kind `slurm`, docs/testbeds.md, "On a SLURM cluster"):
# this script runs on the allocation's first node and measures on all of its nodes over SSH.
#
#   sbatch -N 2 -p PARTITION -A ACCOUNT -t 08:00:00 scripts/slurm_run.sh --config testbed=mycluster [snakemake options]
#
# scancel stops it within seconds (SIGTERM to Snakemake and its measurement jobs): complete raw logs
# stay, the repetitions that were running are not kept as complete, guests on the nodes go with
# their keepers; submitting it again measures only what is missing.
set -euo pipefail
cd "${SLURM_SUBMIT_DIR:-$(dirname "$0")/..}"
if [ -z "${SLURM_JOB_ID:-}" ]; then
    echo "error: run this inside a SLURM allocation (sbatch scripts/slurm_run.sh ..., or salloc)" >&2
    exit 2
fi
# the probes first (which platforms the nodes allow, QEMU's accelerator, NPB's source: checkpoints),
# so that the main run's plan is whole from its first line (and --until/--omit-from, which Snakemake
# does not apply again after a checkpoint, filter the whole plan)
.venv/bin/python -m virtrepro --cores all prepare "$@"
exec .venv/bin/python -m virtrepro --cores all "$@"
