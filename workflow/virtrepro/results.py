"""From raw logs to one tidy table per testbed.

:func:`load` is the one way notebooks and rules get numbers: it parses every
complete raw log of a testbed with the one parser of its tool, and keeps the
result as ``<data>/tables/<testbed>.parquet`` with a manifest of the logs it
was built from (the workflow's table rule, :func:`write_table`, also writes a
``.csv`` copy for people). The table is a cache: when any log or sidecar
changes, appears or disappears, or the parsers change, it is rebuilt, each
log parsed once and each unchanged variant's rows kept as a block. A log
that does not parse stops the build with the parser's error, which names the
file; it never becomes a number. So does a log whose sidecar is missing, cannot
be read, contradicts itself (``complete`` with an exit status other than 0) or
describes another run than the log's place (:func:`check_place`), a log that
cannot be read or is a symbolic link, a log whose bytes are not the ones its
sidecar recorded (an edited log, or one copied over another repetition's) or
whose sidecar records none (:func:`rawlog.read_checked`), and two repetitions
that are one run (:func:`refuse_copies`).

The table is narrow: one row per measured value, in the :data:`COLUMNS` every row has. What
differs between benchmarks is kept as typed JSON objects: ``parameters`` (the variant's
parameters as the sidecar records them: 64, "64m", true), ``labels`` (the record's own fields:
threads, file_size_kb, ...) and ``stopping`` (its variant's repetition facts, the same on every
row of the variant and platform). :func:`view` widens one benchmark's rows into typed columns
for the notebooks and the claims.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import math
import os
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from . import adaptive, datalayout, machines, rawlog
from .benchmarks import BENCHMARKS, key_spells
from .errors import VirtreproError
from .parsers import ParseError
from .sidecar import Sidecar

# Bump when a parser or the table layout changes: every cached table is rebuilt.
TABLE_FORMAT = 12  # 12: every log checked against its sidecar's digest (a table cached without that check is rebuilt)

COLUMNS = [
    "testbed",
    "platform",
    "benchmark",
    "variant",  # the variant's key: the directory name of its raw logs
    "parameters",  # JSON object: the variant's parameters, typed as the sidecar records them
    "labels",  # JSON object: the record's own fields beside metric, unit and value (threads, file_size_kb...)
    "repetition",
    "part",  # which part of the run order A B C D D C B A it was measured in (none in older logs)
    "scale",  # quick, paper: what the numbers can carry (notebook.scale_note)
    "metric",
    "unit",
    "value",
    "source_log",
    "regime",  # where it was measured (virtrepro.regimes); none for a record that is no disk or memory number
    "stopping",  # JSON object: its variant's STOPPING facts on this platform (stopping())
]
# every column's type, whatever its rows hold (text: pandas' string type, missing as NaN)
DTYPES = {column: "str" for column in COLUMNS} | {"repetition": "int64", "part": "Int64", "value": "float64"}
# the JSON columns, widened by view()
JSON_COLUMNS = ("parameters", "labels", "stopping")
# per variant and platform (every row of it alike): its repetition rule (virtrepro.adaptive; "fixed"
# for a count), its number of complete logs, why it stopped ("width reached", "cap reached",
# "continue": neither yet; "fixed count") and the widest relative half-width of the t-interval of
# its deciding metrics (none for a fixed count)
STOPPING = ("repetition_rule", "n_repetitions", "stop_reason", "rel_half_width")
# a parameter's column in view(): param_<name>, never confused with a label of the same name
# (sysbench_cpu's parameter threads "all" and its label threads 2)
PARAMETER_PREFIX = "param_"


# a final log without a sidecar that says it is complete (raised by rawlog)
IncompleteLogError = rawlog.IncompleteLogError


class MisplacedLogError(rawlog.RawLogError):
    """A log's sidecar describes another run than the log's place (testbed, platform, benchmark,
    variant and its parameters, repetition): a log copied or moved from elsewhere."""


class CopiedLogError(rawlog.RawLogError):
    """Two repetitions of one variant and platform that are one run: the same log, and sidecars
    that say the run started at the same moment (a log and its sidecar copied, then renumbered)."""


class TableError(VirtreproError):
    """A cached table cannot be read or lacks a column (damaged, or written by another version)."""


def raw_logs(data_dir: str | Path, testbed: str) -> list[Path]:
    """Every final raw log of a testbed (failed and partial logs are not), sorted."""
    root = f"{datalayout.testbed_dir(data_dir, testbed)}"
    return [Path(f"{root}/{where}/{entry.name}") for where, entry in _repetition_files(root) if _is_log(entry.name)]


class NoRawLogsError(TableError):
    """A testbed without one complete raw log: a misspelt name, or no measurement of it completed. Nothing
    is built, drawn or written for it (:func:`require_raw_logs`)."""


def has_raw_logs(data_dir: str | Path, testbed: str) -> bool:
    """Whether ``testbed`` has a complete raw log under ``<data_dir>/raw/<testbed>/`` (stops at the first)."""
    return any(_is_log(entry.name) for _, entry in _repetition_files(f"{datalayout.testbed_dir(data_dir, testbed)}"))


def testbeds_with_raw_logs(data_dir: str | Path) -> list[str]:
    """The testbeds of ``data_dir`` that have data: the directories under ``<data_dir>/raw/`` with a complete log."""
    return [name for name in _subdirectories(f"{datalayout.raw_dir(data_dir)}") if has_raw_logs(data_dir, name)]


def require_raw_logs(data_dir: str | Path, testbed: str) -> None:
    """The one check of every command that reads a testbed's data (:func:`load`, :func:`write_table`, and
    through them the table and claims rules, the notebooks and ``python -m virtrepro.figures``): a
    testbed without a complete raw log stops it with :class:`NoRawLogsError`, naming the testbeds that
    have data, before anything is written under ``tables/`` or ``figures/``. A table, its claims or a
    figure of no runs at all would only hide a typo, or measurements that all failed or were skipped."""
    if not has_raw_logs(data_dir, testbed):
        others = testbeds_with_raw_logs(data_dir)
        raw = datalayout.raw_dir(data_dir)
        raise NoRawLogsError(
            f"testbed {testbed!r} has no raw logs under {raw}/ (testbeds with data there: "
            f"{', '.join(others) if others else 'none'}): a misspelt name, or none of its measurements completed")


_is_log = datalayout.is_log_name


def _repetition_files(root: str):
    """``(platform/benchmark/variant, entry)`` of every ``rep-*`` file under a testbed's ``root``, in
    sorted order, listed with ``os.scandir`` (no path object per file). A final log that is a
    symbolic link is refused (:func:`rawlog.linked`)."""
    for platform in _subdirectories(root):
        for benchmark in _subdirectories(f"{root}/{platform}"):
            for variant in _subdirectories(f"{root}/{platform}/{benchmark}"):
                where = f"{platform}/{benchmark}/{variant}"
                with os.scandir(f"{root}/{where}") as entries:
                    files = sorted((e for e in entries if datalayout.is_repetition_file(e.name)), key=lambda e: e.name)
                for entry in files:
                    if entry.is_symlink() and _is_log(entry.name):  # free: the directory listing says so
                        raise rawlog.linked(f"{root}/{where}/{entry.name}")
                    yield where, entry


def parse_log(log: Path, data_dir: str | Path) -> list[dict]:
    """Rows of one raw log, with the run's context from its path and sidecar, which must agree, and
    its bytes the ones the sidecar recorded (read once: :func:`rawlog.read_checked`).
    Each row also holds the sidecar's ``repetition_rule`` (a dict or None) until :func:`stopping`
    replaces it with the variant's facts."""
    log = Path(log)
    relative = log.relative_to(Path(data_dir))
    where = datalayout.place(relative)
    run = rawlog.complete_record(log)
    if run is None:  # listed, then gone
        raise IncompleteLogError(str(relative), "raw log disappeared while the table was built")
    check_place(relative, run)
    if where.benchmark not in BENCHMARKS:
        raise ParseError(str(relative), f"unknown benchmark {where.benchmark!r}")
    bench = BENCHMARKS[where.benchmark]
    sidecar = run.to_json()  # the whole record, for the benchmark's and the machines' own facts
    records = bench.parse(rawlog.read_checked(log, sidecar), str(relative), run.parameters)
    context = {
        "testbed": where.testbed,
        "platform": where.platform,
        "benchmark": where.benchmark,
        "variant": where.variant,
        "parameters": _json(run.parameters, str(relative)),
        "repetition": where.repetition,
        "part": run.part,
        "scale": run.get("scale"),
        "source_log": str(relative),
        "repetition_rule": run.get("repetition_rule"),
        "machine": machines.identity(sidecar),  # not a column: the manifest's variant_machines (_build)
    }
    rows = []
    for record in records:
        labels = {key: value for key, value in record.items() if key not in ("metric", "unit", "value")}
        rows.append({**context, "labels": _json(labels, str(relative)), "metric": record["metric"],
                     "unit": record.get("unit"), "value": record.get("value"),
                     "regime": bench.regime(run.parameters, record, sidecar) or None})
    return rows


