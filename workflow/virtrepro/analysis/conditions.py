"""Whether a test of a paper's claim is comparable: the conditions the claim was made under, and the
stand-ins the analogue table allows for it.

**Conditions.** A claim of ``data/reference/claims.yaml`` may state ``conditions:``, a mapping from
the vocabulary below (:data:`CONDITIONS`, defined here and nowhere else) to what the paper's
statement was made at. Each is decided from the records the claim's check compares (their
parameters and labels in the tidy table) and from the testbed's facts those records carry: how many
machines a run held is its benchmark's own declaration (``benchmarks.base.hosts_used``: netperf's two
instances always share one host, an MPI variant ``across: hosts`` holds ``nodes`` hosts), where a
number was measured is :mod:`virtrepro.declarations.regimes`' ``regime``.

==================================  ==========================================================
``npb_class: [B, C]``               the record's NPB problem class is one of these
``min_processes: 8``                the record's process or thread count (its log's
                                    ``processes`` / ``threads``, else the variant's ``procs`` /
                                    ``threads``) is at least this
``nodes: 2``                        the record's run held at least this many machines
``between_machines: true``          the record's run crossed a wire between machines (a network
                                    statement about Gigabit Ethernet or InfiniBand between
                                    servers), not a virtual path on one host
``beyond_caches: true``             the record was measured on disk or in memory (``regime``),
                                    not in the page cache or the CPU caches
``scaling: {counts: 3, span: 4}``   the records that meet the others have at least ``counts``
                                    distinct process counts on each platform, the largest at
                                    least ``span`` times the smallest
==================================  ==========================================================

All but ``scaling`` are decided per record: records outside them are left out of the comparison
(the note says how many and why), and when a platform has none left, or ``scaling`` is not met, the
claim is :data:`NOT_COMPARABLE` ("not comparable here") with the reason, never holds or does not hold.

**Analogues.** A measured platform of another kind may stand in for a paper's platform only as the
analogue table says (:data:`virtrepro.declarations.platform_names.ANALOGUES`), per subsystem of the claim's metric:
``stands`` (the verdict stands, marked "(analogue)"), ``no`` (not comparable: the stand-in differs in
the trait the claim is about) or ``one-way`` with a ``bias``: a verdict counts only where the bias
works against it. Which verdict the bias favours follows from the claim: ``holds`` of a claim that the
stand-in's platform does well (first of an ``order``, the ``platform`` of ``overhead_at_most``,
``equivalent`` or ``better``, the ``baseline`` of ``overhead_at_least``) is favoured by a bias that
makes it look better, and the opposite ``does not hold``; a claim about the shape of the data
(``trend``, ``spread``, ``saturation``) or with the stand-in in the middle of an ``order`` is favoured
either way, so a one-way analogue informs it in neither. The other verdict is :data:`NOT_INFORMATIVE`.
"""

from __future__ import annotations

import math

from ..declarations import metric_catalog, platform_names, regimes
from ..benchmarks import BENCHMARKS, Benchmark, Variant
from ..benchmarks.base import hosts_used

NOT_COMPARABLE = "not comparable here"
NOT_INFORMATIVE = "not informative (analogue's bias)"

# the record columns that hold its process or thread count, in order of preference: what the log says
# ran (NPB's, HPCC's parsers), then what the variant asked for
COUNT_COLUMNS = ("processes", "threads", "param_procs", "param_threads")
NPB_CLASSES = ("S", "W", "A", "B", "C", "D", "E", "F")


def _flag(value) -> bool:
    return value is True


def _positive_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _classes(value) -> bool:
    values = value if isinstance(value, list) else [value]
    return bool(values) and all(v in NPB_CLASSES for v in values)


def _scaling(value) -> bool:
    return (isinstance(value, dict) and set(value) == {"counts", "span"} and _positive_int(value["counts"])
            and value["counts"] >= 2 and isinstance(value["span"], (int, float)) and value["span"] >= 1)


