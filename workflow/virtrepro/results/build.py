"""Building the tidy table: the one writer of ``<data>/tables/<testbed>.parquet`` (and its ``.csv``
copy, manifest and run facts), run by the workflow's table rule and ``python -m virtrepro.results``.

Each log is parsed once (:func:`virtrepro.results.records.parse_log`; with many logs to parse and
more than one core, in worker processes, whole variants at a time, their rows put together in the
order one process gives them: :func:`_variants_apart`, :func:`_parse_logs`): the rows of a log whose content,
sidecar and table format are unchanged since the last table are taken from it, and the rows of a
variant none of whose logs changed are taken as one block. A table sorted by platform, benchmark,
variant and repetition keeps each variant's rows together, so one new log costs its variant's rows,
not a sort of the whole table.
"""

from __future__ import annotations

import fcntl
import gc
import hashlib
import io
import json
import os
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..planning import adaptive
from .. import datalayout
from ..rawdata import machines, rawlog
from .facts import of_run, of_variant, previous as previous_facts, probes, text as facts_text
from .manifest import previous as previous_table, text as manifest_text
from .cache import Checksums, _replace, fingerprint, log_checksums
from .records import (COLUMNS, DTYPES, TABLE_FORMAT, TableError, _latest_rules, parse_log, raw_logs, recorded_rule,
                      refuse_copies, require_raw_logs, stopping)

_variant_of = datalayout.variant_of


@dataclass
class Built:
    """A table built (:func:`_build`), and what the manifest and the run facts need of it."""

    frame: pd.DataFrame
    ranges: dict[str, list[int]]  # platform/benchmark/variant -> [first row, row after its last]
    variants: dict[str, list[int]]  # platform/benchmark/variant -> the indexes of its logs
    kept: set[str] = field(default_factory=set)  # the variants whose block was kept from the previous table
    runs: dict[str, list[dict]] = field(default_factory=dict)  # every other variant -> its runs' facts


def build_table(data_dir: str | Path, testbed: str, previous: pd.DataFrame | None = None,
                reuse: set[str] = frozenset(), logs: list[str | Path] | None = None) -> pd.DataFrame:
    """The table of every raw log of ``testbed``. ``previous`` (a table) and ``reuse`` (logs of it
    whose content and sidecar are unchanged): those logs' rows are taken from ``previous``, not
    parsed again; each variant with a new, changed or removed log has its stopping facts made anew."""
    return _build(Path(data_dir), testbed, previous, reuse, logs).frame


def _row_ranges(frame: pd.DataFrame) -> dict[str, list[int]]:
    """Where each variant's rows are in a table sorted by variant: ``platform/benchmark/variant``
    -> [first row, row after its last]."""
    if not len(frame):
        return {}
    keys = (frame["platform"].astype(str) + "/" + frame["benchmark"].astype(str) + "/"
            + frame["variant"].astype(str)).to_numpy()
    change = [0, *(i + 1 for i in (keys[1:] != keys[:-1]).nonzero()[0]), len(keys)]
    return {keys[a]: [int(a), int(b)] for a, b in zip(change, change[1:])}


def _kept(data_dir: Path, previous: pd.DataFrame, ranges: dict[str, list[int]], before: set[str],
          current: dict[str, list[int]], names: list[str], reuse: set[str]) -> set[str]:
    """The variants whose block of ``previous`` stays as it is: none of their logs is new, changed or
    gone (``before``: the logs ``previous`` was made of), and their stopping facts cannot have changed."""
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
    # a variant's stopping facts are decided over all its platforms (paired by round with native:
    # adaptive.decide_rounds): a block is kept only where every platform's block of the variant is
    made = {variant.split("/", 1)[1] for variant in current if variant not in kept}
    return {variant for variant in kept if variant.split("/", 1)[1] not in made}


def _earlier_rows(previous: pd.DataFrame, block: list[int], reuse: set[str]) -> dict[str, list[dict]]:
    """The rows of ``previous``'s ``block`` [a, b) of the logs in ``reuse``, by log, without their
    stopping facts (their variant's are made anew)."""
    a, b = block
    earlier: dict[str, list[dict]] = {}
    for row in previous.iloc[a:b].drop(columns=["stopping"]).to_dict("records"):
        if row["source_log"] in reuse:
            row["part"] = None if pd.isna(row["part"]) else int(row["part"])
            row["round"] = None if pd.isna(row["round"]) else int(row["round"])
            earlier.setdefault(row["source_log"], []).append({**row, "repetition_rule": None})
    return earlier


