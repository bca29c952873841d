"""The estimate's command line: what the planned measurement jobs will cost, and which of them this
machine or this code's guest image may not continue.

    python -m virtrepro.measurement.estimate --estimate [--config scale=reference testbed=reference-vm ...]

The estimate is the planning's (:func:`virtrepro.planning.plan.summary`, from the raw data); this command
gives it this code's guest image (:func:`virtrepro.measurement.provenance.current_image`), which the
planning does not look up itself.
"""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    """Print the estimated wall time of the planned measurement jobs (see :mod:`virtrepro.planning.plan`)."""
    import argparse

    from ..planning.config import config_with_files
    from ..planning.plan import summary
    from ..yamlfile import loads
    from .provenance import current_image

    parser = argparse.ArgumentParser(prog="python -m virtrepro.measurement.estimate", description=main.__doc__)
    parser.add_argument("--estimate", action="store_true", required=True, help="estimate the wall time (the only action)")
    parser.add_argument("--configfile", action="append",
                        help="a configuration file merged over config/config.yaml as Snakemake merges its --configfile")
    parser.add_argument("--config", nargs="*", default=[], metavar="KEY=VALUE",
                        help="override top-level keys as Snakemake's --config does (values read as YAML)")
    args = parser.parse_args(argv)
    overrides = {}
    for item in args.config:
        key, _, value = item.partition("=")
        overrides[key] = loads(value, f"--config {key}")
    config = config_with_files(args.configfile or [], overrides)
    print(summary(config, config.get("data_dir", "data"), current_image()))
    return 0


if __name__ == "__main__":
    from ..cli import run as run_cli

    run_cli(main)