# name -> (what a value must be, its check, what it means): the one vocabulary
CONDITIONS = {
    "npb_class": ("an NPB class or a list of them (S, W, A, B, C, D, E, F)", _classes,
                  "the NPB problem classes at which the paper's statement is comparable"),
    "min_processes": ("a whole number >= 1", _positive_int,
                      "the smallest process or thread count the statement was made at or needs"),
    "nodes": ("a whole number >= 1", _positive_int, "the fewest machines a run of the statement held"),
    "between_machines": ("true", _flag, "a network statement about a wire between machines, not a path on one host"),
    "beyond_caches": ("true", _flag, "a memory or disk statement about a working set beyond the CPU caches / page cache"),
    "scaling": ("{counts: >= 2, span: >= 1}", _scaling,
                "a scalability statement: at least `counts` process counts, the largest `span` times the smallest"),
}


def check_conditions(claim: dict) -> None:
    """``claims.yaml``: a claim's ``conditions`` is a mapping of known names to well-formed values, on a
    testable claim; ValueError naming the claim and the key otherwise."""
    if "conditions" not in claim:
        return
    ident, given = claim.get("id"), claim["conditions"]
    if not isinstance(given, dict) or not given:
        raise ValueError(f"{ident}: conditions must be a mapping of {', '.join(CONDITIONS)}")
    if not claim.get("testable"):
        raise ValueError(f"{ident}: conditions on an untestable claim decide nothing")
    for name, value in given.items():
        if name not in CONDITIONS:
            raise ValueError(f"{ident}: unknown condition {name!r} (known: {', '.join(CONDITIONS)})")
        wanted, ok, _ = CONDITIONS[name]
        if not ok(value):
            raise ValueError(f"{ident}: condition {name} must be {wanted}, not {value!r}")


# ---------------------------------------------------------------------------
# What a record was measured at
# ---------------------------------------------------------------------------


def process_count(records: pd.DataFrame) -> pd.Series:
    """Each record's process or thread count (:data:`COUNT_COLUMNS`, the first that has a number); NaN
    where none does."""
    import pandas as pd  # imported when records are judged: reading the claims needs no pandas

    count = pd.Series(math.nan, index=records.index, dtype=float)
    for column in COUNT_COLUMNS:
        if column in records.columns:
            count = count.fillna(pd.to_numeric(records[column], errors="coerce").astype(float))
    return count


def npb_class(records: pd.DataFrame) -> pd.Series:
    """Each record's NPB problem class (the variant's ``class``, else its log's), "" where none."""
    import pandas as pd

    found = pd.Series("", index=records.index, dtype=object)
    for column in ("param_class", "class"):
        if column in records.columns:
            found = found.where(found != "", records[column].map(lambda v: str(v) if _present(v) else ""))
    return found.astype(str)


def machines(records: pd.DataFrame) -> pd.Series:
    """How many of the testbed's machines each record's run held: its benchmark's declaration
    (``benchmarks.base.hosts_used``) of its variant's parameters."""
    import pandas as pd

    params = [c for c in records.columns if c.startswith("param_")]
    held = {}
    for key, rows in records.groupby(["benchmark", "variant"], sort=False):
        first = rows.iloc[0]
        given = tuple(sorted((c.removeprefix("param_"), _plain(first[c])) for c in params if _present(first[c])))
        bench = BENCHMARKS.get(key[0], Benchmark())
        held[key] = hosts_used(bench, Variant(key[0], str(key[1]), given))
    return pd.Series([held[k] for k in zip(records["benchmark"], records["variant"])], index=records.index, dtype=int)


def _present(value) -> bool:
    import pandas as pd

    return value is not None and value is not pd.NA and not (isinstance(value, float) and math.isnan(value))


def _plain(value):
    return value.item() if hasattr(value, "item") else value


def _where(regime) -> str:
    return regimes.WHERE.get(regime, str(regime)) if isinstance(regime, str) and regime else "with no regime recorded"


def _numbers(values) -> str:
    return ", ".join(f"{v:g}" for v in sorted(set(values)))


