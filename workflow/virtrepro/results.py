"""From raw logs to one tidy table per testbed.

:func:`load` is the one way notebooks and rules get numbers: it parses every
complete raw log of a testbed with the one parser of its tool, and keeps the
result as ``<data>/tables/<testbed>.parquet`` (and ``.csv``) with a manifest
of the logs it was built from. The table is a cache: when any log or sidecar
changes, appears or disappears, or the parsers change, it is rebuilt. A log
that does not parse stops the build with the parser's error, which names the
file; it never becomes a number. So does a log whose sidecar is missing, cannot
be read or describes another run than the log's place (:func:`check_place`),
and a log that cannot be read.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd

from . import adaptive, rawlog
from .benchmarks import BENCHMARKS, key_spells
from .errors import VirtreproError
from .parsers import ParseError

# Bump when a parser or the table layout changes: every cached table is rebuilt.
TABLE_FORMAT = 8

COLUMNS = [
    "testbed",
    "platform",
    "benchmark",
    "parameters",
    "repetition",
    "part",
    "scale",
    "metric",
    "unit",
    "value",
    "source_log",
    # per variant and platform (every row of it alike): its repetition rule (virtrepro.adaptive;
    # "fixed" for a count), its number of complete logs, why it stopped ("width reached", "cap
    # reached", "continue": neither yet; "fixed count") and the widest relative half-width of the
    # t-interval of its deciding metrics (NaN for a fixed count)
    "repetition_rule",
    "n_repetitions",
    "stop_reason",
    "rel_half_width",
]


# a final log without a sidecar that says it is complete (raised by rawlog)
IncompleteLogError = rawlog.IncompleteLogError


class MisplacedLogError(rawlog.RawLogError):
    """A log's sidecar describes another run than the log's place (testbed, platform, benchmark,
    variant and its parameters, repetition): a log copied or moved from elsewhere."""


class TableError(VirtreproError):
    """A cached table cannot be read or lacks a column (damaged, or written by another version)."""


def raw_logs(data_dir: str | Path, testbed: str) -> list[Path]:
    """Every final raw log of a testbed (failed and partial logs are not)."""
    root = Path(data_dir) / "raw" / testbed
    return sorted(p for p in root.glob("*/*/*/rep-*.log") if rawlog.LOG_NAME.match(p.name))


def parse_log(log: Path, data_dir: str | Path) -> list[dict]:
    """Records of one raw log, with the run's context from its path and sidecar, which must agree."""
    log = Path(log)
    relative = log.relative_to(Path(data_dir))
    _, testbed, platform, benchmark, variant, name = relative.parts
    sidecar = rawlog.complete_sidecar(log)
    if sidecar is None:  # listed, then gone
        raise IncompleteLogError(str(relative), "raw log disappeared while the table was built")
    check_place(relative, sidecar)
    if benchmark not in BENCHMARKS:
        raise ParseError(str(relative), f"unknown benchmark {benchmark!r}")
    bench = BENCHMARKS[benchmark]
    records = bench.parse_run(rawlog.read_log(log), str(relative), sidecar["parameters"])
    context = {
        "testbed": testbed,
        "platform": platform,
        "benchmark": benchmark,
        "parameters": variant,
        "repetition": int(rawlog.LOG_NAME.match(name).group(1)),
        # which part of the run order A B C D D C B A it was measured in (none in logs older than the parts)
        "part": (sidecar.get("order") or {}).get("part"),
        "scale": sidecar.get("scale"),  # quick, paper: what the numbers can carry (notebook.scale_note)
        "source_log": str(relative),
        "repetition_rule": sidecar.get("repetition_rule"),  # a dict until stopping() labels it
    }
    # the variant's parameters as columns of their own (param_<name>), as text: one column
    # may hold a number for one benchmark and a word ("all") for another
    params = {f"param_{name}": str(value) for name, value in sidecar["parameters"].items()}
    return [{**context, **params, **_labels(record), **_regime(bench, sidecar, record)} for record in records]