def _plain(value):
    """A JSON value: a numpy scalar as its Python value, NaN as null."""
    if hasattr(value, "item") and not isinstance(value, (list, dict, str)):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _json(fields: dict, source: str) -> str:
    """``fields`` as a JSON object, keys sorted, without the ones that have no value."""
    plain = {key: _plain(value) for key, value in fields.items()}
    try:
        return json.dumps({key: value for key, value in sorted(plain.items()) if value is not None})
    except (TypeError, ValueError) as error:
        raise ParseError(source, f"a field is no JSON value ({error})") from None


def check_place(relative: Path, sidecar: Sidecar | dict) -> None:
    """Refuse a log whose sidecar describes another run than its place ``raw/<testbed>/<platform>/
    <benchmark>/<variant>/rep-<k>.log`` says: each of those, and the variant's parameters
    (the variant's key spells them), must agree."""
    where = datalayout.place(relative)
    ran_on = sidecar.get("platform")
    expected = {
        "testbed": where.testbed,
        "platform": where.platform,
        "benchmark": where.benchmark,
        "variant": where.variant,
        "repetition": where.repetition,
        "log": where.name,
    }
    found = {**{key: sidecar.get(key) for key in expected},
             "platform": ran_on.get("name") if isinstance(ran_on, dict) else ran_on}
    wrong = [f"{key} {found[key]!r}" for key in expected if found[key] != expected[key]]
    parameters = sidecar.get("parameters")
    if not isinstance(parameters, dict) or not key_spells(where.variant, parameters):
        wrong.append(f"parameters {parameters!r}")
    if wrong:
        raise MisplacedLogError(str(relative), f"the sidecar describes another run ({', '.join(wrong)}) than "
                                               f"the log's place: copied or moved from elsewhere?")