# per record-level condition: (which records meet it, what the records that do not were measured at)
def _keep(name: str, value, records: pd.DataFrame) -> tuple[pd.Series, str]:
    import pandas as pd

    if name == "npb_class":
        wanted = value if isinstance(value, list) else [value]
        found = npb_class(records)
        keep = found.isin(wanted)
        shown = ", ".join(sorted({c or "none" for c in found[~keep]}))
        return keep, f"NPB class {shown} (the statement: class {', '.join(wanted)})"
    if name == "min_processes":
        count = process_count(records)
        keep = count >= value
        shown = _numbers(count[~keep].dropna()) or "no"
        return keep, f"{shown} processes or threads (the statement: {value} or more)"
    if name == "nodes":
        held = machines(records)
        keep = held >= value
        return keep, f"runs on {_numbers(held[~keep])} machine(s) (the statement: {value} or more)"
    if name == "between_machines":
        keep = machines(records) >= 2
        return keep, ("both ends on one machine, a virtual network path with no wire between them (the statement: "
                      "a network between machines)")
    if name == "beyond_caches":
        found = records["regime"] if "regime" in records.columns else pd.Series(None, index=records.index, dtype=object)
        keep = found.isin([regimes.DISK, regimes.MEMORY])
        shown = " / ".join(sorted({_where(r) for r in found[~keep]}))
        return keep, f"measured {shown} (the statement: beyond the caches, on disk or in memory)"
    raise KeyError(name)


class Judged:
    """A claim's records against its conditions: ``kept`` (the index of the records that meet the
    per-record ones, on every side), ``outside`` (why the claim is not comparable here, "" when it
    is) and ``note`` (what was left out, "" when nothing)."""

    def __init__(self, kept: pd.Index, outside: str = "", note: str = ""):
        self.kept, self.outside, self.note = kept, outside, note


def judge(claim: dict, sides: dict[str, pd.DataFrame]) -> Judged:
    """``sides``: each platform's records the check compares (widened, :func:`virtrepro.results.view`)."""
    import pandas as pd

    given = claim.get("conditions") or {}
    everything = pd.Index([]).append([records.index for records in sides.values()]) if sides else pd.Index([])
    if not given:
        return Judged(everything)
    why, kept, left_out = {}, [], {}  # why: what was measured -> the platforms measured so
    for platform, records in sides.items():
        keep, phrases = pd.Series(True, index=records.index), []
        for name, value in given.items():
            if name == "scaling":
                continue
            meets, shown = _keep(name, value, records)
            if not meets.all():
                phrases.append(shown)
                left_out.setdefault(shown, None)
            keep &= meets
        if not keep.any():
            why.setdefault("; ".join(phrases), []).append(platform)
        kept.append(records[keep])
    if not why and "scaling" in given:
        for platform, records in zip(sides, kept):
            gap = _scaling_gap(records, given["scaling"])
            if gap:
                why.setdefault(gap, []).append(platform)
    if why:
        shown = [f"{', '.join(platforms)}: {text}" for text, platforms in why.items()]
        return Judged(everything, outside="outside the claim's conditions: " + "; ".join(shown))
    index = pd.Index([]).append([records.index for records in kept])
    dropped = len(everything) - len(index)
    note = (f"{dropped} of {len(everything)} records outside the claim's conditions left out ("
            + "; ".join(left_out) + ")") if dropped else ""
    return Judged(index, note=note)


def _scaling_gap(records: pd.DataFrame, wanted: dict) -> str:
    counts = sorted(set(process_count(records).dropna()))
    span = counts[-1] / counts[0] if counts and counts[0] > 0 else 0.0
    if len(counts) >= wanted["counts"] and span >= wanted["span"]:
        return ""
    return (f"{len(counts)} process count(s) ({_numbers(counts) or 'none'}) spanning {span:g}x (a scalability "
            f"statement needs {wanted['counts']} or more spanning {wanted['span']:g}x or more)")


# ---------------------------------------------------------------------------
# Analogues (platform_names.ANALOGUES): may the stand-in speak to this claim, and to which verdict
# ---------------------------------------------------------------------------


def subsystem(check: dict) -> str | None:
    """The subsystem of the check's metric (its declaration, derived metrics too); None if undeclared."""
    try:
        return metric_catalog.metric(check.get("benchmark"), check.get("metric")).subsystem
    except (metric_catalog.UnknownMetric, TypeError):
        return None


