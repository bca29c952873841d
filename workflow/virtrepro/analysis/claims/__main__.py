"""``python -m virtrepro.analysis.claims``: the same command line as ``python -m virtrepro.claims``."""

from .csvtable import main

if __name__ == "__main__":  # imported (pkgutil.walk_packages: the package-list checks), it runs nothing
    from ...cli import run as run_cli

    run_cli(main)
