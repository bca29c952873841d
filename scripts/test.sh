#!/usr/bin/env bash
# Set everything up, then run the whole test suite: unit tests, integration tests
# on the local testbed (real sshd, real benchmarks) and nbval on the notebooks.
# Extra arguments go to pytest, e.g. scripts/test.sh -m "not integration"
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest "$@"