def rule_subsystem(check: dict) -> str | None:
    """The key under which the analogue table (:func:`platform_names.analogue_rule`) is asked about the
    check: its :func:`subsystem`, qualified by the contended resource for an isolation check
    (``where: {resource: cpu}`` -> ``isolation.cpu``: a stand-in can be fair for one resource's
    isolation and not for another's). The table falls back to the bare subsystem."""
    found = subsystem(check)
    resource = (check.get("where") or {}).get("resource")
    if found == "isolation" and isinstance(resource, str) and resource in metric_catalog.SUBSYSTEMS:
        return f"{found}.{resource}"
    return found


def favours(check: dict, position: int) -> bool | None:
    """Whether the claim's ``holds`` says that the platform at ``position`` of the check (``platform``,
    ``baseline``, or the ``order`` list) does well (True) or badly (False); None for a claim about the
    shape of the data or a platform in the middle of an ``order``."""
    kind = check.get("kind")
    if kind == "order":
        last = len(check.get("platforms") or []) - 1
        return True if position == 0 else False if position == last else None
    if kind in ("overhead_at_most", "equivalent", "better"):
        return position == 0
    if kind == "overhead_at_least":
        return position != 0
    return None


def analogue_rules(check: dict, names: list[str], papers: list, analogue: list[bool]) -> list[tuple[int, str, str, dict | None]]:
    """(position, platform, paper platform, rule or None) for each check platform that stands in as an
    analogue (``analogue``): the analogue table's rule for the check's subsystem (None: it may not)."""
    found = rule_subsystem(check)
    return [(i, name, paper, platform_names.analogue_rule(paper, name, found))
            for i, (name, paper, is_analogue) in enumerate(zip(names, papers, analogue)) if is_analogue]


def informs_nothing(platform: str, benchmark: str | None) -> str | None:
    """Why ``platform`` informs no claim on ``benchmark`` by its declaration (the catalogue's
    ``informs_nothing_on`` for the benchmark's subsystem: QEMU TCG on CPU and HPC), which is why the
    scales of the configuration's ``informative_only`` do not measure it there; None: it may inform one, or is unknown."""
    if benchmark not in BENCHMARKS or platform not in platform_names.BY_NAME:
        return None
    from ..platforms import catalog

    why = catalog.informs_nothing(platform, BENCHMARKS[benchmark].subsystem)
    return None if why is None else f"{BENCHMARKS[benchmark].subsystem}: {why}"


def _rule_text(paper: str, rule: dict) -> str:
    way = {"stands": "stands in", "no": "may not stand in", "one-way": f"one way, it does {rule['bias']} than {paper}"}
    return f"analogue rule {rule['rule']} ({rule['subsystem']}: {way[rule['use']]}): {rule['why']}"


def analogue_verdict(verdict: str, check: dict, rules: list[tuple[int, str, str, dict]]) -> tuple[str, list[str]]:
    """The verdict as the analogue rules allow it, and a note naming each rule used: ``no`` makes it
    :data:`NOT_COMPARABLE`; a decided verdict (holds / does not hold) the one-way bias favours, or
    that the bias informs neither way, :data:`NOT_INFORMATIVE`; other verdicts are kept."""
    notes = [_rule_text(paper, rule) for _, _, paper, rule in rules]
    if any(rule["use"] == "no" for *_, rule in rules):
        return NOT_COMPARABLE, notes
    decided = verdict.split(" (", 1)[0]
    if decided not in ("holds", "does not hold"):
        return verdict, notes
    for position, name, paper, rule in rules:
        if rule["use"] != "one-way":
            continue
        good = favours(check, position)
        # the verdict that says the stand-in's platform did well is the one a "better" bias favours
        well = None if good is None else (good == (decided == "holds"))
        against = well is not None and (well if rule["bias"] == "worse" else not well)
        if not against:
            notes.append(f"'{decided}' is what the analogue's bias ({rule['bias']} than {paper}) could produce: "
                         f"it says nothing about {paper}")
            return NOT_INFORMATIVE, notes
        notes.append(f"'{decided}' against the analogue's bias ({rule['bias']} than {paper}): it counts")
    return verdict, notes
