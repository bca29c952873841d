"""One claim's verdict row (:func:`evaluate_claim`) and every claim's (:func:`evaluate`): the
selection, the comparisons of the claim's kind, the decision and the gates, in that order."""

from __future__ import annotations

import pandas as pd

from .. import conditions
from .gates import (
    ANALOGUE_SUFFIX, TOO_FEW, UNEXPLAINED_FASTER, _analogue_note, _analogue_rules, _fewest_repetitions, _flag_note,
    _flagged, _gated, _guard, _part_consistency, _regime_gate, _stand_ins, _too_few, _within_conditions,
)
from .intervals import _compare, _shown
from .loading import SHAPE_KINDS, _check_platforms, load_causes, paper_platforms
from .selection import NotMeasured, _Views, _views, resolve_platform
from .shapes import ACROSS_VARIANT_KINDS, _saturation_rows, _shape_verdict, _spread_rows, _trend_rows


# Every verdict, in the order of the counts. A claim tested outside its conditions, on data measured
# in a cache (_regime_gate) or on parts of the run order that decide opposite ways (_part_consistency)
# is conditions.NOT_COMPARABLE; one whose analogue's bias could produce it conditions.NOT_INFORMATIVE.
VERDICTS = ("holds", "does not hold", "holds" + ANALOGUE_SUFFIX, "does not hold" + ANALOGUE_SUFFIX, "inconclusive",
            TOO_FEW, UNEXPLAINED_FASTER, conditions.NOT_INFORMATIVE, conditions.NOT_COMPARABLE, "not measured",
            "not testable here")  # fmt: skip

COLUMNS = [
    "id", "paper", "source", "kind", "benchmark", "metric", "published", "platforms", "threshold",
    "value", "ci_low", "ci_high", "ci_method", "n_platform", "n_baseline", "variant", "verdict", "note",
    "paper_platform", "stand_in", "suspect_faster_than_native",
]  # fmt: skip


def _first_row(claim: dict, check: dict, papers: list[str | None]) -> dict:
    """A claim's verdict row before anything is compared: its identity, its check and its paper's platforms."""
    row = {c: None for c in COLUMNS}
    row.update({k: claim.get(k) for k in ("id", "paper", "source", "published")})
    row.update({"kind": check.get("kind"), "benchmark": check.get("benchmark"), "metric": check.get("metric"),
                "threshold": check.get("threshold"), "n_platform": 0, "n_baseline": 0})  # fmt: skip
    for key in ("value", "ci_low", "ci_high"):
        row[key] = float("nan")
    joint = " > " if check.get("kind") == "order" else " vs " if claim.get("testable") else ", "
    row["paper_platform"] = joint.join(p or "" for p in papers)
    return row


def _comparisons(kind: str, views: _Views, check: dict, names: list[str], row: dict, level: float, margin: float,
                 seed: int) -> tuple[list[dict], list[str]]:  # fmt: skip
    """The comparisons of the claim's kind (rows with their p-values) and the notes on what was not
    run; sets the row's threshold as used (``margin`` for an ``equivalent`` claim without one)."""
    if kind in SHAPE_KINDS:
        rows, notes = {"trend": _trend_rows, "spread": _spread_rows, "saturation": _saturation_rows}[kind](
            views, check, names, level)
        row["threshold"] = check.get("threshold")
    elif kind in ACROSS_VARIANT_KINDS:
        rows, notes = ACROSS_VARIANT_KINDS[kind](views, check, names, level, seed)
        row["threshold"] = check.get("threshold")
    elif kind == "order":
        rows, notes = [], []
        for better, worse in zip(names, names[1:]):
            got, missing = _compare(views, check, better, worse, "better", 0.0, level, seed)
            for r in got:
                r["label"] = f"{better} vs {worse}" + (f", {r['label']}" if r["label"] else "")
            rows += got
            notes += missing
    else:
        plat, base = names
        threshold = check.get("threshold", margin if kind == "equivalent" else None)
        row["threshold"] = threshold
        rows, notes = _compare(views, check, plat, base, kind, float(threshold), level, seed)
    return rows, notes