def _regime(bench, sidecar: dict, record: dict) -> dict:
    """``regime``: where the record was measured (virtrepro.regimes, from the run's parameters and the
    sidecar's facts), and ``measures``: where the paper measured it; none for other records."""
    regime = bench.regime(sidecar["parameters"], record, sidecar)
    return {"regime": regime, "measures": bench.measures} if regime else {}


def check_place(relative: Path, sidecar: dict) -> None:
    """Refuse a log whose sidecar describes another run than its place ``raw/<testbed>/<platform>/
    <benchmark>/<variant>/rep-<k>.log`` says: each of those, and the variant's parameters
    (the variant's key spells them), must agree."""
    _, testbed, platform, benchmark, variant, name = relative.parts
    ran_on = sidecar.get("platform")
    expected = {
        "testbed": testbed,
        "platform": platform,
        "benchmark": benchmark,
        "variant": variant,
        "repetition": int(rawlog.LOG_NAME.match(name).group(1)),
        "log": name,
    }
    found = {**{key: sidecar.get(key) for key in expected},
             "platform": ran_on.get("name") if isinstance(ran_on, dict) else ran_on}
    wrong = [f"{key} {found[key]!r}" for key in expected if found[key] != expected[key]]
    parameters = sidecar.get("parameters")
    if not isinstance(parameters, dict) or not key_spells(variant, parameters):
        wrong.append(f"parameters {parameters!r}")
    if wrong:
        raise MisplacedLogError(str(relative), f"the sidecar describes another run ({', '.join(wrong)}) than "
                                               f"the log's place: copied or moved from elsewhere?")


def _labels(record: dict) -> dict:
    """A record's fields, with a label named like a table column (NPB's own ``benchmark``: "EP")
    kept as ``label_<name>`` so that it never replaces the column."""
    return {(f"label_{key}" if key in COLUMNS and key not in ("metric", "unit", "value") else key): value
            for key, value in record.items()}


def stopping(logged: list[list[dict]]) -> None:
    """Fill in each row's repetition columns (see COLUMNS) from all rows of its variant and
    platform: ``logged`` holds one list of rows per log. The rule is the one the latest repetition's
    sidecar recorded; the decision is :func:`adaptive.decide` on the parsed records, as the
    measurement made it."""
    variants: dict[tuple, list[list[dict]]] = {}
    for rows in logged:
        if rows:
            variants.setdefault((rows[0]["platform"], rows[0]["benchmark"], rows[0]["parameters"]), []).append(rows)
    for group in variants.values():
        group.sort(key=lambda rows: rows[0]["repetition"])
        recorded = group[-1][0]["repetition_rule"]
        rule = adaptive.RepetitionRule.from_config(recorded) if isinstance(recorded, dict) else None
        if rule is None:
            columns = {"repetition_rule": "fixed", "stop_reason": adaptive.FIXED, "rel_half_width": float("nan")}
        else:
            try:
                decision = adaptive.decide(rule, group)
            except ValueError as error:
                raise ParseError(group[-1][0]["source_log"], str(error)) from None
            columns = {"repetition_rule": rule.label(), "stop_reason": decision.reason,
                       "rel_half_width": decision.rel_half_width}
        for rows in group:
            for row in rows:
                row.update(columns, n_repetitions=len(group))


def build_table(data_dir: str | Path, testbed: str) -> pd.DataFrame:
    logged = [parse_log(log, data_dir) for log in raw_logs(data_dir, testbed)]
    stopping(logged)
    frame = pd.DataFrame([row for rows in logged for row in rows])
    if frame.empty:
        return pd.DataFrame(columns=COLUMNS)
    labels = sorted(c for c in frame.columns if c not in COLUMNS)
    for column in labels:
        if column.startswith("param_"):
            continue  # labels keep their type beside the rows that lack them
        values = frame[column].dropna()
        if len(values) and all(isinstance(v, bool) for v in values):
            frame[column] = frame[column].astype("boolean")
        elif len(values) and all(isinstance(v, (int, float)) and float(v).is_integer() for v in values):
            frame[column] = frame[column].astype("Int64")
    return frame[COLUMNS + labels].sort_values(COLUMNS[:6]).reset_index(drop=True)


