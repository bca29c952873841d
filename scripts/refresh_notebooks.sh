#!/usr/bin/env bash
# Re-execute the committed notebooks in place with their default parameters (the committed
# reference-vm data), so that their stored outputs, which nbval compares against, match the data.
# Run after changing a notebook or refreshing data/raw/reference-vm.
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/jupyter nbconvert --to notebook --execute --inplace notebooks/*.ipynb