def refuse_copies(data_dir: Path, names: list[str], digest_of) -> None:
    """Refuse two repetitions of one variant and platform that are one run: logs of the same bytes
    (``digest_of(name)``: the sha256 of the log at ``name``, relative to ``data_dir``) whose sidecars
    say they started at the same moment (``started_utc``): a log copied with its sidecar and
    renumbered. The same bytes alone are not refused: separate runs can print the same log (NPB
    prints its time to 10 ms; four pairs of repetitions of the reference data do). A log copied over
    another repetition with that one's sidecar kept is :func:`rawlog.check_digest`'s to refuse.
    Only the sidecars of logs whose bytes coincide are read."""
    same: dict[tuple[str, str], list[str]] = {}
    for name in names:
        same.setdefault((name.rpartition("/")[0], digest_of(name)), []).append(name)
    for (_, digest), group in same.items():
        if len(group) < 2:
            continue
        started: dict[object, str] = {}
        for name in group:
            at = rawlog.read_record(data_dir / name).get("started_utc")
            first = started.setdefault(at, name)
            if first != name:
                raise CopiedLogError(name, f"the same log as {first} (sha256 {digest[:16]}) and a sidecar that "
                                           f"says the same run (started_utc {at!r}): two repetitions that are one "
                                           f"run; one was copied from the other: move the copy and its sidecar aside")


def stopping(logged: list[list[dict]]) -> None:
    """Fill in each row's ``stopping`` (see :data:`STOPPING`) from all rows of its variant and
    platform: ``logged`` holds one list of rows per log. The rule is the one the latest repetition's
    sidecar recorded; the decision is :func:`adaptive.decide` on the parsed records, as the
    measurement made it."""
    variants: dict[tuple, list[list[dict]]] = {}
    for rows in logged:
        if rows:
            variants.setdefault((rows[0]["platform"], rows[0]["benchmark"], rows[0]["variant"]), []).append(rows)
    for group in variants.values():
        group.sort(key=lambda rows: rows[0]["repetition"])
        recorded = group[-1][0]["repetition_rule"]
        rule = adaptive.RepetitionRule.from_config(recorded) if isinstance(recorded, dict) else None
        if rule is None:
            facts = {"repetition_rule": "fixed", "stop_reason": adaptive.FIXED, "rel_half_width": None}
        else:
            try:
                decision = adaptive.decide(rule, group)
            except ValueError as error:
                raise ParseError(group[-1][0]["source_log"], str(error)) from None
            facts = {"repetition_rule": rule.label(), "stop_reason": decision.reason,
                     "rel_half_width": decision.rel_half_width}
        facts = _json({**facts, "n_repetitions": len(group)}, group[-1][0]["source_log"])
        for rows in group:
            for row in rows:
                del row["repetition_rule"]
                row["stopping"] = facts


def build_table(data_dir: str | Path, testbed: str, previous: pd.DataFrame | None = None,
                reuse: set[str] = frozenset(), logs: list[str | Path] | None = None) -> pd.DataFrame:
    """The table of every raw log of ``testbed``. ``previous`` (a table) and ``reuse`` (logs of it
    whose content and sidecar are unchanged): those logs' rows are taken from ``previous``, not
    parsed again; each variant with a new, changed or removed log has its stopping facts made anew."""
    return _build(Path(data_dir), testbed, previous, reuse, logs)[0]


_variant_of = datalayout.variant_of


def _row_ranges(frame: pd.DataFrame) -> dict[str, list[int]]:
    """Where each variant's rows are in a table sorted by variant: ``platform/benchmark/variant``
    -> [first row, row after its last]."""
    if not len(frame):
        return {}
    keys = (frame["platform"].astype(str) + "/" + frame["benchmark"].astype(str) + "/"
            + frame["variant"].astype(str)).to_numpy()
    change = [0, *(i + 1 for i in (keys[1:] != keys[:-1]).nonzero()[0]), len(keys)]
    return {keys[a]: [int(a), int(b)] for a, b in zip(change, change[1:])}


