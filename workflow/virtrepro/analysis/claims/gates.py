"""The gates a decided verdict passes before it is reported: measured where the paper measured
(regime), the same decision within each part of the run order (drift), enough repetitions, no
unexplained guest faster than native (the guard), and the paper's platform or an analogue that may
stand for it (with the claim's conditions, :mod:`virtrepro.analysis.conditions`)."""

from __future__ import annotations

import pandas as pd

from .. import conditions
from ...declarations import metric_catalog, platform_names, regimes
from ... import results
from ...platforms import catalog as platform_catalog
from .. import stats
from .intervals import _percent, higher_is_better
from .loading import SHAPE_KINDS, load_causes
from .selection import NotMeasured, _Views, _column_text, _dim_name, _dimensions, _match, _records, _text, _views


# A verdict from a stand-in that is only an analogue of the paper's platform says so (platform_names),
# and one whose records are a guest faster than native without a recorded cause is not a verdict.
ANALOGUE_SUFFIX = " (analogue)"
UNEXPLAINED_FASTER = "inconclusive (guest faster than native: unexplained)"
# a claim left undecided because a comparison has no interval at its n (3 + 3 at 95 %) is TOO_FEW; a
# trend or spread (normal-theory methods) with fewer than MIN_REPETITIONS repetitions a side too
# (issue 16: at n = 3 a nominal 95 % t interval covers about 80 % of the time)
MIN_REPETITIONS = 5
TOO_FEW = "inconclusive (too few repetitions)"


def _too_few(verdict: str, rows: list[dict], kind: str, fewest: int, level: float) -> tuple[str, str | None]:
    """:data:`TOO_FEW`, with the reason, for a claim left undecided because a comparison has no interval
    at its n (3 + 3 at 95 %: :func:`stats.hl_ratio_ci`); the shape kinds (normal-theory slopes and
    spreads) also below :data:`MIN_REPETITIONS` repetitions a side."""
    small = [r for r in rows if r.get("too_few")]
    if verdict == "inconclusive" and small:
        where = f" in {len(small)} of {len(rows)} comparisons ({small[0]['label']}: {small[0]['ci_note']})" if len(rows) > 1 else ""
        return TOO_FEW, f"too few repetitions for a {level:.0%} interval{where}"
    if kind in SHAPE_KINDS and fewest < MIN_REPETITIONS and verdict in ("holds", "does not hold", "inconclusive"):
        return TOO_FEW, f"{fewest} repetitions on a side, fewer than {MIN_REPETITIONS}"
    return verdict, None


def _holding_side(kind: str, value: float, threshold: float) -> bool:
    """Whether a relative difference (positive = worse) lies where a comparison of ``kind`` holds."""
    if kind == "overhead_at_most":
        return value <= threshold
    if kind == "overhead_at_least":
        return value >= threshold
    if kind == "equivalent":
        return abs(value) <= threshold
    if kind == "between":  # a saturation size inside the claim's sizes
        return threshold[0] <= value <= threshold[1]
    return value <= -threshold  # better (an order: better with threshold 0)


