"""Command line of one measurement job (what the Snakemake rules run): ``python -m virtrepro.measurement.job``.

The measurement itself is the :mod:`virtrepro.measurement` package; its entry points are named here
too, for the rules and for callers of this module.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from ..planning.config import VariantRounds
from .connections import reused_connections
from .instance import ensure_tools, host_facts, package_versions
from .markers import write_rounds_marker, write_rule_record
from .peers import with_addresses
from .provenance import MeasurementError, image_record, require_clean_tree
from .repetition import _spanned_hosts, built_path, measure
from .variant import measure_rounds, measure_variant, require_same_image, require_same_machine
from ..rawdata.rawlog import variant_records
from ..platforms import catalog as platform_catalog

__all__ = ["MeasurementError", "_spanned_hosts", "built_path", "ensure_tools", "host_facts",
           "image_record", "main", "measure", "measure_rounds", "measure_variant", "package_versions", "plan_entry", "require_clean_tree",
           "require_same_image", "require_same_machine", "reused_connections", "variant_records", "with_addresses",
           "write_rounds_marker", "write_rule_record"]


def _config_file(path: str) -> dict:
    """The configuration of ``--config-file`` (validated unless it is the one the workflow validated)."""
    from ..planning.config import config_from_json

    try:
        text = Path(path).read_text()
    except OSError as error:
        raise MeasurementError(f"--config-file {path}: {error.strerror or error}") from None
    return config_from_json(text, f"--config-file {path}")



def _measure_entry(args, config: dict) -> int:
    """Measure the job's plan entry (``--plan-entry``): the variant on all its platforms as the workflow
    planned it, on the host it chose, without planning the configuration again."""
    try:
        entry = json.loads(args.plan_entry)
    except ValueError as error:
        raise MeasurementError(f"--plan-entry: not JSON ({error})") from None
    if not isinstance(entry, dict):
        raise MeasurementError("--plan-entry: not a JSON object")
    job = VariantRounds.from_json(entry.get("rounds") or {})
    return _measure_job(job, config, args, "the plan entry", host=entry.get("host"))


def _measure_job(job: VariantRounds, config: dict, args, what: str, reps: list[int] | None = None,
                 host: str | None = None) -> int:
    """Measure ``job`` (``what``: the plan entry, or the variant the options name) once its marker is the
    one the caller expects (``--expect-marker``) and the tree is as the testbed requires."""
    if args.expect_marker and Path(args.expect_marker) != job.marker_path(args.data_dir):
        print(f"error: {what} has the marker {job.marker_path(args.data_dir)}, "
              f"not the expected {args.expect_marker}", file=sys.stderr)
        return 2
    require_clean_tree(config, job.testbed)
    owner = os.environ.get("VIRTREPRO_TESTBED_OWNER")
    measure_rounds(job, config, args.data_dir, owner_pid=int(owner) if owner else None, reps=reps, host=host)
    return 0



def plan_entry(job: VariantRounds, host: str | None) -> str:
    """A measurement job's ``--plan-entry``: every platform's VariantPlan of the variant, and the host
    (:func:`_measure_entry` reads it)."""
    return json.dumps({"rounds": job.to_json(), "host": host}, sort_keys=True)



def main(argv: list[str] | None = None) -> int:
    """Command line of one measurement job (what the Snakemake rule runs): one benchmark variant on
    its platforms, in rounds, every missing repetition."""
    import argparse

    from ..cli import count
    from ..planning.config import given_config, plan_rounds

    parser = argparse.ArgumentParser(prog="python -m virtrepro.measurement.job", description=main.__doc__)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--plan-entry", help="the job's plan entry as the workflow planned it (JSON: the variant on "
                                             "every platform, and the host); with --config-file, no other option "
                                             "is needed")
    parser.add_argument("--config-file", help="configuration as a JSON file (the workflow writes it)")
    parser.add_argument("--testbed")
    parser.add_argument("--platform", action="append",
                        help="a platform to measure the variant on (repeatable: in rounds, in the order given)")
    parser.add_argument("--benchmark")
    parser.add_argument("--variant")
    parser.add_argument("--rep", type=count(0), action="append",
                        help="measure only this repetition, in its round (repeatable; no marker is written)")
    parser.add_argument("--config", help="configuration as JSON (default: $VIRTREPRO_CONFIG)")
    parser.add_argument("--expect-marker", help="the marker path the caller expects (checked against the plan)")
    parser.add_argument("--host", help="which of the testbed's hosts measures (its name; default: the first)")
    args = parser.parse_args(argv)
    config = _config_file(args.config_file) if args.config_file else given_config(args.config)
    if config is None:
        parser.error("no configuration: pass --config-file or --config, or set VIRTREPRO_CONFIG")
    if args.plan_entry is not None:
        return _measure_entry(args, config)
    missing = [f"--{name}" for name in ("testbed", "platform", "benchmark", "variant") if getattr(args, name) is None]
    if missing:
        parser.error(f"the following arguments are required without --plan-entry: {', '.join(missing)}")
    configured = config["platforms"]
    allowed = [p for p in dict.fromkeys(args.platform) if p in configured or platform_catalog.alias_of(p) in configured]
    wanted = (args.testbed, args.benchmark, args.variant)
    where = f"{args.testbed}/{'+'.join(args.platform)}/{args.benchmark}/{args.variant}"
    matches = [job for job in plan_rounds(config, allowed) if (job.testbed, job.benchmark, job.variant.key) == wanted]
    if not matches or len(matches[0].plans) != len(set(args.platform)):
        print(f"error: the configuration plans no run {where}", file=sys.stderr)
        return 2
    job = matches[0]
    possible = set(range(max(plan.cap for plan in job.plans)))
    if args.rep and not set(args.rep) <= possible:
        print(f"error: {where} has repetitions 0..{max(possible)}, not {args.rep}", file=sys.stderr)
        return 2
    return _measure_job(job, config, args, where, reps=args.rep, host=args.host)


if __name__ == "__main__":
    from ..cli import run as run_cli  # not "run": a module may have a function of that name

    run_cli(main)