def _build(data_dir: Path, testbed: str, previous: pd.DataFrame | None, reuse: set[str], logs: list[str | Path] | None,
           names: list[str] | None = None, before: set[str] | None = None,
           ranges: dict[str, list[int]] | None = None, machines_before: dict | None = None,
           machines_found: dict | None = None,
           checksums: Checksums | None = None) -> tuple[pd.DataFrame, dict[str, list[int]]]:
    """:func:`build_table`, and where each variant's rows are in it (:func:`_row_ranges`).

    ``machines_found`` (when given) is filled with each variant's machines (``platform/benchmark/
    variant`` -> the distinct :func:`machines.identity` of its logs): a kept variant's from
    ``machines_before`` (the previous manifest's), every other variant's from its sidecars.

    A table is sorted by platform, benchmark, variant and repetition, so each variant's rows are
    one block. A variant none of whose logs is new, changed or gone keeps its block of ``previous``
    as it is (``ranges``: where the blocks are; ``before``: the logs ``previous`` was made of); only
    the blocks of the other variants are made anew, and the table is those blocks in order: one new
    log costs its variant's rows, not a sort of the whole table.

    Every log parsed is checked against its sidecar (:func:`parse_log`); then all logs, kept or
    parsed, for repetitions that are one run (:func:`refuse_copies`, with the logs' sha256 from
    ``checksums``, which the caller has taken already: one dictionary look-up a log)."""
    logs = raw_logs(data_dir, testbed) if logs is None else logs
    names = [str(Path(log).relative_to(data_dir)) for log in logs] if names is None else names
    current: dict[str, list[int]] = {}  # variant -> indexes of its logs
    for index, name in enumerate(names):
        current.setdefault(_variant_of(name), []).append(index)
    incremental = previous is not None and len(previous) and bool(reuse)
    if incremental:
        ranges = _row_ranges(previous) if ranges is None else ranges
        if before is None:
            before = set(previous["source_log"].unique())
        had: dict[str, set[str]] = {}
        for name in before:
            had.setdefault(_variant_of(name), set()).add(name)
        kept = {variant for variant, indexes in current.items()
                if variant in ranges and had.get(variant) == {names[i] for i in indexes}
                and all(names[i] in reuse for i in indexes)}
        # a variant kept at a fixed count whose rule record now names a rule (recorded_rule) is made anew
        kept -= {variant for variant in kept
                 if json.loads(previous["stopping"].iat[ranges[variant][0]]).get("stop_reason") == adaptive.FIXED
                 and recorded_rule(data_dir / names[current[variant][0]]) is not None}
    else:
        kept = set()
    logged = []
    for variant, indexes in current.items():
        if variant in kept:
            continue
        earlier: dict[str, list[dict]] = {}
        if incremental and variant in ranges and any(names[i] in reuse for i in indexes):
            a, b = ranges[variant]
            for row in previous.iloc[a:b].drop(columns=["stopping"]).to_dict("records"):
                if row["source_log"] in reuse:
                    row["part"] = None if pd.isna(row["part"]) else int(row["part"])
                    earlier.setdefault(row["source_log"], []).append({**row, "repetition_rule": None})
        for i in indexes:
            rows = earlier.get(names[i])
            if rows is not None and machines_found is not None:  # a kept log of a changed variant
                machine = machines.identity(rawlog.read_sidecar(Path(logs[i])))
                rows = [{**row, "machine": machine} for row in rows]
            logged.append(rows if rows is not None else parse_log(Path(logs[i]), data_dir))
    refuse_copies(data_dir, names, (checksums or Checksums(data_dir, testbed)).of_name)
    if machines_found is not None:
        for variant in kept:
            machines_found[variant] = list((machines_before or {}).get(variant) or [])
        for rows in logged:
            if rows:
                found = machines_found.setdefault(_variant_of(rows[0]["source_log"]), [])
                if rows[0].get("machine") is not None and rows[0]["machine"] not in found:
                    found.append(rows[0]["machine"])
    _latest_rules(logged, data_dir)
    stopping(logged)
    fresh = pd.DataFrame([row for rows in logged for row in rows], columns=COLUMNS).astype(DTYPES)
    # a log's rows keep the parser's order (a stable sort)
    fresh = fresh.sort_values(["platform", "benchmark", "variant", "repetition"], kind="stable").reset_index(drop=True)
    if not kept:
        return fresh, _row_ranges(fresh)
    fresh_ranges = _row_ranges(fresh)
    pieces, new_ranges, at = [], {}, 0
    block = None  # the previous table's rows [a, b) that come next, joined while they follow each other
    for variant in sorted(current, key=lambda v: tuple(v.split("/"))):
        source, (a, b) = (previous, ranges[variant]) if variant in kept else (fresh, fresh_ranges[variant])
        new_ranges[variant] = [at, at + b - a]
        at += b - a
        if source is previous and block is not None and block[1] == a:
            block[1] = b
            continue
        if block is not None:
            pieces.append(previous.iloc[block[0]:block[1]])
            block = None
        if source is previous:
            block = [a, b]
        else:
            pieces.append(fresh.iloc[a:b])
    if block is not None:
        pieces.append(previous.iloc[block[0]:block[1]])
    frame = pd.concat([piece[COLUMNS] for piece in pieces], ignore_index=True)
    return frame, new_ranges


def _latest_rules(logged: list[list[dict]], data_dir: Path) -> None:
    """Each variant's latest log decides its repetition rule (:func:`stopping`): where that log's
    rows came from an earlier table, its sidecar is read for it."""
    latest: dict[tuple, list[dict]] = {}
    for rows in logged:
        if rows:
            key = (rows[0]["platform"], rows[0]["benchmark"], rows[0]["variant"])
            if key not in latest or rows[0]["repetition"] > latest[key][0]["repetition"]:
                latest[key] = rows
    for rows in latest.values():
        if rows[0]["repetition_rule"] is None:
            rule = rawlog.read_record(data_dir / rows[0]["source_log"]).get("repetition_rule")
            for row in rows:
                row["repetition_rule"] = rule
        if rows[0]["repetition_rule"] is None:  # a fixed count, unless a rule given later decided it
            rule = recorded_rule(data_dir / rows[0]["source_log"])
            for row in rows:
                row["repetition_rule"] = rule