def _part_consistency(verdict: str, rows: list[dict]) -> tuple[str, str | None]:
    """``not comparable here`` (conditions.NOT_COMPARABLE: platform and time are confounded), with the
    per-part estimates, for a decided claim whose deciding comparisons do
    not decide the same way in each part of the run order (the records' ``part``: A B C D D C B A
    measures every platform in two parts, and a platform's values can drift between them).

    Each comparison that decides the verdict (every one for ``holds``; those that do not hold for
    ``does not hold``) is re-estimated within each part on its own (:func:`_part_values`); it drifts
    when the parts' point estimates lie on opposite sides of its threshold (0 for an order). ``holds``
    is not comparable when any deciding comparison drifts, ``does not hold`` when every
    counterexample does (one that stays makes the claim fail by itself). Only the estimates' sides
    are looked at, and only to refuse a decision, never to make one. Every kind is re-estimated: a
    relative difference, a ratio of overheads, a trend's slope, a spread difference and a saturation
    size (its part's size inside or outside the claim's sizes); comparisons without per-part records
    (a table without ``part``) and undecided verdicts are left as they are. A comparison paired by
    round (both sides measured in rounds) is re-estimated, paired, within each half of the rounds both
    sides have (the first ceil(n / 2), the rest: ``intervals._half_values``; a product of ratios paired
    by round, each of its ratios within its own halves: ``intervals._component_halves``); the table's ``part`` of
    such records is their half too (:func:`virtrepro.results.records.round_halves`), which the other
    kinds use."""
    if verdict not in ("holds", "does not hold"):
        return verdict, None
    deciding = [r for r in rows if r.get("verdict") == verdict]
    drifting = []
    for row in deciding:
        if "by_part" not in row or "test" not in row:
            continue
        kind, threshold = row["test"]
        values = row["by_part"]()
        if len({_holding_side(kind, v, threshold) for v in values.values()}) > 1:
            drifting.append((row, kind, threshold, values))
    if not drifting or (verdict == "does not hold" and len(drifting) < len(deciding)):
        return verdict, None
    row, kind, threshold, values = drifting[0]
    if kind == "between":  # a saturation size, not a relative difference
        shown = ", ".join(f"part {part} {_text(value)}" for part, value in sorted(values.items()))
        pooled, side = _text(row["value"]), f"inside and outside {_text(threshold[0])}..{_text(threshold[1])}"
    else:
        bound = (-threshold if kind in ("better", "order") else threshold) + 0.0  # no "-0.0"
        shown = ", ".join(f"part {part} {_percent(value)}" for part, value in sorted(values.items()))
        pooled, side = _percent(row["value"]), f"on opposite sides of {_percent(bound)}"
    where = f" ({row['label']})" if row["label"] else ""
    unit = row.get("drift_unit", "part of the run order")
    if unit != "part of the run order":  # paired by round: the halves of the rounds
        shown = shown.replace("part ", "half ")
    more = f" and {len(drifting) - 1} more comparison{'s' if len(drifting) > 2 else ''}" if len(drifting) > 1 else ""
    return conditions.NOT_COMPARABLE, (f"drift between parts{where}{more}: '{verdict}' pooled ({pooled}), but within each "
                                       f"{unit} the estimate lies {side}: {shown}")


def _regime_gate(verdict: str, table: pd.DataFrame, check: dict, platforms: list[str]) -> tuple[str, str | None]:
    """A number measured in a cache is not a disk or memory number: a verdict whose records (on any of
    ``platforms``) were not measured where the paper measured (the table's ``regime`` against its
    ``measures``, :mod:`virtrepro.declarations.regimes`) answers another question: it is not comparable here
    (conditions.NOT_COMPARABLE), with the reason."""
    if "regime" not in _views(table).table.columns:
        return verdict, None
    used = pd.concat([_records(table, check, name) for name in platforms])
    if "measures" not in used.columns:
        return verdict, None
    why = regimes.gate_reason(verdict, used["measures"].dropna().unique(), used["regime"].dropna().unique())
    return (conditions.NOT_COMPARABLE, why) if why else (verdict, None)


def _fewest_repetitions(table: pd.DataFrame, check: dict, names: list[str]) -> int:
    """The fewest repetitions (distinct raw logs) of any variant the claim compares, on any side."""
    counts = []
    for name in dict.fromkeys(names):
        records = _records(table, check, name)
        runs = records["source_log"] if "source_log" in records.columns else records["repetition"]
        counts.append(int(runs.groupby(records["variant"]).nunique().min()))
    return min(counts)


# ---------------------------------------------------------------------------
# The paper's platforms and what stands for them (platform_names holds the rule)
# ---------------------------------------------------------------------------


def _stand_ins(names: list[str], papers: list[str | None], table: pd.DataFrame, check: dict | None = None) -> list[str]:
    """How each resolved platform stands for its paper platform: its own relation, or ANALOGUE where the
    analogue table has a rule for it on the check's subsystem (qemu-tcg for KVM); NotMeasured when it
    may not or when the paper platform has no stand-in on this testbed."""
    present = set(table["platform"].unique()) if len(table) else set()
    subsystem = conditions.rule_subsystem(check or {})
    relations = []
    for name, paper in zip(names, papers):
        if paper is None:
            relations.append(platform_names.SAME)
            continue
        relation = platform_names.stand_in(paper, name) or (
            platform_names.ANALOGUE if platform_names.analogue_rule(paper, name, subsystem) else None)
        if relation is None or name not in present:
            if relation is None or not present & set(platform_names.STAND_INS[paper]):
                raise NotMeasured(platform_names.why_not_measured(paper, present))
        relations.append(relation)
    return relations


