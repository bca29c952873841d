"""Snakemake, with the configuration files checked first.

    python -m virtrepro [snakemake options]      # e.g. --cores all --configfile my.yaml

Snakemake reads ``--configfile`` before it reads the Snakefile, and a missing file or broken
YAML there ends in its traceback or in "not valid JSON or YAML" without the file or line.
This command reads each such file first and names the file and line (and column) where it
is wrong, then hands every argument over to Snakemake unchanged; everything else (the
schema, the keys' meaning) is checked by the workflow itself (``workflow/rules/common.smk``).
Ctrl-C at any moment is the line ``interrupted`` and exit status 130 (plain ``snakemake``
prints a traceback if it comes while Snakemake is still starting, before it reads the Snakefile).
``scripts/reproduce.sh`` runs the workflow through it.
"""

from __future__ import annotations

import sys

from .cli import run

CONFIGFILE_OPTIONS = ("--configfile", "--configfiles")


def configfiles(argv: list[str]) -> list[str]:
    """The files given to Snakemake's ``--configfile`` (several may follow one option)."""
    files, taking = [], False
    for arg in argv:
        if taking and not arg.startswith("-"):
            files.append(arg)
            continue
        taking = False
        name, equals, value = arg.partition("=")
        if name in CONFIGFILE_OPTIONS:
            if equals:
                files.append(value)
            else:
                taking = True
    return files


def main(argv: list[str]) -> int:
    from .planning.config import read_config_file  # inside cli.run: a Ctrl-C while it imports is one line too

    for path in configfiles(argv):
        read_config_file(path)
    # Snakemake in this process, not exec'd: a Ctrl-C while it starts, before the Snakefile takes
    # SIGINT over (virtrepro.cli.interrupts_exit_130), is still cli.run's one line and status 130
    import importlib.util

    sys.argv = [importlib.util.find_spec("snakemake.__main__").origin, *argv]  # as `python -m snakemake` has them
    from snakemake.cli import main as snakemake

    snakemake(argv)  # exits with Snakemake's status
    return 1  # not reached


if __name__ == "__main__":
    run(main, debug_flag=False)