def recorded_rule(log: Path) -> dict | None:
    """The repetition rule of ``log``'s variant as its rule record says (a dict), or None.

    A rule given to a variant measured at a fixed count decides with the logs that are there: when
    they already meet it, nothing new is measured and the logs' sidecars still say no rule, so the
    measurement records the rule in the variant's rule record (:func:`datalayout.rule_record_path`,
    committed with the logs: the table is made of the raw data alone, never of the git-ignored
    job markers). A record that cannot be read is a RawLogError naming it."""
    path = datalayout.rule_record_path(Path(log).parent)
    try:
        facts = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        raise rawlog.RawLogError(str(path), f"rule record cannot be read: {error}") from None
    rule = facts.get("repetition_rule") if isinstance(facts, dict) else None
    if not isinstance(rule, dict):
        raise rawlog.RawLogError(str(path), "rule record names no repetition_rule object")
    return rule


# ---------------------------------------------------------------------------
# One benchmark's rows, widened (for the notebooks and the claims)
# ---------------------------------------------------------------------------


def _typed(values: pd.Series) -> pd.Series:
    """One widened field: booleans as ``boolean``, whole numbers as ``Int64``, other numbers as
    ``float64``, text as text (missing values stay missing). A field that holds a number in one
    variant and a word in another (sysbench_cpu's threads: 1, "all") keeps each value's own type."""
    present = [v for v in values if v is not None]
    if not present:
        return values.astype(object)
    if all(isinstance(v, bool) for v in present):
        return values.astype("boolean")
    if all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return values.astype("Int64")
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return values.astype("float64")
    if all(isinstance(v, str) for v in present):
        return values.astype("str").where(values.notna())
    return values.astype(object)


def _widened(column: pd.Series, names=lambda key: key) -> pd.DataFrame:
    """A JSON column as one typed column per key (named ``names(key)``), on the column's index."""
    objects = [json.loads(text) for text in column]
    keys = sorted({key for obj in objects for key in obj})
    return pd.DataFrame({names(key): _typed(pd.Series([obj.get(key) for obj in objects], index=column.index, dtype=object))
                         for key in keys}, index=column.index)


def declared_measures(rows: pd.DataFrame) -> pd.Series:
    """Where the paper measured each row's number (its benchmark's declared ``measures``, as text),
    beside the rows that have a ``regime``; missing elsewhere and for a benchmark no declaration has."""
    declared = rows["benchmark"].map(lambda name: BENCHMARKS[name].measures if name in BENCHMARKS else None)
    return declared.astype("str").where(declared.notna() & rows["regime"].notna()).rename("measures")


def view(table: pd.DataFrame, benchmark: str | list[str], metric: str | list[str] | None = None) -> pd.DataFrame:
    """The rows of ``benchmark`` (a name, or a list of names whose parameters go together such as
    NPB's), widened: the table's columns but the JSON ones, then the variant's :data:`STOPPING`
    facts, ``measures`` (where the paper measured it: the benchmark's declaration, beside each row
    that has a ``regime``), each parameter as ``param_<name>`` and each label as ``<name>``
    (``label_<name>`` for a label named like a column before it: NPB's own ``benchmark``), each a
    typed column (:func:`_typed`). The rows keep the table's index. A benchmark with no rows gives
    no rows; a name that is neither a benchmark nor in the table is a ``ValueError`` (a misspelt
    name never shows as "not measured"). ``metric``: only the rows of that metric (or those metrics)."""
    names = [benchmark] if isinstance(benchmark, str) else list(benchmark)
    unknown = [name for name in names if name not in BENCHMARKS and name not in set(table["benchmark"])]
    if unknown:
        raise ValueError(f"no benchmark {', '.join(map(repr, unknown))} (known: {', '.join(BENCHMARKS)})")
    rows = table[table["benchmark"].isin(names)]
    if metric is not None:
        rows = rows[rows["metric"].isin([metric] if isinstance(metric, str) else list(metric))]
    fixed = rows.drop(columns=[c for c in JSON_COLUMNS if c in rows.columns])
    stopping_facts = _widened(rows["stopping"]).reindex(columns=list(STOPPING))
    measures = declared_measures(rows)
    parameters = _widened(rows["parameters"], lambda key: PARAMETER_PREFIX + key)
    taken = set(fixed.columns) | set(STOPPING) | {"measures"} | set(parameters.columns)
    labels = _widened(rows["labels"], lambda key: f"label_{key}" if key in taken else key)
    return pd.concat([fixed, stopping_facts, measures, parameters, labels], axis=1)