def _not_measured(row: dict, why: NotMeasured, check: dict, names: list[str], rules: list, judged,
                  unavailable: dict[str, str] | None, table: pd.DataFrame | None = None) -> dict:  # fmt: skip
    """The row of a claim whose records are missing: ``not measured`` with the reason (and why a platform
    is unavailable), or ``not comparable here`` when its conditions or the analogue table put it out of reach."""
    reasons = [f"{name} is unavailable on this testbed: {(unavailable or {})[name]}"
               for name in dict.fromkeys(names) if name in (unavailable or {})]
    # a claim that its conditions or the analogue table put out of reach is not comparable, whatever
    # else is missing: measuring more of the same would not make it comparable
    ruled, rule_notes = conditions.analogue_verdict("not measured", check, rules)
    outside = judged.outside if judged is not None else ""
    if outside or ruled == conditions.NOT_COMPARABLE:
        row.update(verdict=conditions.NOT_COMPARABLE, note="; ".join(n for n in [outside, *rule_notes, str(why)] if n))
        return row
    # a platform with no run of the benchmark at all, whose declaration says it informs no claim on the
    # benchmark's subsystem (so the scales of informative_only leave it out): measuring
    # it would not inform this claim
    benchmark = check.get("benchmark")
    ran = set(table.loc[table["benchmark"] == benchmark, "platform"]) if table is not None and len(table) else set()
    by_design = [f"{name} has no {benchmark} runs and would inform no claim on them ({found})"
                 for name in dict.fromkeys(names)
                 if name not in ran and (found := conditions.informs_nothing(name, benchmark))]
    if by_design:
        row.update(verdict=conditions.NOT_INFORMATIVE, note="; ".join([*by_design, *rule_notes, str(why)]))
        return row
    row.update(verdict="not measured", note="; ".join([str(why), *reasons]))
    return row


def _decided(kind: str, check: dict, rows: list[dict], notes: list[str], level: float) -> tuple[str, dict, list[str]]:
    """The claim's verdict over its comparisons, the comparison shown and the note so far (how many
    comparisons decided what, the ``where`` values not run, the shown interval's note)."""
    verdict = _shape_verdict(kind, rows, 1.0 - level)
    shown_as = {"order": "better", "trend": "overhead_at_least" if check.get("direction") == "worsens" else "better",
                "spread": "overhead_at_least" if check.get("direction") == "larger" else "better",
                "saturation": "equivalent"}.get(kind, kind)  # fmt: skip
    shown = _shown(verdict, shown_as, rows)
    where_missing = [n for n in notes if not n.startswith("only on")]
    if verdict == "holds" and where_missing:
        verdict = "inconclusive"
    note = []
    if len(rows) > 1:
        counts = pd.Series([r["verdict"] for r in rows]).value_counts()
        note.append(f"{len(rows)} comparisons (Holm across them): " + ", ".join(f"{v} {k}" for k, v in counts.items())
                    + ("; strongest counterexample shown" if verdict == "does not hold" else "; worst shown"))  # fmt: skip
    if where_missing:
        note.append("not run: " + ", ".join(where_missing))
    if shown["ci_note"]:
        note.append(shown["ci_note"])
    return verdict, shown, note


def _through_gates(verdict: str, note: list[str], views: _Views, check: dict, names: list[str], rows: list[dict],
                   kind: str, level: float) -> str:  # fmt: skip
    """The verdict after the regime, drift and too-few gates, each reason put first in ``note``."""
    verdict, why = _regime_gate(verdict, views, check, names)
    if why:
        note.insert(0, why)
    verdict, why = _part_consistency(verdict, rows)
    if why:
        note.insert(0, why)
    verdict, why = _too_few(verdict, rows, kind, _fewest_repetitions(views, check, names), level)
    if why:
        note.insert(0, why)
    return verdict


