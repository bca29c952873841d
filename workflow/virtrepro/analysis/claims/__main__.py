"""``python -m virtrepro.analysis.claims``: a testbed's claims CSV (:func:`.csvtable.main`, the workflow's claims_table job)."""

from .csvtable import main

if __name__ == "__main__":  # imported (pkgutil.walk_packages: the package-list checks), it runs nothing
    from ...cli import run as run_cli

    run_cli(main)
