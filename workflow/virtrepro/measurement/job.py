"""Command line of one measurement job (what the Snakemake rules run): ``python -m virtrepro.measurement.job``.

The measurement itself is the :mod:`virtrepro.measurement` package; its entry points are named here
too, for the rules and for callers of this module.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from ..planning.config import VariantPlan
from .connections import reused_connections
from .instance import ensure_tools, host_facts, package_versions
from .markers import write_marker, write_rule_record
from .peers import with_addresses
from .provenance import MeasurementError, image_record, require_clean_tree
from .repetition import _spanned_hosts, built_path, measure
from .variant import continue_by_rule, measure_variant, require_same_image, require_same_machine
from ..rawdata.rawlog import variant_records
from ..platforms import catalog as platform_catalog

__all__ = ["MeasurementError", "_spanned_hosts", "built_path", "continue_by_rule", "ensure_tools", "host_facts",
           "image_record", "main", "measure", "measure_variant", "package_versions", "plan_entry", "require_clean_tree",
           "require_same_image", "require_same_machine", "reused_connections", "variant_records", "with_addresses",
           "write_marker", "write_rule_record"]


def _config_file(path: str) -> dict:
    """The configuration of ``--config-file`` (validated unless it is the one the workflow validated)."""
    from ..planning.config import config_from_json

    try:
        text = Path(path).read_text()
    except OSError as error:
        raise MeasurementError(f"--config-file {path}: {error.strerror or error}") from None
    return config_from_json(text, f"--config-file {path}")



def _measure_entry(args, config: dict) -> int:
    """Measure the job's plan entry (``--plan-entry``): the variant part the workflow planned, on the
    host it chose, without planning the configuration again."""
    try:
        entry = json.loads(args.plan_entry)
    except ValueError as error:
        raise MeasurementError(f"--plan-entry: not JSON ({error})") from None
    if not isinstance(entry, dict):
        raise MeasurementError("--plan-entry: not a JSON object")
    variant = VariantPlan.from_json(entry.get("variant_plan"))
    if args.expect_marker and Path(args.expect_marker) != variant.marker_path(args.data_dir):
        print(f"error: the plan entry has the marker {variant.marker_path(args.data_dir)}, "
              f"not the expected {args.expect_marker}", file=sys.stderr)
        return 2
    require_clean_tree(config, variant.testbed)
    owner = os.environ.get("VIRTREPRO_TESTBED_OWNER")
    measure_variant(variant, config, args.data_dir, owner_pid=int(owner) if owner else None, host=entry.get("host"))
    return 0



def plan_entry(variant: VariantPlan, host: str | None) -> str:
    """A measurement job's ``--plan-entry`` (:func:`_measure_entry` reads it)."""
    return json.dumps({"variant_plan": variant.to_json(), "host": host}, sort_keys=True)



def main(argv: list[str] | None = None) -> int:
    """Command line of one measurement job (what the Snakemake rule runs): every missing
    repetition of one benchmark variant on one platform."""
    import argparse

    from ..cli import count
    from ..planning.config import given_config, plan_variants

    parser = argparse.ArgumentParser(prog="python -m virtrepro.measurement.job", description=main.__doc__)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--plan-entry", help="the job's plan entry as the workflow planned it (JSON: its variant, "
                                             "platform, part and host); with --config-file, no other option is needed")
    parser.add_argument("--config-file", help="configuration as a JSON file (the workflow writes it)")
    parser.add_argument("--testbed")
    parser.add_argument("--platform")
    parser.add_argument("--benchmark")
    parser.add_argument("--variant")
    parser.add_argument("--part", type=count(1),
                        help="measure this part of the repetitions (1 or 2: see VariantPlan) and write its marker; "
                             "default: every part, one after the other")
    parser.add_argument("--rep", type=count(0), action="append",
                        help="measure only this repetition (repeatable; no marker is written)")
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
    wanted = (args.testbed, args.platform, args.benchmark, args.variant)
    configured = config["platforms"]
    allowed = args.platform in configured or platform_catalog.alias_of(args.platform) in configured
    matches = [v for v in plan_variants(config, [args.platform] if allowed else [])
               if (v.testbed, v.platform, v.benchmark, v.variant.key) == wanted]
    if not matches:
        print(f"error: the configuration plans no run {'/'.join(wanted)}", file=sys.stderr)
        return 2
    possible = {rep for v in matches for rep in v.possible_numbers()}
    if args.rep and not set(args.rep) <= possible:
        print(f"error: {'/'.join(wanted)} has repetitions 0..{max(possible)}, not {args.rep}", file=sys.stderr)
        return 2
    if args.part is not None:
        matches = [v for v in matches if v.part == args.part]
        if not matches:
            print(f"error: {'/'.join(wanted)} has no part {args.part}", file=sys.stderr)
            return 2
    if args.expect_marker and Path(args.expect_marker) not in {v.marker_path(args.data_dir) for v in matches}:
        print(f"error: {'/'.join(wanted)} has the marker {matches[0].marker_path(args.data_dir)}, "
              f"not the expected {args.expect_marker}", file=sys.stderr)
        return 2
    require_clean_tree(config, args.testbed)
    owner = os.environ.get("VIRTREPRO_TESTBED_OWNER")
    for variant in matches:
        reps = [rep for rep in args.rep if rep in variant.possible_numbers()] if args.rep else None
        if reps == []:
            continue
        measure_variant(variant, config, args.data_dir, owner_pid=int(owner) if owner else None, reps=reps,
                        host=args.host)
    return 0


if __name__ == "__main__":
    from ..cli import run as run_cli  # not "run": a module may have a function of that name

    run_cli(main)