class Checksums:
    """The sha256 of a testbed's raw logs and sidecars, each hashed once: remembered with the file's
    size, times and inode in ``<data>/tables/.cache/<testbed>.files.tsv`` (not committed: the
    times are this machine's), and hashed again only when one of those changed. Complete raw logs
    are never rewritten and sidecars are replaced whole (a new inode), so an unchanged stamp is an
    unchanged file; a file rewritten in place by hand changes its times and is hashed again.

    :meth:`logs` lists the testbed's logs with ``os.scandir`` and takes every file's stamp as it
    goes (one ``stat`` each, no path objects per file), so that at 50,000 logs the check of what
    changed costs little more than the system calls themselves."""

    def __init__(self, data_dir: str | Path, testbed: str):
        self.data_dir = Path(data_dir)
        self.testbed = testbed
        self.path = datalayout.table_cache_path(self.data_dir, testbed, "files.tsv")
        self.known = self._read()
        self.seen: dict[str, tuple[str, str]] = {}  # relative path -> (stamp, sha256)
        self.stamps: dict[str, str] = {}  # taken by logs(): relative path -> "size<tab>mtime<tab>ctime<tab>inode"
        self._listed: list[str] | None = None  # what logs() returned, and its names relative to data_dir
        self._names: list[str] = []

    def logs(self) -> list[str]:
        """Every final raw log of the testbed, as :func:`raw_logs` lists them (the same order, as
        text rather than path objects: 50,000 of those cost a second), with the stamps of the logs and
        their sidecars taken on the way."""
        root = f"{datalayout.testbed_dir(self.data_dir, self.testbed)}"
        found, names = [], []
        for where, entry in _repetition_files(root):
            try:
                stat = entry.stat()
            except FileNotFoundError:
                continue
            name = datalayout.relative_log(self.testbed, where, entry.name)
            self.stamps[name] = f"{stat.st_size}\t{stat.st_mtime_ns}\t{stat.st_ctime_ns}\t{stat.st_ino}"
            if _is_log(entry.name):
                found.append(f"{root}/{where}/{entry.name}")
                names.append(name)
        self._listed, self._names = found, names
        return found

    def names(self, logs: list[Path]) -> list[str]:
        """Each log's path relative to the data directory (without path arithmetic for what
        :meth:`logs` listed)."""
        if logs is self._listed:
            return self._names
        return [str(Path(log).relative_to(self.data_dir)) for log in logs]

    def of(self, path: Path) -> str | None:
        """The file's sha256 (hex), or None when it is not there."""
        text, base = str(path), f"{self.data_dir}{os.sep}"
        return self.of_name(text[len(base):] if text.startswith(base) else str(path.relative_to(self.data_dir)))

    def of_name(self, relative: str) -> str | None:
        """:meth:`of` the file at ``relative`` (to the data directory)."""
        if relative in self.seen:  # asked before in this build
            return self.seen[relative][1]
        stamp = self.stamps.pop(relative, None)
        if stamp is None:
            try:
                stat = os.stat(self.data_dir / relative)
            except FileNotFoundError:
                return None
            stamp = f"{stat.st_size}\t{stat.st_mtime_ns}\t{stat.st_ctime_ns}\t{stat.st_ino}"
        entry = self.known.get(relative)
        digest = (entry[1] if entry and entry[0] == stamp
                  else hashlib.sha256((self.data_dir / relative).read_bytes()).hexdigest())
        self.seen[relative] = (stamp, digest)
        return digest

    HEADER = "virtrepro file checksums 1: path, size, mtime_ns, ctime_ns, inode, sha256\n"

    def _read(self) -> dict[str, tuple[str, str]]:
        """The remembered stamps (a tab-separated file: JSON takes half a second at 100,000 files);
        anything unreadable is forgotten (every file is hashed again)."""
        try:
            text = self.path.read_text()
        except (OSError, UnicodeDecodeError):
            return {}
        if not text.startswith(self.HEADER):
            return {}
        known = {}
        for line in text[len(self.HEADER):].splitlines():
            name, _, rest = line.partition("\t")
            stamp, _, digest = rest.rpartition("\t")
            if len(digest) != 64 or stamp.count("\t") != 3:
                return {}
            known[name] = (stamp, digest)
        return known

    def save(self) -> None:
        if self.seen != self.known:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            text = "".join(f"{name}\t{stamp}\t{digest}\n" for name, (stamp, digest) in self.seen.items())
            _replace(self.path, (self.HEADER + text).encode())


def _subdirectories(path: str) -> list[str]:
    """The names of the directories in ``path``, sorted (none if it is not there)."""
    try:
        with os.scandir(path) as entries:
            return sorted(entry.name for entry in entries if entry.is_dir())
    except (FileNotFoundError, NotADirectoryError):
        return []


