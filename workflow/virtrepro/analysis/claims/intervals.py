"""Relative differences of paired variants, their intervals (:mod:`virtrepro.analysis.stats`), the
p-values at a claim's threshold and the per-claim decision (one Holm family); also each
comparison re-estimated within each part of the run order, for the drift gate."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...declarations import metric_catalog
from .. import stats
from .selection import (
    ISOLATION_PARAMETER, NotMeasured, SCALING_PARAMETER, _Pair, _column_text, _dimensions, _pairs, _part_of,
    _records, _speedup_pairs, _text,
)


def higher_is_better(metric: str, unit: str | None = None, benchmark: str | None = None) -> bool:
    """Whether a larger value of ``metric`` is better: its declaration in
    :mod:`virtrepro.declarations.metric_catalog` (of ``benchmark`` when given; without it every benchmark's
    metric of that name must agree). ``unit`` is not needed (the papers give the same metric in
    other units, or as a percentage). Raises ``ValueError`` (``UnknownMetric``) for a metric no
    benchmark declares or one with no better direction: a direction is never guessed.
    """
    return metric_catalog.higher_is_better(metric, benchmark)


# ---------------------------------------------------------------------------
# Relative differences, their intervals and the per-claim decision
# ---------------------------------------------------------------------------


def _shifts(pair: _Pair, power: float = 1.0) -> list:
    """The ratio platform / baseline of one pair as :func:`stats.shift_bootstrap_ci` pairs: one shift
    for a plain metric, two for a derived one (a ratio of ratios: (P_num / P_den) / (B_num / B_den))."""
    if "value" in pair.plat:
        return [(pair.plat["value"], pair.base["value"], power)]
    return [(pair.plat["num"], pair.plat["den"], power), (pair.base["num"], pair.base["den"], -power)]


def _n(side: dict) -> int:
    return int(sum(len(v) for v in side.values()))


def _to_relative(ratio: float, hib: bool) -> float:
    """Relative difference (positive = worse) of a ratio platform / baseline."""
    return 1.0 - ratio if hib else ratio - 1.0


def _relative_ci(pairs: list[_Pair], hib: bool, level: float, aggregate: bool, seed: int) -> list[dict]:
    """Relative difference (positive = worse), its interval and the ratio's inference per pair, or
    one row for their geometric mean (``aggregate``).

    No method is chosen by a test on the same data: a plain metric per variant is the Hodges-Lehmann
    ratio with the exact Mann-Whitney interval (:func:`stats.hl_ratio_ci`, its achieved confidence in
    the note), or, where both sides were measured in rounds (:func:`_by_round`), the Hodges-Lehmann
    ratio of the rounds' paired log ratios with the exact signed-rank interval over the rounds both
    have (:func:`stats.hl_paired_ci`: a drift common to both platforms cancels in each round); a derived metric (a ratio of ratios) or a geometric mean over variants
    :func:`_product_ci`: paired by round where every ratio's two sides were measured in rounds, else
    the bootstrap of the Hodges-Lehmann shifts, each row's resamples seeded on their own
    (``stats.seed_for(seed, label)``). ``too_few``: no interval exists at the row's n.
    """
    groups = [pairs] if aggregate else [[p] for p in pairs]
    rows = []
    for group in groups:
        label = group[0].label if not aggregate else f"geometric mean over {len(group)} variants"
        weighted = [(p, 1.0 / len(group)) for p in group]
        shifts = [s for p, power in weighted for s in _shifts(p, power)]
        paired = _by_round(group[0]) if len(shifts) == 1 else None
        components = None
        if paired is not None:
            ci = stats.hl_paired_ci(paired[0], paired[1], level)
        elif len(shifts) == 1:
            ci = stats.hl_ratio_ci(shifts[0][0], shifts[0][1], level)
        else:
            ci, components = _product_ci(weighted, level, stats.seed_for(seed, label))
        if paired is not None:
            by_part = lambda paired=paired: _half_values(paired, hib, level)  # noqa: E731
        elif components is not None:
            by_part = lambda components=components: {  # noqa: E731
                half: _to_relative(r, hib) for half, r in _component_halves(components).items()}
        else:
            by_part = lambda group=group: _part_values(group, hib)  # noqa: E731
        low, high = sorted((_to_relative(ci.low, hib), _to_relative(ci.high, hib)))
        rows.append({"label": label, "value": _to_relative(ci.estimate, hib), "ci_low": low, "ci_high": high,
                     "n_platform": sum(_n(p.plat) for p in group), "n_baseline": sum(_n(p.base) for p in group),
                     "ci": ci, "ci_method": ci.method, "ci_note": ci.note, "too_few": ci.too_few,
                     "drift_unit": "half of the rounds" if paired is not None or components is not None
                     else "part of the run order", "by_part": by_part})  # fmt: skip
    return rows


def _round_components(weighted: list[tuple[_Pair, float]]):
    """The ratios of ``weighted`` (pair, power) paired by round, as ``(platform, baseline, c)`` samples
    (:func:`stats.by_round`): a plain metric's pair one with c = power, a derived one's two (its
    numerator's variant with c = power, its denominator's with -power: (P_num / B_num) / (P_den / B_den),
    the ratio of ratios regrouped so that each ratio is within one variant's rounds). None when a
    side of any of them was not measured in rounds (or none in common)."""
    out = []
    for pair, power in weighted:
        if pair.rounds is None:
            return None
        keys = [("value", power)] if "value" in pair.plat else [("num", power), ("den", -power)]
        for key, c in keys:
            matched = stats.by_round(pair.plat[key], pair.rounds[0][key], pair.base[key], pair.rounds[1][key])
            if matched is None:
                return None
            out.append((matched[0], matched[1], c, matched[2]))
    return out


def _product_ci(weighted: list[tuple[_Pair, float]], level: float, seed):
    """The interval of a product of ratios (``weighted``: (pair, power)): ``(ci, components)``, paired
    by round (:func:`stats.paired_shift_bootstrap_ci` on :func:`_round_components`, returned) where
    every ratio's two sides were measured in rounds, else the unpaired bootstrap of the Hodges-Lehmann
    shifts (:func:`stats.shift_bootstrap_ci`; components None). Chosen by how the data were
    measured, never by a test on them."""
    components = _round_components(weighted)
    if components is not None:
        return stats.paired_shift_bootstrap_ci([(x, y, c) for x, y, c, _ in components], level, seed=seed), components
    return stats.shift_bootstrap_ci([t for pair, power in weighted for t in _shifts(pair, power)], level, seed=seed), None


def _component_halves(components) -> dict[int, float]:
    """The ratio of :func:`_product_ci`'s paired components estimated within each half of the rounds
    (each component's own: :func:`stats.round_halves`), for the drift gate; a half in which a
    component has fewer than 2 rounds is left out."""
    out = {}
    for half in (1, 2):
        kept = [(x[h], y[h], c) for x, y, c, rounds in components for h in [stats.round_halves(rounds) == half]]
        if all(x.size >= 2 for x, _, _ in kept):
            estimate = stats.paired_ratio_estimate(kept)
            if estimate == estimate:
                out[half] = estimate
    return out


def _by_round(pair: _Pair):
    """A plain metric's pair paired by round (:func:`stats.by_round`: ``(platform, baseline, rounds)``),
    or None when a side has values measured before rounds (or two in a round, or no round in common)."""
    if pair.rounds is None or "value" not in pair.plat:
        return None
    return stats.by_round(pair.plat["value"], pair.rounds[0]["value"], pair.base["value"], pair.rounds[1]["value"])


def _half_values(paired, hib: bool, level: float) -> dict[int, float]:
    """The relative difference of a comparison paired by round estimated within each half of its
    rounds on its own (:func:`stats.round_halves` of the rounds both sides have: the first ceil(n / 2)
    and the rest), for the drift gate; a half with fewer than 2 rounds is left out."""
    plat, base, rounds = paired
    halves = stats.round_halves(rounds)
    out = {}
    for half in (1, 2):
        kept = halves == half
        if kept.sum() >= 2:
            estimate = stats.hl_paired_ci(plat[kept], base[kept], level).estimate
            if estimate == estimate:
                out[half] = _to_relative(estimate, hib)
    return out


def _in_part(pair: _Pair, part: int) -> _Pair | None:
    """``pair`` restricted to the records of one part of the run order on both sides; None when a
    sample has fewer than 2 values there (or the pair does not know its parts)."""
    if pair.parts is None:
        return None
    sides = []
    for side, parts in zip((pair.plat, pair.base), pair.parts):
        kept = {key: values[parts[key] == part] for key, values in side.items()}
        if any(len(values) < 2 for values in kept.values()):
            return None
        sides.append(kept)
    return _Pair(pair.label, *sides)


def _parts_in(frames) -> list[int]:
    """The parts of the run order (1, 2) that records of ``frames`` (tables or :class:`_Pair` part arrays) name."""
    found = set()
    for frame in frames:
        found |= {int(v) for v in (_part_of(frame) if isinstance(frame, pd.DataFrame) else frame) if v == v}
    return sorted(found)


def _part_ratios(weighted: list[tuple[_Pair, float]]) -> dict[int, float]:
    """The point estimate of :func:`stats.hl_ratio_estimate` over the shifts of ``weighted`` (pair,
    power) restricted to each part of the run order on its own, on both sides. A part in which a
    sample of some pair has fewer than 2 values is left out."""
    found = _parts_in(values for pair, _ in weighted if pair.parts for side in pair.parts for values in side.values())
    out = {}
    for part in found:
        kept = [(_in_part(pair, part), power) for pair, power in weighted]
        if all(k is not None for k, _ in kept):
            estimate = stats.hl_ratio_estimate([t for k, power in kept for t in _shifts(k, power)])
            if estimate == estimate:
                out[part] = estimate
    return out


def _part_values(pairs: list[_Pair], hib: bool) -> dict[int, float]:
    """The relative difference of a :func:`_relative_ci` row (its ``pairs``, one or the aggregate's
    variants) estimated within each part of the run order on its own (:func:`_part_ratios`)."""
    return {part: _to_relative(r, hib) for part, r in _part_ratios([(p, 1.0 / len(pairs)) for p in pairs]).items()}


def _by_part_of_frames(sides: list[pd.DataFrame], estimate) -> dict[int, float]:
    """``estimate`` (a function of the sides' records) on the records of each part of the run order
    on its own; a part where it fails or gives NaN is left out."""
    out = {}
    for part in _parts_in(sides):
        kept = [side[_part_of(side) == part] for side in sides]
        try:
            value = estimate(kept)
        except (ValueError, KeyError, ZeroDivisionError, np.linalg.LinAlgError, StopIteration):
            continue
        if value == value:
            out[part] = value
    return out


def _p_relative(row: dict, hib: bool, threshold: float, alternative: str) -> float:
    """One-sided p-value against "relative difference <= threshold" (``greater``) or ">= threshold"
    (``less``), from the ratio's inference: relative = 1 - R (higher is better) or R - 1."""
    ci = row["ci"]
    if hib:  # relative > t  <=>  R < 1 - t
        return ci.p_value(1.0 - threshold, "less" if alternative == "greater" else "greater")
    return ci.p_value(1.0 + threshold, alternative)


def _p_hold_fail(kind: str, row: dict, hib: bool, threshold: float) -> tuple[float, float]:
    """p-values for "the claim holds in this comparison" and "it does not hold", each to be
    compared with alpha: two one-sided p-values doubled (so the decision is the two-sided interval's
    bound against the threshold, as printed), and for ``equivalent`` the TOST p (the larger of the
    two one-sided p-values at +-threshold, i.e. the 1 - 2 alpha interval inside the margin)."""
    def two(p):
        return min(1.0, 2.0 * p)

    if kind == "overhead_at_most":
        return two(_p_relative(row, hib, threshold, "less")), two(_p_relative(row, hib, threshold, "greater"))
    if kind == "overhead_at_least":
        return two(_p_relative(row, hib, threshold, "greater")), two(_p_relative(row, hib, threshold, "less"))
    if kind == "better":
        return two(_p_relative(row, hib, -threshold, "less")), two(_p_relative(row, hib, -threshold, "greater"))
    if kind == "equivalent":
        above, below = _p_relative(row, hib, threshold, "greater"), _p_relative(row, hib, -threshold, "less")
        tost = max(_p_relative(row, hib, threshold, "less"), _p_relative(row, hib, -threshold, "greater"))
        return tost, two(min(above, below))
    raise ValueError(f"unknown kind {kind!r}")


def _decide(rows: list[dict], alpha: float) -> str:
    """The claim's verdict over its comparisons (one family), setting each row's ``verdict``.

    * ``holds`` when every comparison holds at ``alpha`` (an intersection-union test: the claim is
      the conjunction of its comparisons, so each is tested at alpha with no correction and the
      claim's error stays at most alpha);
    * ``does not hold`` when at least one comparison's "does not hold" p-value, Holm-adjusted
      across the claim's comparisons (:func:`stats.holm`; comparisons without a test are left out),
      is below ``alpha``: a counterexample is shown with the family-wise error controlled;
    * ``inconclusive`` otherwise.
    """
    fail = stats.holm([r["p_fail"] for r in rows])
    for row, p in zip(rows, fail):
        row["holm_p_fail"] = float(p)
        row["verdict"] = "holds" if row["p_hold"] < alpha else "does not hold" if p < alpha else "inconclusive"
    if any(r["verdict"] == "does not hold" for r in rows):
        return "does not hold"
    if all(r["verdict"] == "holds" for r in rows):
        return "holds"
    return "inconclusive"


def _badness(kind: str, value: float) -> float:
    if math.isnan(value):
        return math.inf
    if kind == "overhead_at_least":
        return -value
    if kind == "equivalent":
        return abs(value)
    return value  # at_most, better, order: a larger overhead is worse


_SEVERITY = {"holds": 0, "inconclusive": 1, "does not hold": 2}


def _shown(verdict: str, kind: str, rows: list[dict]) -> dict:
    """The comparison the row shows: the strongest counterexample (smallest Holm-adjusted p), else
    the worst of the rest (inconclusive before holding, then the largest badness of the value)."""
    if verdict == "does not hold":
        return min(rows, key=lambda r: r["holm_p_fail"])
    return max(rows, key=lambda r: (_SEVERITY[r["verdict"]], _badness(kind, r["value"])))


def _compare(table, check, plat_name, base_name, kind, threshold, level, seed):
    """Rows (one per variant, or one aggregate) comparing two platforms, with their p-values."""
    where = check.get("where") or {}
    if check["metric"] == "isolation_efficiency":
        scaling = ISOLATION_PARAMETER
    else:
        scaling = SCALING_PARAMETER.get(check["benchmark"]) if check["metric"] == "parallel_speedup" else None
    sides, why = {}, []
    for name in dict.fromkeys((plat_name, base_name)):
        try:
            sides[name] = _records(table, check, name)
        except NotMeasured as reason:
            why.append(str(reason))
    if why:
        raise NotMeasured("; ".join(why))
    plat, base = sides[plat_name], sides[base_name]
    dims = _dimensions([plat, base], where, set())
    if scaling:
        col = f"param_{scaling}" if f"param_{scaling}" in plat.columns else scaling
        if col not in dims:
            dims.append(col)
    pairs, unpaired, _ = _pairs(plat, base, dims, scaling)
    problems = []
    if scaling:
        pairs, problems = _speedup_pairs(pairs, col, check)
    if not pairs:
        raise NotMeasured(
            f"no {check['benchmark']} variant run on both {plat_name} and {base_name}"
            + (f" ({'; '.join(problems)})" if problems else "")
        )
    unit = plat["unit"].iloc[0] if "unit" in plat.columns and len(plat) else None
    hib = higher_is_better(check["metric"], unit, check["benchmark"])
    rows = _relative_ci(pairs, hib, level, check.get("aggregate") == "mean", seed)
    for row in rows:
        row["p_hold"], row["p_fail"] = _p_hold_fail(kind, row, hib, threshold)
        row["test"] = (kind, threshold)
    # values a where list asked for that were not run on both sides
    missing = []
    for key, value in where.items():
        if isinstance(value, list):
            have = set(_column_text(plat, f"param_{key}")) | set(_column_text(plat, key))
            have &= set(_column_text(base, f"param_{key}")) | set(_column_text(base, key))
            missing += [f"{key}={_text(v)}" for v in value if _text(v) not in have]
    return rows, missing + [f"only on {plat_name}: {u}" for u in unpaired] + problems


def _percent(value: float) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:+.1f}%"
