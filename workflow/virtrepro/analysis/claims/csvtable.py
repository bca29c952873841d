"""The verdicts as a table, ``data/tables/<testbed>.claims.csv`` (:func:`write_claims_table`), and
the command line that writes it (``python -m virtrepro.analysis.claims``, the workflow's claims_table job)."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from ... import datalayout, results
from .loading import CAUSES_PATH, load_causes, load_claims
from .verdicts import evaluate


# ---------------------------------------------------------------------------
# The verdicts as a table (data/tables/<testbed>.claims.csv)
# ---------------------------------------------------------------------------

TABLE_COLUMNS = [
    "claim_id", "paper", "paper_platform", "platform_measured", "stand_in", "benchmark", "metric", "variant",
    "n_platform", "n_baseline", "estimate", "ci_low", "ci_high", "ci_level", "ci_method", "threshold", "verdict", "reason",
    "suspect_faster_than_native",
]  # fmt: skip


def claims_table(verdicts: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """The verdict rows of :func:`evaluate` in the columns of ``<testbed>.claims.csv``: the platform
    measured is empty where nothing was (not measured, not testable); estimate and interval are the
    relative difference (positive = the platform is worse) as a fraction."""
    decided = ~verdicts["verdict"].isin(["not measured", "not testable here"])
    out = pd.DataFrame({
        "claim_id": verdicts["id"], "paper": verdicts["paper"], "paper_platform": verdicts["paper_platform"],
        "platform_measured": verdicts["platforms"].where(decided, ""), "stand_in": verdicts["stand_in"].where(decided, ""),
        "benchmark": verdicts["benchmark"], "metric": verdicts["metric"], "variant": verdicts["variant"],
        "n_platform": verdicts["n_platform"], "n_baseline": verdicts["n_baseline"], "estimate": verdicts["value"],
        "ci_low": verdicts["ci_low"], "ci_high": verdicts["ci_high"], "ci_level": level, "ci_method": verdicts["ci_method"],
        "threshold": verdicts["threshold"],
        "verdict": verdicts["verdict"], "reason": verdicts["note"],
        "suspect_faster_than_native": verdicts["suspect_faster_than_native"].fillna(False).astype(bool),
    })  # fmt: skip
    return out[TABLE_COLUMNS]


def write_claims_table(claims_path: str | Path, table: pd.DataFrame, out: str | Path, level: float = 0.95,
                       causes_path: str | Path = CAUSES_PATH, unavailable: dict[str, str] | None = None) -> pd.DataFrame:  # fmt: skip
    """Evaluate every claim of ``claims_path`` on ``table`` (causes of faster-than-native results from
    ``causes_path``; ``unavailable``: platform -> why the testbed could not run it, the table's run facts'
    ``unavailable_platforms``, :func:`virtrepro.results.run_facts`)
    and write :func:`claims_table` as CSV to ``out``: whole, and only once every claim is evaluated (an
    error, such as a :class:`ClaimsError`, leaves an earlier ``out`` as it was)."""
    verdicts = evaluate(load_claims(claims_path), table, level=level, causes=load_causes(causes_path),
                        unavailable=unavailable or {})
    frame = claims_table(verdicts, level=level)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.{os.getpid()}.partial")
    try:
        frame.to_csv(partial, index=False, float_format="%.6g")
        os.replace(partial, out)
    finally:
        partial.unlink(missing_ok=True)
    return frame


def main(argv: list[str] | None = None) -> int:
    """Write a testbed's verdicts, ``<data-dir>/tables/<testbed>.claims.csv`` (the workflow's claims_table
    job), from its table, and print how many claims got each verdict."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m virtrepro.analysis.claims", description=main.__doc__)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--testbed", required=True)
    parser.add_argument("--claims", required=True, help="the claims (data/reference/claims.yaml)")
    parser.add_argument("--causes", default=str(CAUSES_PATH), help="the causes' registry (faster_than_native.yaml)")
    args = parser.parse_args(argv)
    results.require_raw_logs(args.data_dir, args.testbed)  # no verdicts from a table of no runs (one left from before)
    table = results.read_table(results.table_paths(args.data_dir, args.testbed)["parquet"])
    # a platform the testbed could not run is "not measured" with the probe's reason, as the run facts beside
    # the table have it (results.facts: the table rule reads the probes, the analysis reads the facts)
    unavailable = results.run_facts(args.testbed, args.data_dir)["unavailable_platforms"]
    out = datalayout.claims_table_path(args.data_dir, args.testbed)
    frame = write_claims_table(args.claims, table, out, causes_path=args.causes, unavailable=unavailable)
    print(frame["verdict"].value_counts().to_string())
    return 0


if __name__ == "__main__":
    from ...cli import run as run_cli

    run_cli(main)
