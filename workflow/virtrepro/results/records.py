"""Raw logs into records: the tidy table's columns, each log's rows with the run's context, and the
checks every log passes before it becomes a number.

A log that does not parse stops the build with the parser's error, which names the file; it never
becomes a number. So does a log whose sidecar is missing, cannot be read, contradicts itself
(``complete`` with an exit status other than 0) or describes another run than the log's place
(:func:`check_place`), a log that cannot be read or is a symbolic link, a log whose bytes are not the
ones its sidecar recorded (an edited log, or one copied over another repetition's) or whose sidecar
records none (:func:`rawlog.read_checked`), and two repetitions that are one run
(:func:`refuse_copies`). A variant's ``stopping`` facts are computed from its logs alone
(:func:`stopping`, :func:`recorded_rule`).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from ..planning import adaptive
from .. import datalayout
from ..rawdata import machines, rawlog
from .facts import of_run
from ..benchmarks import BENCHMARKS, key_spells
from ..errors import VirtreproError
from ..parsers import ParseError
from ..sidecar import Sidecar

TABLE_FORMAT = 13  # 12: every log checked against its sidecar's digest; 13: the round column, part from rounds

COLUMNS = [
    "testbed",
    "platform",
    "benchmark",
    "variant",  # the variant's key: the directory name of its raw logs
    "parameters",  # JSON object: the variant's parameters, typed as the sidecar records them
    "labels",  # JSON object: the record's own fields beside metric, unit and value (threads, file_size_kb...)
    "repetition",
    "part",  # the part of the run order A B C D D C B A it was measured in; in rounds, its half (round_halves())
    "round",  # the round it was measured in (sidecar version 3); none for logs measured before rounds
    "scale",  # quick, paper: what the numbers can carry (notebook.scale_note)
    "metric",
    "unit",
    "value",
    "source_log",
    "regime",  # where it was measured (virtrepro.declarations.regimes); none for a record that is no disk or memory number
    "stopping",  # JSON object: its variant's STOPPING facts on this platform (stopping())
]
# every column's type, whatever its rows hold (text: pandas' string type, missing as NaN)
DTYPES = {column: "str" for column in COLUMNS} | {"repetition": "int64", "part": "Int64", "round": "Int64", "value": "float64"}
# the JSON columns, widened by view()
JSON_COLUMNS = ("parameters", "labels", "stopping")
# per variant and platform (every row of it alike): its repetition rule (virtrepro.planning.adaptive; "fixed"
# for a count), its number of complete logs, why it stopped ("width reached", "cap reached",
# "continue": neither yet; "fixed count") and the widest half-width of its deciding series (none for a
# fixed count): relative, of the t-interval of the mean; on the log scale, of the signed-rank interval
# (of the per-round log ratios to native where the platform was paired by round: adaptive.decide_rounds)
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
    relative = log.relative_to(data_dir)
    where = datalayout.place(relative)
    run = rawlog.complete_record(log)
    if run is None:  # listed, then gone
        raise IncompleteLogError(str(relative), "raw log disappeared while the table was built")
    _check_place(where, relative, run)
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
        "round": run.get("round"),
        "scale": run.get("scale"),
        "source_log": str(relative),
        "repetition_rule": run.get("repetition_rule"),
        "machine": machines.identity(sidecar),  # not a column: the manifest's variant_machines (build)
        "run": of_run(sidecar),  # not a column: the run facts' table (results.facts)
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
    plain = {}
    for key, value in fields.items():
        kind = type(value)
        if kind is str or kind is int or kind is bool:  # what _plain leaves as it is (most values)
            plain[key] = value
        elif value is not None:
            value = _plain(value)
            if value is not None:
                plain[key] = value
    try:
        return json.dumps(dict(sorted(plain.items())))
    except (TypeError, ValueError) as error:
        raise ParseError(source, f"a field is no JSON value ({error})") from None


def check_place(relative: Path, sidecar: Sidecar | dict) -> None:
    """Refuse a log whose sidecar describes another run than its place ``raw/<testbed>/<platform>/
    <benchmark>/<variant>/rep-<k>.log`` says: each of those, and the variant's parameters
    (the variant's key spells them), must agree."""
    _check_place(datalayout.place(relative), relative, sidecar)


def _spells(key: str, parameters: dict) -> bool:
    """:func:`key_spells`, remembered: its answer depends on the key and each parameter's name and
    value as text (``name-value``, in the sidecar's order) alone, and a variant's logs all ask the same."""
    asked = (key, tuple((name, f"{value}") for name, value in parameters.items()))
    found = _SPELT.get(asked)
    if found is None:
        found = _SPELT[asked] = key_spells(key, parameters)
    return found


_SPELT: dict[tuple, bool] = {}


def _check_place(where: datalayout.Place, relative: Path, sidecar: Sidecar | dict) -> None:
    """:func:`check_place` with the log's place (``where``) known."""
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
    if not isinstance(parameters, dict) or not _spells(where.variant, parameters):
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
    sidecar recorded; the decision is :func:`adaptive.decide_rounds` on the parsed records and their
    rounds of all the variant's platforms, as the measurement made it (paired by round with native
    where the rule allows; logs without rounds: each platform alone)."""
    variants: dict[tuple, dict[str, list[list[dict]]]] = {}
    for rows in logged:
        if rows:
            variants.setdefault((rows[0]["testbed"], rows[0]["benchmark"], rows[0]["variant"]), {}).setdefault(
                rows[0]["platform"], []).append(rows)
    for platforms in variants.values():
        rules = {}
        for group in platforms.values():
            group.sort(key=lambda rows: rows[0]["repetition"])
            recorded = group[-1][0]["repetition_rule"]
            rules[group[-1][0]["platform"]] = (adaptive.RepetitionRule.from_config(recorded)
                                               if isinstance(recorded, dict) else None)
        try:
            decisions = adaptive.decide_rounds(rules, platforms, {platform: [rows[0].get("round") for rows in group]
                                                                  for platform, group in platforms.items()})
        except ValueError as error:
            platform = str(error).split(":", 1)[0]
            raise ParseError(platforms[platform][-1][0]["source_log"], str(error).split(": ", 1)[1]) from None
        for platform, group in platforms.items():
            rule = rules[platform]
            if rule is None:
                facts = {"repetition_rule": "fixed", "stop_reason": adaptive.FIXED, "rel_half_width": None}
            else:
                decision = decisions[platform]
                facts = {"repetition_rule": rule.label(), "stop_reason": decision.reason,
                         "rel_half_width": decision.rel_half_width}
            facts = _json({**facts, "n_repetitions": len(group)}, group[-1][0]["source_log"])
            for rows in group:
                for row in rows:
                    del row["repetition_rule"]
                    row["stopping"] = facts
            round_halves(group)


def round_halves(group: list[list[dict]]) -> None:
    """The ``part`` of each row of one variant on one platform (``group``: one list of rows a log)
    measured in rounds: its half of the variant's complete rounds on this platform. Of the n distinct
    rounds its logs carry, sorted, the first ceil(n / 2) are part 1 and the rest part 2, so the drift
    check between parts (claims' drift gate, ``stats.drift_between_parts``) compares the first half
    of the rounds with the second (docs/methodology.md, "Run order"). Rows without a round keep
    the part their sidecar's order of parts gave (none in the oldest logs)."""
    rounds = sorted({rows[0]["round"] for rows in group if rows and rows[0].get("round") is not None})
    if not rounds:
        return
    first = set(rounds[: -(-len(rounds) // 2)])
    for rows in group:
        for row in rows:
            if row.get("round") is not None:
                row["part"] = 1 if row["round"] in first else 2



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




def _subdirectories(path: str) -> list[str]:
    """The names of the directories in ``path``, sorted (none if it is not there)."""
    try:
        with os.scandir(path) as entries:
            return sorted(entry.name for entry in entries if entry.is_dir())
    except (FileNotFoundError, NotADirectoryError):
        return []

