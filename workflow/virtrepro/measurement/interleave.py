"""Interleaved re-measurement: one variant on several platforms, in alternating rounds, into a data
directory of its own.

The workflow itself measures in rounds (``docs/methodology.md``, "Run order"); this measures one
variant again, a given number of rounds, on platforms in an order of one's choice: repetition *r*
of every platform back to back (round *r*), the order alternating between rounds (A B C, then C B
A, ...: :func:`virtrepro.planning.config.round_order`), each round a paired comparison made seconds apart
(:func:`virtrepro.analysis.stats.paired_rounds`).

The rounds are one ordinary measurement job (``python -m virtrepro.measurement.job --rep 0 --rep 1 ...``):
the same benchmark command, guests, sidecars and provenance as the reference run, from a committed tree. The
logs go to a data directory of their own (``data/investigations/<name>``), never beside the
reference data. The rounds resume: a complete log is never measured again.

    python -m virtrepro.measurement.interleave --data-dir data/investigations/interleaved --testbed reference-vm \\
        --scale reference --benchmark isolation --variant <key> --platforms native podman lxc --rounds 10

``--configfile config/npb-from-git.yaml`` adds the NPB tarball's settings as the reference run does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path



def main(argv: list[str] | None = None) -> int:
    """Measure a variant in alternating rounds over platforms (see the module's doc)."""
    import argparse

    from ..cli import count
    from ..planning.config import DEFAULT_CONFIG, config_with_files

    parser = argparse.ArgumentParser(prog="python -m virtrepro.measurement.interleave", description=main.__doc__)
    parser.add_argument("--configfile", action="append",
                        help="a configuration file; several are merged in order, as Snakemake merges its "
                             "--configfile over the Snakefile's (default and first: config/config.yaml)")
    parser.add_argument("--data-dir", required=True, help="where the logs go (not the reference data's directory)")
    parser.add_argument("--testbed", required=True)
    parser.add_argument("--scale", required=True)
    parser.add_argument("--benchmark", required=True)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--platforms", nargs="+", required=True, help="in the order of the first round")
    parser.add_argument("--rounds", type=count(1), required=True)
    args = parser.parse_args(argv)
    if len(set(args.platforms)) != len(args.platforms) or len(args.platforms) < 2:
        parser.error("--platforms: two or more, each once")
    config = config_with_files([path for path in args.configfile or [] if Path(path).resolve() != DEFAULT_CONFIG],
                               {"testbed": args.testbed, "scale": args.scale, "data_dir": args.data_dir})
    # the configuration by environment, as the Snakemake rule passes it; the sidecars' provenance names
    # this command line (not each job's)
    environment = {**os.environ, "VIRTREPRO_CONFIG": json.dumps(config),
                   "VIRTREPRO_INVOCATION": json.dumps(["python -m virtrepro.measurement.interleave", *sys.argv[1:]])}
    subprocess.run(
        [sys.executable, "-m", "virtrepro.measurement.job", "--data-dir", args.data_dir, "--testbed", args.testbed,
         *(word for platform in args.platforms for word in ("--platform", platform)), "--benchmark", args.benchmark,
         "--variant", args.variant, *(word for number in range(args.rounds) for word in ("--rep", str(number)))],
        check=True, env=environment,
    )
    return 0


if __name__ == "__main__":
    from ..cli import run as run_cli

    run_cli(main)