def _logged(data_dir: Path, logs: list, names: list[str], current: dict[str, list[int]], kept: set[str],
            previous: pd.DataFrame | None, ranges: dict | None, reuse: set[str], collect: bool) -> list[list[dict]]:
    """Each log's rows, one list a log, of every variant not kept: parsed (:func:`_parse_logs`), or
    taken from ``previous`` where the log is unchanged. ``collect``: a kept log's rows get its run's
    facts and machine, read from its sidecar, as a parsed log's have them."""
    logged: list[list[dict] | None] = []
    to_parse: list[int] = []  # where in ``logged`` the rows of a log to parse go
    parse: list = []  # those logs
    for variant, indexes in current.items():
        if variant in kept:
            continue
        earlier: dict[str, list[dict]] = {}
        if previous is not None and ranges and variant in ranges and any(names[i] in reuse for i in indexes):
            earlier = _earlier_rows(previous, ranges[variant], reuse)
        for i in indexes:
            rows = earlier.get(names[i])
            if rows is not None and collect:  # a kept log of a changed variant
                record = rawlog.read_sidecar(Path(logs[i]))
                machine, run = machines.identity(record), of_run(record)
                rows = [{**row, "machine": machine, "run": run} for row in rows]
            if rows is None:
                to_parse.append(len(logged))
                parse.append(logs[i])
            logged.append(rows)
    for at, rows in zip(to_parse, _parse_logs(parse, data_dir)):
        logged[at] = rows
    return logged


# a build with at least this many logs to parse parses them in worker processes, one a core, in
# chunks of CHUNK logs in order (a few logs, an incremental build's, are parsed here: no pool)
PARALLEL_FROM = 1000
CHUNK = 400


def _cores() -> int:
    """The cores this process may use; 1 in a daemonic process (which may start none)."""
    if multiprocessing.current_process().daemon:
        return 1
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity on this system
        return os.cpu_count() or 1


def _parse_chunk(data_dir: Path, logs: list) -> tuple[list[list[dict]], int | None]:
    """The rows of ``logs`` (:func:`parse_log`), in a worker: up to the first log that does not parse,
    and where that one is in ``logs`` (None when every one did)."""
    parsed = []
    for at, log in enumerate(logs):
        try:
            parsed.append(parse_log(Path(log), data_dir))
        except Exception:  # the build's own process parses it again, for its error (see _parse_logs)
            return parsed, at
    return parsed, None