def evaluate_claim(claim: dict, table: pd.DataFrame, level: float = 0.95, margin: float = 0.05,
                   seed: int = 0, guard: list[dict] | None = None,
                   unavailable: dict[str, str] | None = None) -> dict:  # fmt: skip
    """One claim's verdict row (see the package docstring). ``guard``: the faster-than-native entries
    of the table (:func:`~virtrepro.analysis.claims.gates._guard`; computed here with the registry's
    causes when not given). ``unavailable``: platform -> why the testbed cannot run it (its platform
    probe, :mod:`virtrepro.testbed.availability`), said in the note of a claim not measured for that reason."""
    check = claim.get("check") or {}
    papers = paper_platforms(claim)
    row = _first_row(claim, check, papers)
    if not claim.get("testable"):
        row.update(verdict="not testable here", note=claim.get("reason", ""), platforms="")
        return row
    kind = check["kind"]
    views = _views(table)
    table = views.table
    names: list[str] = []
    rules: list = []
    judged = None
    try:
        names = [resolve_platform(p, table, paper, conditions.rule_subsystem(check)) for p, paper in zip(_check_platforms(check), papers)]
        row["platforms"] = (" > ".join(names) + " (best first)") if kind == "order" else " vs ".join(names)
        relations = _stand_ins(names, papers, table, check)
        rules = _analogue_rules(check, names, papers, relations)
        row["stand_in"] = ", ".join(dict.fromkeys(relations))
        views, judged = _within_conditions(claim, views, check, names)
        rows, notes = _comparisons(kind, views, check, names, row, level, margin, seed)
    except NotMeasured as why:
        return _not_measured(row, why, check, names, rules, judged, unavailable, table)
    verdict, shown, note = _decided(kind, check, rows, notes, level)
    verdict = _through_gates(verdict, note, views, check, names, rows, kind, level)
    flags = _flagged(_guard(table, level, load_causes()) if guard is None else guard, views, check, names)
    verdict = _gated(verdict, relations, flags)
    verdict, rule_notes = conditions.analogue_verdict(verdict, check, rules)
    if judged.outside:  # a test outside the claim's conditions answers another question
        verdict = conditions.NOT_COMPARABLE
    lead = [judged.outside, _analogue_note(names, papers, relations), *rule_notes, _flag_note(flags), judged.note]
    note = [n for n in lead if n] + note
    row.update(value=shown["value"], ci_low=shown["ci_low"], ci_high=shown["ci_high"], n_platform=shown["n_platform"],
               n_baseline=shown["n_baseline"], variant=shown["label"], ci_method=shown["ci_method"], verdict=verdict,
               note="; ".join(note), suspect_faster_than_native=bool(flags))  # fmt: skip
    return row


def evaluate(claims: list[dict], table: pd.DataFrame, level: float = 0.95, margin: float = 0.05,
             seed: int = 0, causes: list[dict] | None = None,
             unavailable: dict[str, str] | None = None) -> pd.DataFrame:  # fmt: skip
    """One row per claim: id, paper, source, kind, benchmark, metric, published, platforms
    (as used: ``qemu`` resolved), threshold, value (relative difference, positive = worse),
    ci_low, ci_high (at ``level``), ci_method (the interval's method: ``hl-moses``, ``bootstrap-hl``, ...),
    n_platform, n_baseline, variant (the comparison shown: the strongest counterexample of a claim
    that does not hold, else the weakest comparison), verdict (one of :data:`VERDICTS`) and note.

    ``margin`` is the TOST margin of an ``equivalent`` claim that gives no threshold. Also
    paper_platform, stand_in (how the measured platforms stand for the paper's,
    :mod:`virtrepro.declarations.platform_names`) and suspect_faster_than_native (the claim compares records of a
    guest faster than native, :func:`faster_than_native`; ``causes`` defaults to the registry).
    ``unavailable``: platform -> why the testbed cannot run it (the run facts' ``unavailable_platforms``,
    :func:`virtrepro.results.run_facts`).
    """
    guard = _guard(table, level, load_causes() if causes is None else causes)
    views = _Views(table)
    rows = [evaluate_claim(c, views, level=level, margin=margin, seed=seed, guard=guard, unavailable=unavailable)
            for c in claims]
    return pd.DataFrame(rows, columns=COLUMNS)


def verdict_counts(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Claims per paper and verdict (columns in :data:`VERDICTS` order, a total row)."""
    counts = pd.crosstab(verdicts["paper"], verdicts["verdict"]).reindex(columns=list(VERDICTS), fill_value=0)
    counts.loc["all papers"] = counts.sum()
    return counts