def _analogue_rules(check: dict, names: list[str], papers: list[str | None], relations: list[str]) -> list:
    """The analogue table's rule for each analogue stand-in of the check (:func:`conditions.analogue_rules`);
    NotMeasured when the table lists the pair but not the check's subsystem."""
    rules = conditions.analogue_rules(check, names, papers, [r == platform_names.ANALOGUE for r in relations])
    for _, name, paper, rule in rules:
        if rule is None:
            raise NotMeasured(f"the analogue table (data/reference/analogues.yaml) has no rule for {platform_names.label(name)} "
                              f"standing in for {paper} on a {conditions.rule_subsystem(check) or 'undeclared'} metric")
    return rules


def _within_conditions(claim: dict, views: _Views, check: dict, names: list[str]) -> tuple[_Views, "conditions.Judged"]:
    """The check's records judged against the claim's ``conditions`` (:func:`conditions.judge`), and the
    views without the records outside them (unchanged when none is left: the claim is then not
    comparable, and its estimate shows what was measured)."""
    sides = {name: _records(views, check, name) for name in dict.fromkeys(names)}
    judged = conditions.judge(claim, sides)
    if judged.outside or not judged.note:
        return views, judged
    used = pd.Index([]).append([records.index for records in sides.values()])
    return _Views(views.table.drop(index=used.difference(judged.kept))), judged


def _analogue_note(names: list[str], papers: list[str | None], relations: list[str]) -> str:
    shown = [f"{platform_names.label(n)} for {p}" for n, p, r in zip(names, papers, relations) if r == platform_names.ANALOGUE]
    return ("analogue, not the paper's platform: " + ", ".join(shown)) if shown else ""


# ---------------------------------------------------------------------------
# The guard: a guest faster than native beyond its interval is a condition to explain, not a result
# ---------------------------------------------------------------------------

GUARD_MARGIN = 0.10  # a guest better than native by more than this at the interval's worse end is marked


def _guard(table: pd.DataFrame, level: float, causes: list[dict], margin: float = GUARD_MARGIN) -> list[dict]:
    """Every (guest platform, benchmark, metric, variant) whose relative difference against native
    (the Hodges-Lehmann ratio's exact Mann-Whitney interval at ``level``, positive = worse) lies entirely
    below ``-margin``, with the table records of the guest's side and the recorded cause ("" when none).
    A metric declared with no better side is no performance and is left out."""
    out = []
    baseline = platform_catalog.BASELINE
    if table.empty or baseline not in set(table["platform"]):
        return out
    measured = table[table["value"].notna()]
    parts = (  # per benchmark, widened (results.view)
        ((bench, metric), part)
        for bench in sorted(measured["benchmark"].unique())
        for metric, part in results.view(measured, bench).groupby("metric", sort=True)
    )
    for (bench, metric), part in parts:
        if baseline not in set(part["platform"]) or part["platform"].nunique() < 2:
            continue
        if bench in metric_catalog.METRICS and metric_catalog.metric(bench, metric).higher_is_better is None:
            continue  # a size or a count (MIT GCM's bytes written), not a performance: nothing is faster

        dims = _dimensions([part], {}, set())
        keys = pd.Series(list(zip(*[_column_text(part, d) for d in dims])) if dims else [()] * len(part), index=part.index)
        slim = pd.DataFrame({"platform": part["platform"].astype(str), "key": keys, "value": part["value"].astype(float)})
        base = slim[slim["platform"] == baseline]
        hib = higher_is_better(metric, part["unit"].iloc[0], bench)
        for (platform, key), guest in slim[slim["platform"] != baseline].groupby(["platform", "key"], sort=True):
            native = base.loc[base["key"] == key, "value"].to_numpy(float)
            if len(native) < 2 or len(guest) < 2:
                continue
            res = stats.overhead(native, guest["value"].to_numpy(float), hib, level=level)
            high = res["overhead_ci_high"] / 100
            if not high < -margin:
                continue
            entry = {"platform": platform, "benchmark": bench, "metric": metric,
                     "variant": ", ".join(f"{_dim_name(d)}={v}" for d, v in zip(dims, key)),
                     "estimate": res["overhead_percent"] / 100, "ci_low": res["overhead_ci_low"] / 100, "ci_high": high,
                     "n_platform": len(guest), "n_baseline": len(native), "records": guest.index}  # fmt: skip
            found = _cause(entry, part.loc[guest.index], causes)
            entry["cause"] = str(found["cause"]) if found else ""
            entry["confounded"] = bool(found and found.get("confounded"))
            out.append(entry)
    return out