def _parse_logs(logs: list, data_dir: Path) -> list[list[dict]]:
    """Each log's rows (:func:`parse_log`), in the order of ``logs``: with many logs and more than one
    core, parsed in worker processes, chunk by chunk. A log a worker could not parse is parsed again
    here, so that the first log in order that does not parse stops the build with its own error,
    exactly as in one process (and nothing after it is used)."""
    workers = min(_cores(), -(-len(logs) // CHUNK))
    if len(logs) < PARALLEL_FROM or workers < 2:
        return [parse_log(Path(log), data_dir) for log in logs]
    chunks = [logs[a:a + CHUNK] for a in range(0, len(logs), CHUNK)]
    parsed: list[list[dict]] = []
    try:
        pool = ProcessPoolExecutor(workers)
    except (OSError, NotImplementedError):  # no processes to be had here: all in this one
        return [parse_log(Path(log), data_dir) for log in logs]
    try:
        for chunk, (rows, failed) in zip(chunks, pool.map(_parse_chunk, [data_dir] * len(chunks), chunks)):
            parsed += rows
            if failed is not None:  # raises that log's error (or, were it mended meanwhile, parses on)
                parsed += [parse_log(Path(log), data_dir) for log in chunk[failed:]]
    except BrokenProcessPool:  # a worker died (killed, out of memory): the rest here
        parsed += [parse_log(Path(log), data_dir) for log in logs[len(parsed):]]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return parsed


def _assemble(current: dict[str, list[int]], kept: set[str], previous: pd.DataFrame, ranges: dict,
              fresh: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, list[int]]]:
    """The table of the kept variants' blocks of ``previous`` and the others' of ``fresh``, in order,
    and where each variant's rows are in it."""
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
    return pd.concat([piece[COLUMNS] for piece in pieces], ignore_index=True), new_ranges


def _build(data_dir: Path, testbed: str, previous: pd.DataFrame | None, reuse: set[str], logs: list[str | Path] | None,
           names: list[str] | None = None, before: set[str] | None = None,
           ranges: dict[str, list[int]] | None = None, checksums: Checksums | None = None,
           collect: bool = False) -> Built:
    """:func:`build_table`, with where each variant's rows are in it (:func:`_row_ranges`), which
    variants' blocks of ``previous`` it kept (``ranges``: where the blocks are; ``before``: the logs
    ``previous`` was made of) and, with ``collect``, every other variant's runs' facts and machines
    (:func:`virtrepro.results.facts.of_run`, ``machine``: :func:`machines.identity`).

    Every log parsed is checked against its sidecar (:func:`parse_log`); then all logs, kept or
    parsed, for repetitions that are one run (:func:`refuse_copies`, with the logs' sha256 from
    ``checksums``, which the caller has taken already: one dictionary look-up a log)."""
    logs = raw_logs(data_dir, testbed) if logs is None else logs
    names = [str(Path(log).relative_to(data_dir)) for log in logs] if names is None else names
    current: dict[str, list[int]] = {}  # variant -> indexes of its logs
    for index, name in enumerate(names):
        current.setdefault(_variant_of(name), []).append(index)
    kept: set[str] = set()
    if previous is not None and len(previous) and bool(reuse):
        ranges = _row_ranges(previous) if ranges is None else ranges
        before = set(previous["source_log"].unique()) if before is None else before
        kept = _kept(data_dir, previous, ranges, before, current, names, reuse)
    parts = None
    if not kept and (previous is None or not reuse):  # every log is parsed: in worker processes, if many
        parts = _variants_apart(data_dir, logs, current, collect)
    if parts is not None:
        refuse_copies(data_dir, names, (checksums or Checksums(data_dir, testbed)).of_name)
        runs = {}
        for variant, run in (run for _, part_runs in parts for run in part_runs):
            runs.setdefault(variant, []).append(run)
        pieces = [frame for frame, _ in parts if len(frame)]
        fresh = pd.concat(pieces, ignore_index=True) if pieces else _frame([])
    else:
        logged = _logged(data_dir, logs, names, current, kept, previous, ranges, reuse, collect)
        refuse_copies(data_dir, _of_changed_variants(names, current, reuse if previous is not None else set()),
                      (checksums or Checksums(data_dir, testbed)).of_name)
        runs = dict(_runs(logged)) if collect else {}
        _latest_rules(logged, data_dir)
        stopping(logged)
        fresh = _frame(logged)
    # a log's rows keep the parser's order (a stable sort)
    fresh = fresh.sort_values(["platform", "benchmark", "variant", "repetition"], kind="stable").reset_index(drop=True)
    if not kept:
        return Built(fresh, _row_ranges(fresh), current, kept, runs)
    frame, new_ranges = _assemble(current, kept, previous, ranges, fresh)
    return Built(frame, new_ranges, current, kept, runs)


def _of_changed_variants(names: list[str], current: dict[str, list[int]], reuse: set[str]) -> list[str]:
    """The logs of every variant with a log not in ``reuse`` (new or changed since the earlier table):
    the logs :func:`refuse_copies` must look at, since the earlier build refused copies among the
    rest, whose bytes and sidecars are unchanged."""
    if not reuse:
        return names
    return [names[i] for indexes in current.values() if any(names[i] not in reuse for i in indexes) for i in indexes]


def _frame(logged: list[list[dict]]) -> pd.DataFrame:
    """The table's rows of ``logged`` (one list of rows a log), in that order, each column of its type."""
    return pd.DataFrame([row for rows in logged for row in rows], columns=COLUMNS).astype(DTYPES)


def _runs(logged: list[list[dict]]) -> list[tuple[str, list[dict]]]:
    """Each variant's runs' facts and machines (:func:`virtrepro.results.facts.of_run`), of the logs
    that have rows, in their order: (variant, its runs) in the order the variants come first."""
    runs: dict[str, list[dict]] = {}
    for rows in logged:
        if rows:
            runs.setdefault(_variant_of(rows[0]["source_log"]), []).append({**rows[0]["run"], "machine": rows[0]["machine"]})
    return list(runs.items())


def _variants_table(data_dir: Path, logs: list, collect: bool) -> tuple[pd.DataFrame, list[tuple[str, dict]]] | None:
    """In a worker: the rows of ``logs``, every log of some variants (parsed, each variant's stopping
    facts made as :func:`_build` makes them), unsorted, and with ``collect`` each variant's runs
    (variant, run) in order; None when anything is refused (the build's process builds the table
    itself then, for the error a build in one process gives)."""
    try:
        logged = [parse_log(Path(log), data_dir) for log in logs]
        runs = [(variant, run) for variant, of_variant in _runs(logged) for run in of_variant] if collect else []
        _latest_rules(logged, data_dir)
        stopping(logged)
        return _frame(logged), runs
    except Exception:
        return None


def _variants_apart(data_dir: Path, logs: list, current: dict[str, list[int]],
                    collect: bool) -> list[tuple[pd.DataFrame, list[tuple[str, dict]]]] | None:
    """:func:`_variants_table` of every variant of ``current`` (all of whose logs are to be parsed), in
    worker processes, a chunk of whole variants (at least :data:`CHUNK` logs) at a time, in order; None
    with fewer than :data:`PARALLEL_FROM` logs or one core (nothing is parsed then), or when a worker
    found a log or a variant it refuses."""
    workers = _cores()
    if sum(map(len, current.values())) < PARALLEL_FROM or workers < 2:
        return None
    chunks: list[list] = [[]]
    for indexes in current.values():
        if len(chunks[-1]) >= CHUNK:
            chunks.append([])
        chunks[-1] += [logs[i] for i in indexes]
    try:
        pool = ProcessPoolExecutor(min(workers, len(chunks)))
    except (OSError, NotImplementedError):  # no processes to be had here
        return None
    parts = []
    gc.freeze()  # the workers (forked at the first chunk) collect none of this process's objects: their pages stay shared
    try:
        for part in pool.map(_variants_table, [data_dir] * len(chunks), chunks, [collect] * len(chunks)):
            if part is None:
                return None
            parts.append(part)
    except BrokenProcessPool:  # a worker died (killed, out of memory): the build is made in one process
        return None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        gc.unfreeze()
    return parts


def _found_machines(built: Built, machines_before: dict) -> dict[str, list[dict]]:
    """Each variant's distinct machines: a kept variant's from the previous manifest, every other
    variant's from its runs, in the order of its logs."""
    found = {variant: list(machines_before.get(variant) or []) for variant in built.kept}
    for variant, runs in built.runs.items():
        distinct = found.setdefault(variant, [])
        for run in runs:
            if run["machine"] is not None and run["machine"] not in distinct:
                distinct.append(run["machine"])
    return found


def _variant_facts(built: Built, logs: list, facts_before: dict[str, dict]) -> dict[str, dict]:
    """Each variant's run facts: a kept variant's from the facts written before (read from its
    sidecars when those are not of the previous table), every other variant's from its runs."""
    found = {variant: of_variant(runs) for variant, runs in built.runs.items()}
    for variant in built.kept:
        found[variant] = facts_before.get(variant) or of_variant(
            [of_run(rawlog.read_sidecar(Path(logs[i]))) for i in built.variants[variant]])
    return found


def write_table(data_dir: str | Path, testbed: str, csv: bool = True, reparse: bool = False,
                checksums: Checksums | None = None, logs: list[str | Path] | None = None) -> pd.DataFrame:
    """The table of every raw log of ``testbed``, written: Parquet, CSV unless ``csv=False``, the
    manifest and the run facts (:mod:`virtrepro.results.facts`), each whole or not at all. Each log is
    parsed once: the rows of a log whose content, sidecar and table format are unchanged since the
    last table are taken from it, and the rows of a variant none of whose logs changed are taken as
    one block (``reparse``: every log is parsed again). The manifest says which table the CSV copy
    was written from (``csv_fingerprint``). The one writer of the table: the workflow's table rule
    and ``python -m virtrepro.results`` call it; readers (:func:`virtrepro.results.reading.load`) do not."""
    require_raw_logs(data_dir, testbed)
    with _table_lock(Path(data_dir), testbed), _collector_paused():
        return _write_table(Path(data_dir), testbed, csv, reparse, checksums, logs)


@contextmanager
def _collector_paused():
    """The cycle collector paused while a table is built: the build makes about a million short-lived
    containers (rows, stamps, checksums), which reference counting frees, and each of the
    collector's passes over them and over the earlier table frees nothing: at 50,000 logs they were
    a third of a one-log update (bench/table_build.py). It runs again, as it was, afterwards."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@contextmanager
def _table_lock(data_dir: Path, testbed: str):
    """One writer of a testbed's table at a time: the table rule's job, and a ``python -m
    virtrepro.results`` run by hand meanwhile (readers take no lock: they never write)."""
    lock = datalayout.table_cache_path(data_dir, testbed, "lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _write_table(data_dir: Path, testbed: str, csv: bool, reparse: bool, checksums: Checksums | None,
                 logs: list[str | Path] | None) -> pd.DataFrame:
    """:func:`write_table`, under its lock."""
    paths = datalayout.table_paths(data_dir, testbed)
    checksums = checksums or Checksums(data_dir, testbed)
    logs = checksums.logs() if logs is None else logs
    names = checksums.names(logs)
    current = log_checksums(data_dir, testbed, checksums, logs)
    previous, manifest_before = previous_table(paths) if not reparse else (None, {})
    before = manifest_before.get("log_checksums", {})
    reuse = {name for name, checksum in current.items() if before.get(name) == checksum}
    ranges = manifest_before.get("variant_rows")
    built = _build(data_dir, testbed, previous, reuse, logs, names, set(before), ranges if isinstance(ranges, dict) else None,
                   checksums, collect=True)
    found = _found_machines(built, manifest_before.get("variant_machines") or {})
    require_one_machine(found, datalayout.testbed_dir(data_dir, testbed))
    fingerprinted = fingerprint(data_dir, testbed, checksummed=current)
    facts_before = previous_facts(paths["facts"], manifest_before.get("fingerprint"))
    run_facts = facts_text(testbed, fingerprinted, _variant_facts(built, logs, facts_before),
                           *probes(data_dir, testbed))
    _write(paths, built, csv, {
        "testbed": testbed,
        "format": TABLE_FORMAT,
        "fingerprint": fingerprinted,
        "csv": csv,
        # the table the CSV copy was written from (it may be older than the Parquet table)
        "csv_fingerprint": fingerprinted if csv else manifest_before.get("csv_fingerprint"),
        "rows": len(built.frame),
        "parquet_sha256": None,  # the table these rows and blocks describe (manifest.previous: _write's
        "log_checksums": current,
        "variant_rows": built.ranges,  # platform/benchmark/variant -> [first row, row after its last]
        # platform/benchmark/variant -> the machines its logs were measured on (virtrepro.rawdata.machines)
        "variant_machines": {variant: found[variant] for variant in sorted(found)},
    }, run_facts)
    checksums.save()
    return built.frame


def _write(paths: dict[str, Path], built: Built, csv: bool, manifest_fields: dict, run_facts: bytes) -> None:
    """Write the table's files, each whole: the Parquet table, its CSV copy (``csv``), the run facts
    and the manifest (last: it names the Parquet table's sha256)."""
    paths["parquet"].parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    built.frame.to_parquet(buffer, index=False)
    _replace(paths["parquet"], buffer.getvalue())
    if csv:
        _replace(paths["csv"], _csv(built.frame))
    _replace(paths["facts"], run_facts)
    manifest_fields["parquet_sha256"] = hashlib.sha256(buffer.getvalue()).hexdigest()
    _replace(paths["manifest"], manifest_text(manifest_fields).encode())


class MixedMachinesError(TableError):
    """One benchmark's logs were measured on more than one machine (:mod:`virtrepro.rawdata.machines`)."""


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



def _csv(frame: pd.DataFrame) -> bytes:
    """The table as CSV (a header line, then a row a line; quotes only where a value needs them)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    sink = pa.BufferOutputStream()
    pacsv.write_csv(pa.Table.from_pandas(frame, preserve_index=False), sink,
                    pacsv.WriteOptions(quoting_style="needed"))
    return sink.getvalue().to_pybytes()