def _replace(path: Path, data: bytes) -> None:
    """Write ``path`` whole or not at all (a reader sees the old file or the new one)."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    partial.write_bytes(data)
    os.replace(partial, path)


def log_checksums(data_dir: str | Path, testbed: str, checksums: Checksums | None = None,
                  logs: list[str | Path] | None = None) -> dict[str, str]:
    """Each raw log's checksum: of its content and its sidecar's, and of the table format (the
    parsers' version: :data:`TABLE_FORMAT`); the rows of a log whose checksum is unchanged are
    taken from the earlier table."""
    checksums = checksums or Checksums(data_dir, testbed)
    found = {}
    for name in checksums.names(raw_logs(data_dir, testbed) if logs is None else logs):
        parts = [checksums.of_name(name), checksums.of_name(_sidecar_name(name))]
        found[name] = hashlib.sha256(f"format={TABLE_FORMAT} {parts[0]} {parts[1]}".encode()).hexdigest()
    return found


_sidecar_name = datalayout.sidecar_name


def fingerprint(data_dir: str | Path, testbed: str, checksums: Checksums | None = None,
                logs: list[str | Path] | None = None, checksummed: dict[str, str] | None = None) -> str:
    """One checksum of all raw logs and sidecars of ``testbed`` (paths and contents) and the table
    format: a table whose manifest holds it is the table of these logs. It is made of the logs'
    :func:`log_checksums` (``checksummed``, when the caller has them)."""
    current = log_checksums(data_dir, testbed, checksums, logs) if checksummed is None else checksummed
    digest = hashlib.sha256(f"format={TABLE_FORMAT}".encode())
    for name, checksum in current.items():
        digest.update(f"{name}\0{checksum}\n".encode())
    return digest.hexdigest()


table_paths = datalayout.table_paths


@contextmanager
def _table_lock(data_dir: Path, testbed: str):
    """One writer of a testbed's table at a time (hosts measured at once may finish together)."""
    lock = datalayout.table_cache_path(data_dir, testbed, "lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _previous(paths: dict[str, Path]) -> tuple[pd.DataFrame | None, dict]:
    """The table written before and its manifest, if it is of this format, readable and the table the
    manifest was written with (its ``parquet_sha256``): the manifest's row blocks (``variant_rows``)
    describe that file only, so a table replaced without its manifest (a run cut between the two
    writes, a file copied by hand) is built anew rather than cut at the wrong rows."""
    try:
        manifest = json.loads(paths["manifest"].read_text())
        if manifest.get("format") != TABLE_FORMAT or not isinstance(manifest.get("log_checksums"), dict):
            return None, {}
        data = paths["parquet"].read_bytes()
        if manifest.get("parquet_sha256") != hashlib.sha256(data).hexdigest():
            return None, {}
        return read_table(io.BytesIO(data), paths["parquet"]), manifest
    except (OSError, ValueError, TableError):
        return None, {}


def write_table(data_dir: str | Path, testbed: str, csv: bool = True, reparse: bool = False,
                checksums: Checksums | None = None, logs: list[str | Path] | None = None,
                known_fingerprint: str | None = None, checksummed: dict[str, str] | None = None) -> pd.DataFrame:
    """The table of every raw log of ``testbed``, written (Parquet, CSV unless ``csv=False``, and the
    manifest, each whole or not at all). Each log is parsed once: the rows of a log whose content,
    sidecar and table format are unchanged since the last table are taken from it, and the rows of
    a variant none of whose logs changed are taken as one block (``reparse``: every log is parsed
    again). The manifest says which table the CSV copy was written from (``csv_fingerprint``):
    :func:`load` keeps the Parquet table current and leaves the CSV to the workflow's table rule.
    ``known_fingerprint``, ``checksummed``: the logs' :func:`fingerprint` and :func:`log_checksums`,
    when the caller has them already (made from the same ``logs``)."""
    require_raw_logs(data_dir, testbed)
    data_dir = Path(data_dir)
    paths = table_paths(data_dir, testbed)
    with _table_lock(data_dir, testbed):
        checksums = checksums or Checksums(data_dir, testbed)
        logs = checksums.logs() if logs is None else logs
        names = checksums.names(logs)
        current = log_checksums(data_dir, testbed, checksums, logs) if checksummed is None else checksummed
        previous, manifest_before = _previous(paths) if not reparse else (None, {})
        before = manifest_before.get("log_checksums", {})
        reuse = {name for name, checksum in current.items() if before.get(name) == checksum}
        ranges = manifest_before.get("variant_rows")
        found: dict[str, list[dict]] = {}
        frame, ranges = _build(data_dir, testbed, previous, reuse, logs, names, set(before),
                               ranges if isinstance(ranges, dict) else None,
                               manifest_before.get("variant_machines") or {}, found, checksums)
        require_one_machine(found, datalayout.testbed_dir(data_dir, testbed))
        paths["parquet"].parent.mkdir(parents=True, exist_ok=True)
        buffer = io.BytesIO()
        frame.to_parquet(buffer, index=False)
        _replace(paths["parquet"], buffer.getvalue())
        parquet_sha256 = hashlib.sha256(buffer.getvalue()).hexdigest()
        fingerprinted = known_fingerprint or fingerprint(data_dir, testbed, checksummed=current)
        if csv:
            _replace(paths["csv"], _csv(frame))
        manifest = {
            "testbed": testbed,
            "format": TABLE_FORMAT,
            "fingerprint": fingerprinted,
            "csv": csv,
            # the table the CSV copy was written from (it may be older than the Parquet table)
            "csv_fingerprint": fingerprinted if csv else manifest_before.get("csv_fingerprint"),
            "rows": len(frame),
            "parquet_sha256": parquet_sha256,  # the table these rows and blocks describe (_previous)
            "log_checksums": current,
            "variant_rows": ranges,  # platform/benchmark/variant -> [first row, row after its last]
            # platform/benchmark/variant -> the machines its logs were measured on (virtrepro.machines)
            "variant_machines": {variant: found[variant] for variant in sorted(found)},
        }
        _replace(paths["manifest"], _manifest_text(manifest).encode())
        checksums.save()
    return frame


class MixedMachinesError(TableError):
    """One benchmark's logs were measured on more than one machine (:mod:`virtrepro.machines`)."""


def require_one_machine(variant_machines: dict[str, list[dict]], raw: Path) -> None:
    """Refuse a table in which one benchmark's logs (any platform, any variant) come from more than
    one machine: its platforms' differences would be differences between machines."""
    by_benchmark: dict[str, list[dict]] = {}
    for variant, found in variant_machines.items():
        by_benchmark.setdefault(variant.split("/")[1], []).extend(found)
    for benchmark, found in sorted(by_benchmark.items()):
        distinct = machines.mixed(found)
        if distinct:
            raise MixedMachinesError(
                f"{raw}: the logs of {benchmark} were measured on {len(distinct)} machines ("
                + "; ".join(machines.describe(machine) for machine in distinct)
                + "): a platform's difference from native would be a difference between machines. Keep one "
                  "machine's logs of it (move the others out; git keeps them) and measure the rest there.")


def measured_on(testbed: str, data_dir: str | Path = "data") -> dict[str, list[str]]:
    """Each benchmark's machine in words (:func:`machines.describe`), from the table's manifest
    (:func:`load` first): benchmark -> the machines its logs name (one, or none when its sidecars
    do not say)."""
    try:
        manifest = json.loads(table_paths(Path(data_dir), testbed)["manifest"].read_text())
    except FileNotFoundError:  # no table written: no runs
        return {}
    found: dict[str, list[str]] = {}
    for variant, machines_of in (manifest.get("variant_machines") or {}).items():
        words = found.setdefault(variant.split("/")[1], [])
        for machine in machines_of:
            if machines.describe(machine) not in words:
                words.append(machines.describe(machine))
    return found


def _manifest_text(manifest: dict) -> str:
    """The manifest as JSON with one entry a line (a new log is one line in a diff), made with the
    C encoder line by line: ``json.dumps(indent=2)`` takes the pure-Python encoder, a second at 50,000 logs."""
    lines = []
    for key, value in manifest.items():
        if isinstance(value, dict) and value and all(isinstance(v, str) for v in value.values()):
            entries = json.dumps(value, separators=(",\n    ", ": "))[1:-1]  # the C encoder, an entry a line
            lines.append(f"  {json.dumps(key)}: {{\n    {entries}\n  }}")
        elif isinstance(value, dict) and value:
            entries = ",\n".join(f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in value.items())
            lines.append(f"  {json.dumps(key)}: {{\n{entries}\n  }}")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def _csv(frame: pd.DataFrame) -> bytes:
    """The table as CSV (a header line, then a row a line; quotes only where a value needs them)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    sink = pa.BufferOutputStream()
    pacsv.write_csv(pa.Table.from_pandas(frame, preserve_index=False), sink,
                    pacsv.WriteOptions(quoting_style="needed"))
    return sink.getvalue().to_pybytes()


def load(testbed: str, data_dir: str | Path = "data", rebuild: bool | None = None) -> pd.DataFrame:
    """The tidy table of ``testbed``, rebuilt from the raw logs when they changed (only the changed
    logs are parsed again: :func:`write_table`).

    ``rebuild=None`` rebuilds only when the cached table is missing or stale,
    True always rebuilds (parsing every log again), False never does (and fails if there is no table).
    It writes the Parquet table and its manifest, not the CSV copy (the workflow's table rule does:
    the manifest's ``csv_fingerprint`` says which table that copy is of). A testbed without raw logs
    is refused before anything is read or written (:func:`require_raw_logs`).
    """
    require_raw_logs(data_dir, testbed)
    if rebuild:
        return write_table(data_dir, testbed, reparse=True, csv=False)
    data_dir = Path(data_dir)
    paths = table_paths(data_dir, testbed)
    checksums = Checksums(data_dir, testbed)
    logs = checksums.logs()
    now = current = None
    if rebuild is None:
        try:
            manifest = json.loads(paths["manifest"].read_text())
            current = log_checksums(data_dir, testbed, checksums, logs)
            now = fingerprint(data_dir, testbed, checksummed=current)
            rebuild = not paths["parquet"].exists() or manifest.get("fingerprint") != now
            if not rebuild:
                checksums.save()  # (a rebuild saves them)
        except (OSError, ValueError):
            rebuild = True
    if rebuild:
        return write_table(data_dir, testbed, csv=False, checksums=checksums, logs=logs, known_fingerprint=now,
                           checksummed=current)
    return read_table(paths["parquet"])


def read_table(path, name: Path | None = None) -> pd.DataFrame:
    """A cached table, refused with the file named when it is damaged or lacks a column (a table of
    an older format, such as the wide one with a column per label, when :func:`load` is told not
    to rebuild it; otherwise its fingerprint, which includes :data:`TABLE_FORMAT`, is stale and
    :func:`load` rebuilds it)."""
    source, path = path, name or path  # the file, or its bytes already read (``name``: the file's name)
    remedy = f"delete it and its {datalayout.MANIFEST_SUFFIX} to rebuild it from the raw logs"
    try:
        frame = pd.read_parquet(source)
    except ValueError as error:  # pyarrow's ArrowInvalid; a missing file stays FileNotFoundError
        raise TableError(f"{path}: not a readable Parquet table ({error}); {remedy}") from None
    missing = [column for column in COLUMNS if column not in frame.columns]
    if missing:
        raise TableError(f"{path}: the table has no column {', '.join(map(repr, missing))} (damaged, or written "
                         f"by another version than this one's table format {TABLE_FORMAT}); {remedy}")
    return frame[COLUMNS]


def main(argv: list[str] | None = None) -> int:
    """Build the tidy table of a testbed from its raw logs, as the workflow's table rule does."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m virtrepro.results", description=main.__doc__)
    parser.add_argument("testbed", help=f"the testbed whose raw logs "
                                        f"({datalayout.testbed_dir('<data-dir>', '<testbed>')}/) to parse")
    parser.add_argument("--data-dir", default="data")
    args = parser.parse_args(argv)
    frame = write_table(args.data_dir, args.testbed)
    print(f"{len(frame)} records from {frame['source_log'].nunique()} logs: {table_paths(args.data_dir, args.testbed)['parquet']}")
    return 0


if __name__ == "__main__":
    from .cli import run as run_cli  # not "run": a module may have a function of that name

    run_cli(main)
