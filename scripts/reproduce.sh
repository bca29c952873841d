#!/usr/bin/env bash
# Set everything up, then run the main job: every configured benchmark on the
# default testbed (this machine), the tidy table, the notebooks and the figures.
# Extra arguments go to Snakemake, e.g. scripts/reproduce.sh --config scale=paper
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# through virtrepro.run: a missing or broken --configfile is named with its line (then Snakemake runs)
exec .venv/bin/python -m virtrepro.run --cores all "$@"
