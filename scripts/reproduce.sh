#!/usr/bin/env bash
# Set everything up, then run the main job: every configured benchmark on the
# default testbed (this machine), the tidy table, the notebooks and the figures.
# Extra arguments go to Snakemake, e.g. scripts/reproduce.sh --config scale=paper
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# First the guest image and the probes that decide the plan (KVM or TCG, NPB or not), so that the
# main run's progress ("k of N steps") counts every job from the start. Through virtrepro: a
# missing or broken --configfile is named with its line (then Snakemake runs).
.venv/bin/python -m virtrepro --cores all prepare "$@"
exec .venv/bin/python -m virtrepro --cores all "$@"