def fingerprint(data_dir: str | Path, testbed: str) -> str:
    digest = hashlib.sha256(f"format={TABLE_FORMAT}".encode())
    for log in raw_logs(data_dir, testbed):
        for path in (log, rawlog.sidecar_path(log)):
            digest.update(str(path.relative_to(data_dir)).encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest() if path.exists() else b"missing")
    return digest.hexdigest()


def table_paths(data_dir: str | Path, testbed: str) -> dict[str, Path]:
    base = Path(data_dir) / "tables" / testbed
    return {"parquet": base.with_suffix(".parquet"), "csv": base.with_suffix(".csv"), "manifest": base.with_suffix(".manifest.json")}


def write_table(data_dir: str | Path, testbed: str) -> pd.DataFrame:
    """Parse every raw log of ``testbed`` and write the table, CSV and manifest."""
    data_dir = Path(data_dir)
    frame = build_table(data_dir, testbed)
    paths = table_paths(data_dir, testbed)
    paths["parquet"].parent.mkdir(parents=True, exist_ok=True)
    frame.to_parquet(paths["parquet"], index=False)
    frame.to_csv(paths["csv"], index=False)
    manifest = {
        "testbed": testbed,
        "fingerprint": fingerprint(data_dir, testbed),
        "logs": [str(p.relative_to(data_dir)) for p in raw_logs(data_dir, testbed)],
        "rows": len(frame),
    }
    paths["manifest"].write_text(json.dumps(manifest, indent=2) + "\n")
    return frame


def load(testbed: str, data_dir: str | Path = "data", rebuild: bool | None = None) -> pd.DataFrame:
    """The tidy table of ``testbed``, rebuilt from the raw logs when they changed.

    ``rebuild=None`` rebuilds only when the cached table is missing or stale,
    True always rebuilds, False never does (and fails if there is no table).
    """
    data_dir = Path(data_dir)
    paths = table_paths(data_dir, testbed)
    if rebuild is None:
        try:
            manifest = json.loads(paths["manifest"].read_text())
            rebuild = not paths["parquet"].exists() or manifest.get("fingerprint") != fingerprint(data_dir, testbed)
        except (OSError, ValueError):
            rebuild = True
    if rebuild:
        return write_table(data_dir, testbed)
    return read_table(paths["parquet"])


def read_table(path: Path) -> pd.DataFrame:
    """A cached table, refused with the file named when it is damaged or lacks a column."""
    remedy = "delete it and its .manifest.json to rebuild it from the raw logs"
    try:
        frame = pd.read_parquet(path)
    except ValueError as error:  # pyarrow's ArrowInvalid; a missing file stays FileNotFoundError
        raise TableError(f"{path}: not a readable Parquet table ({error}); {remedy}") from None
    missing = [column for column in COLUMNS if column not in frame.columns]
    if missing:
        raise TableError(f"{path}: the table has no column {', '.join(map(repr, missing))}; {remedy}")
    return frame


def main(argv: list[str] | None = None) -> int:
    """Build the tidy table of a testbed from its raw logs, as the workflow's table rule does."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m virtrepro.results", description=main.__doc__)
    parser.add_argument("testbed", help="the testbed whose raw logs (<data-dir>/raw/<testbed>/) to parse")
    parser.add_argument("--data-dir", default="data")
    args = parser.parse_args(argv)
    raw = Path(args.data_dir) / "raw" / args.testbed
    if not raw.is_dir():
        raise TableError(f"{raw}: no such directory: testbed {args.testbed!r} has no raw logs under {args.data_dir}")
    frame = write_table(args.data_dir, args.testbed)
    print(f"{len(frame)} records from {frame['source_log'].nunique()} logs: {table_paths(args.data_dir, args.testbed)['parquet']}")
    return 0


if __name__ == "__main__":
    from .cli import run as run_cli  # not "run": a module may have a function of that name

    run_cli(main)