def _cause(entry: dict, records: pd.DataFrame, causes: list[dict]) -> dict | None:
    """The registry's entry that explains ``entry`` (its platform, benchmark, metric and ``where``), or None."""
    for cause in causes:
        if (cause["platform"], cause["benchmark"]) != (entry["platform"], entry["benchmark"]):
            continue
        metrics = cause.get("metric")
        if metrics is not None and entry["metric"] not in ([metrics] if isinstance(metrics, str) else metrics):
            continue
        if all(_match(records, k, v).all() for k, v in (cause.get("where") or {}).items()):
            return cause
    return None


def faster_than_native(table: pd.DataFrame, level: float = 0.95, causes: list[dict] | None = None,
                       margin: float = GUARD_MARGIN) -> pd.DataFrame:  # fmt: skip
    """The guard's list for a notebook: one row per guest platform, benchmark, metric and variant that
    beats native by more than ``margin`` beyond its confidence interval (``ci_high < -margin``, relative
    difference positive = worse), with the cause recorded in ``data/reference/faster_than_native.yaml``
    or "unexplained". Claims whose records are listed here without a cause are
    ``inconclusive (guest faster than native: unexplained)``."""
    causes = load_causes() if causes is None else causes
    rows = [{k: v for k, v in e.items() if k != "records"} for e in _guard(table, level, causes, margin)]
    columns = ["platform", "benchmark", "metric", "variant", "estimate", "ci_low", "ci_high", "n_platform", "n_baseline", "cause"]
    frame = pd.DataFrame(rows, columns=columns)
    frame["cause"] = frame["cause"].replace("", "unexplained")
    return frame


def _flagged(guard: list[dict], table: pd.DataFrame, check: dict, names: list[str]) -> list[dict]:
    """The guard's entries that hold records this claim compares."""
    used = pd.Index([])
    for name in dict.fromkeys(names):
        try:
            used = used.union(_records(table, check, name).index)
        except NotMeasured:
            continue
    return [e for e in guard if len(e["records"].intersection(used))]


def base_verdict(verdict: str) -> str:
    """A verdict without its qualifier: "holds (analogue)" -> "holds", the unexplained
    faster-than-native one -> "inconclusive"."""
    return verdict.split(" (", 1)[0]


def _gated(verdict: str, relations: list[str], flags: list[dict]) -> str:
    """The verdict as reported: unexplained faster-than-native records make it inconclusive; an
    analogue stand-in's holds / does not hold says so."""
    if verdict not in ("holds", "does not hold", "inconclusive"):
        return verdict
    if any(not f["cause"] for f in flags):
        return UNEXPLAINED_FASTER
    if any(f.get("confounded") for f in flags):  # a measured difference in conditions: it decides nothing
        return "inconclusive"
    if verdict != "inconclusive" and platform_names.ANALOGUE in relations:
        return verdict + ANALOGUE_SUFFIX
    return verdict


def _flag_note(flags: list[dict]) -> str:
    if not flags:
        return ""
    shown = [f"{f['platform']} {f['metric']}{' ' + f['variant'] if f['variant'] else ''} {_percent(f['estimate'])}: "
             f"{f['cause'] or 'unexplained'}" for f in flags[:3]]  # fmt: skip
    more = f" (+{len(flags) - 3} more)" if len(flags) > 3 else ""
    return "guest faster than native beyond its interval: " + "; ".join(shown) + more
