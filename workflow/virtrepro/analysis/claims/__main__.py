"""``python -m virtrepro.analysis.claims``: the same command line as ``python -m virtrepro.claims``."""

from ...cli import run as run_cli
from .csvtable import main

run_cli(main)
