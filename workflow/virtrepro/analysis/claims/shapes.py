"""The kinds about the shape of the data (``trend``, ``spread``, ``saturation``) and the kinds that
compare across a claim's variants (``ratio_of_overheads``, ``better_in_some``): each gives rows as
:func:`virtrepro.analysis.claims.intervals._compare` does, decided the same way."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .. import stats
from .intervals import (
    _by_part_of_frames, _compare, _component_halves, _decide, _n, _part_ratios, _product_ci, higher_is_better,
)
from .selection import (
    NotMeasured, _Pair, _column_text, _dim_name, _dimensions, _numeric_first, _pairs, _records, _text, _where_text,
)


# ---------------------------------------------------------------------------
# Trends, spreads and saturation points (the kinds about the shape of the data)
# ---------------------------------------------------------------------------


def _over_column(frame: pd.DataFrame, over: str) -> str:
    return f"param_{over}" if f"param_{over}" in frame.columns else over


def _cells(rows: pd.DataFrame, dims: list[str], over_col: str) -> dict:
    """``{(variant key, parameter value as text): sample}``."""
    keys = list(zip(*[_column_text(rows, d) for d in dims])) if dims else [()] * len(rows)
    out: dict = {}
    for key, step, value in zip(keys, _column_text(rows, over_col), rows["value"].to_numpy(float)):
        out.setdefault((key, step), []).append(value)
    return {k: np.asarray(v) for k, v in out.items()}


def _variant_label(dims: list[str], key: tuple) -> str:
    return ", ".join(f"{_dim_name(d)}={v}" for d, v in zip(dims, key) if v)


def _shape_sides(table: pd.DataFrame, check: dict, names: list[str]):
    """Each named platform's records, the variant dimensions without ``over`` and ``over``'s column."""
    sides = [_records(table, check, name) for name in names]
    over_col = _over_column(sides[0], check["over"]) if check.get("over") else None
    dims = [d for d in _dimensions(sides, check.get("where") or {}, set()) if d != over_col]
    return sides, dims, over_col


def _two_sided(p: float) -> float:
    return min(1.0, 2.0 * p) if p == p else p


def _trend_rows(table: pd.DataFrame, check: dict, names: list[str], level: float) -> tuple[list[dict], list[str]]:
    """``trend``: the slope of log(value) (with a baseline: of log(platform / baseline)) over the
    steps of ``over`` in their order (:func:`stats.log_slope`), per variant or pooled across variants
    (``aggregate: mean``); shown as the change per step in the worse direction (positive = worsens).
    ``direction: flat`` with a ``threshold`` t: the slope stays within +-log(1 + t) a step (holds when
    its interval lies inside, does not hold when it lies beyond one bound)."""
    sides, dims, over_col = _shape_sides(table, check, names)
    cells = [_cells(side, dims, over_col) for side in sides]
    steps = set.intersection(*[{s for _, s in c} for c in cells])
    steps = sorted(steps, key=_numeric_first)
    if len(steps) < 2:
        raise NotMeasured(f"no second {check['over']} value run on {' and '.join(names)} (a trend needs two or more)")
    index = {s: i for i, s in enumerate(steps)}
    stepped = [_stepped(c, index) for c in cells]
    variants = sorted({k for k, _ in stepped[0]})
    groups = [variants] if check.get("aggregate") == "mean" else [[v] for v in variants]
    sign = -1.0 if higher_is_better(check["metric"], sides[0]["unit"].iloc[0], check["benchmark"]) else 1.0
    worsens = check["direction"] == "worsens"
    # flat: the change per step stays within +-threshold (log bound b), i.e. the interval inside (-b, b)
    bound = math.log1p(float(check["threshold"])) if check["direction"] == "flat" else None
    rows = []
    test = {"worsens": ("overhead_at_least", 0.0), "improves": ("better", 0.0)}.get(check["direction"])
    for group in groups:
        pick = [_picked(side, group) for side in stepped]
        est = stats.log_slope(pick[0], pick[1] if len(pick) > 1 else None, level)
        p_worse = est.p_value(0.0, "greater" if sign > 0 else "less")
        p_better = est.p_value(0.0, "less" if sign > 0 else "greater")
        p_hold, p_fail = (p_worse, p_better) if worsens else (p_better, p_worse)
        if bound is not None:  # inside both bounds (holds), or beyond one of them (does not hold)
            p_hold = max(est.p_value(-bound, "greater"), est.p_value(bound, "less"))
            p_fail = min(est.p_value(bound, "greater"), est.p_value(-bound, "less"))
        ends = sorted(math.expm1(sign * b) for b in (est.low, est.high))
        label = (f"geometric mean over {len(group)} variants" if len(groups) == 1 and len(group) > 1
                 else _variant_label(dims, group[0]))  # fmt: skip
        label = (label + ", " if label else "") + f"{check['over']} {steps[0]}..{steps[-1]} ({len(steps)} steps)"
        rows.append({"label": label, "value": math.expm1(sign * est.estimate), "ci_low": ends[0], "ci_high": ends[1],
                     "n_platform": sum(len(v) for v in pick[0].values()),
                     "n_baseline": sum(len(v) for v in pick[1].values()) if len(pick) > 1 else 0,
                     "ci_method": "ols-log", "ci_note": "" if est.tested else est.note,
                     "p_hold": _two_sided(p_hold), "p_fail": _two_sided(p_fail),
                     "test": test or ("equivalent", float(check["threshold"])),
                     "by_part": lambda group=group: _by_part_of_frames(sides, lambda kept: math.expm1(sign * stats.log_slope(
                         *([_picked(_stepped(_cells(k, dims, over_col), index), group) for k in kept] + [None])[:2],
                         level).estimate))})  # fmt: skip
    return rows, []


def _stepped(cells: dict, index: dict) -> dict:
    """``cells`` keyed by (variant, step number) for the steps of ``index``."""
    return {(k, index[s]): v for (k, s), v in cells.items() if s in index}


def _picked(stepped: dict, group: list) -> dict:
    return {c: v for c, v in stepped.items() if c[0] in group}


def _spread_rows(table: pd.DataFrame, check: dict, names: list[str], level: float) -> tuple[list[dict], list[str]]:
    """``spread``: the platform's relative scatter against the baseline's (Brown-Forsythe,
    :func:`stats.spread_difference`), per paired variant or pooled (``aggregate: mean``)."""
    sides, dims, _ = _shape_sides(table, check, names)
    keyed = [_keyed(side, dims) for side in sides]
    variants = sorted(set(keyed[0]) & set(keyed[1]))
    if not variants:
        raise NotMeasured(f"no {check['benchmark']} variant run on both {names[0]} and {names[1]}")
    groups = [variants] if check.get("aggregate") == "mean" else [[v] for v in variants]
    larger = check["direction"] == "larger"
    rows = []
    for group in groups:
        est = stats.spread_difference([keyed[0][v] for v in group], [keyed[1][v] for v in group], level)
        p_up, p_down = est.p_value(0.0, "greater"), est.p_value(0.0, "less")
        label = f"pooled over {len(group)} variants" if len(group) > 1 else _variant_label(dims, group[0])
        rows.append({"label": label, "value": est.estimate, "ci_low": est.low, "ci_high": est.high,
                     "n_platform": sum(len(keyed[0][v]) for v in group), "n_baseline": sum(len(keyed[1][v]) for v in group),
                     "ci_method": "brown-forsythe", "ci_note": "" if est.tested else est.note,
                     "p_hold": _two_sided(p_up if larger else p_down), "p_fail": _two_sided(p_down if larger else p_up),
                     "test": ("overhead_at_least" if larger else "better", 0.0),
                     "by_part": lambda group=group: _by_part_of_frames(sides, lambda kept: stats.spread_difference(
                         *[[_keyed(k, dims)[v] for v in group] for k in kept], level).estimate)})  # fmt: skip
    return rows, []


def _keyed(side: pd.DataFrame, dims: list[str]) -> dict:
    """``{variant key: values}`` of one side's records."""
    keys = list(zip(*[_column_text(side, d) for d in dims])) if dims else [()] * len(side)
    groups: dict = {}
    for key, value in zip(keys, side["value"].to_numpy(float)):
        groups.setdefault(key, []).append(value)
    return groups


def saturation_bounds(samples: list, gain: float, level: float = 0.95) -> dict:
    """Where a throughput stops growing, from samples at increasing sizes ``s_0 < ... < s_k``.

    The saturation point is the first size from which every further step gains less than ``gain``
    (``R_i - 1 < gain``, ``R_i`` the Hodges-Lehmann ratio of s_i+1 to s_i). Each step's ratio has the
    exact Mann-Whitney interval (:func:`stats.hl_ratio_ci`); ``latest`` is the first index from which every step gains
    significantly less than ``gain`` (each at alpha: an intersection-union test), ``earliest`` the index
    after the last step that gains significantly more (Holm across the steps), ``estimate`` the point
    estimate's index. ``latest`` is ``k`` (the largest size) when the last step is not shown flat.
    """
    alpha = 1.0 - level
    cis = [stats.hl_ratio_ci(b, a, level) for a, b in zip(samples, samples[1:])]
    grows = stats.holm([_two_sided(ci.p_value(1.0 + gain, "greater")) for ci in cis])
    flat = [_two_sided(ci.p_value(1.0 + gain, "less")) for ci in cis]
    k = len(samples) - 1
    earliest = max([i + 1 for i, p in enumerate(grows) if p < alpha], default=0)
    latest = next((j for j in range(k + 1) if all(p < alpha for p in flat[j:])), k)
    estimate = next(j for j in range(k + 1) if all(ci.estimate - 1.0 < gain for ci in cis[j:]))
    return {"earliest": earliest, "latest": latest, "estimate": estimate, "gains": [ci.estimate - 1.0 for ci in cis]}


def _saturation_rows(table: pd.DataFrame, check: dict, names: list[str], level: float) -> tuple[list[dict], list[str]]:
    """``saturation``: per variant, the bounds of the saturation point (:func:`saturation_bounds`)
    against the claim's ``between: [low, high]`` sizes: holds when both bounds lie inside, does not
    hold when they lie entirely outside, else inconclusive."""
    (side,), dims, over_col = _shape_sides(table, check, names)
    cells = _cells(side, dims, over_col)
    low, high = (float(v) for v in check["between"])
    rows = []
    for key in sorted({k for k, _ in cells}):
        steps = sorted((s for k, s in cells if k == key), key=_numeric_first)
        if len(steps) < 2:
            continue
        sizes = [float(s) for s in steps]
        got = saturation_bounds([cells[(key, s)] for s in steps], float(check["gain"]), level)
        first = sizes[got["earliest"]]
        # not shown flat up to the largest size: it may saturate beyond the sizes run
        last = sizes[got["latest"]] if got["latest"] < len(sizes) - 1 else math.inf
        verdict = "holds" if low <= first and last <= high else "does not hold" if last < low or first > high else "inconclusive"
        gains = ", ".join(f"{a}->{b} {100 * g:+.0f}%" for a, b, g in zip(steps, steps[1:], got["gains"]))
        label = (_variant_label(dims, key) + ", " if _variant_label(dims, key) else "") + f"{check['over']} {steps[0]}..{steps[-1]}"
        def by_part(key=key, steps=steps, sizes=sizes):
            def size(kept):
                part_cells = _cells(kept[0], dims, over_col)
                samples = [part_cells[(key, s)] for s in steps]
                if any(len(x) < 2 for x in samples):
                    raise ValueError("fewer than 2 values at a size")
                return sizes[saturation_bounds(samples, float(check["gain"]), level)["estimate"]]
            return _by_part_of_frames([side], size)

        rows.append({"test": ("between", (low, high)), "by_part": by_part,
                     "label": label, "value": sizes[got["estimate"]], "ci_low": first, "ci_high": last,  # sizes
                     "n_platform": sum(len(cells[(key, s)]) for s in steps), "n_baseline": 0, "ci_method": "hl-moses-steps",
                     "ci_note": f"saturation size {_text(sizes[got['estimate']])} (bounds {_text(first)}..{_text(last)}) "
                                f"against {_text(low)}..{_text(high)}; gains per step: {gains}",
                     "verdict": verdict, "holm_p_fail": 0.0 if verdict == "does not hold" else 1.0})  # fmt: skip
    if not rows:
        raise NotMeasured(f"no second {check['over']} value run on {names[0]} (a saturation needs two or more)")
    return rows, []


def _shape_verdict(kind: str, rows: list[dict], alpha: float) -> str:
    if kind != "saturation":
        return _decide(rows, alpha)
    verdicts = {r["verdict"] for r in rows}
    return "does not hold" if "does not hold" in verdicts else "holds" if verdicts == {"holds"} else "inconclusive"


# ---------------------------------------------------------------------------
# Kinds that compare across a claim's variants: one platform's overheads on two selections, and
# "better in some variant" (each gives one row, decided by _decide like the others)
# ---------------------------------------------------------------------------


def versus_selection(check: dict) -> dict:
    """The second selection of a ``ratio_of_overheads`` check: the check with ``versus``' benchmark,
    metric and ``where`` (``where`` is replaced, not merged; what ``versus`` leaves out is the check's)."""
    other = {k: v for k, v in check.items() if k not in ("where", "versus")}
    other.update(check["versus"])
    return other


def _selection(table, check: dict, plat_name: str, base_name: str) -> tuple[list[_Pair], bool]:
    """The paired variants of one selection (benchmark, metric, ``where``) on the two platforms, and
    whether its metric is higher-is-better."""
    where = check.get("where") or {}
    plat, base = _records(table, check, plat_name), _records(table, check, base_name)
    pairs, _, _ = _pairs(plat, base, _dimensions([plat, base], where, set()), None)
    if not pairs:
        shown = _where_text(where)
        raise NotMeasured(f"no {check['benchmark']} variant{' with ' + shown if shown else ''} run on both {plat_name} and {base_name}")
    return pairs, higher_is_better(check["metric"], None, check["benchmark"])


def _ratio_of_overheads_rows(table, check: dict, names: list[str], level: float, seed: int) -> tuple[list[dict], list[str]]:
    """``ratio_of_overheads``: the platform's overhead on the check's selection against its overhead
    on ``versus``, as the quotient q = W_1 / W_2 of the two "worse-direction" ratios, each the
    geometric mean over its selection's paired variants of platform / baseline (lower-is-better
    metrics) or baseline / platform (higher-is-better ones), so W > 1 is an overhead whatever the
    metric. One interval (:func:`_product_ci` over the ratios of both
    selections, the two independent: they must not share records). ``value`` is q - 1 (positive: the first overhead is the larger);
    holds when q's interval lies above 1 + threshold, does not hold when it lies below."""
    plat_name, base_name = names
    sizes, labels, weighted = [0, 0], [], []
    for sign, selection in ((1.0, check), (-1.0, versus_selection(check))):
        pairs, hib = _selection(table, selection, plat_name, base_name)
        power = sign * (-1.0 if hib else 1.0) / len(pairs)
        weighted += [(pair, power) for pair in pairs]
        sizes[0] += sum(_n(p.plat) for p in pairs)
        sizes[1] += sum(_n(p.base) for p in pairs)
        shown = _where_text(selection.get("where"))
        labels.append(f"{selection['benchmark']} {selection['metric']}{' ' + shown if shown else ''} ({len(pairs)} variants)")
    ci, components = _product_ci(weighted, level, stats.seed_for(seed, "ratio_of_overheads"))
    bound = 1.0 + float(check["threshold"])
    row = {"label": " vs ".join(labels), "value": ci.estimate - 1.0, "ci_low": ci.low - 1.0, "ci_high": ci.high - 1.0,
           "n_platform": sizes[0], "n_baseline": sizes[1], "ci": ci, "ci_method": ci.method, "ci_note": ci.note,
           "too_few": ci.too_few, "test": ("overhead_at_least", float(check["threshold"])),
           "drift_unit": "part of the run order" if components is None else "half of the rounds",
           "by_part": lambda: {part: q - 1.0 for part, q in (_part_ratios(weighted) if components is None
                                                              else _component_halves(components)).items()},
           "p_hold": _two_sided(ci.p_value(bound, "greater")), "p_fail": _two_sided(ci.p_value(bound, "less"))}  # fmt: skip
    return [row], []


def _better_in_some_rows(table, check: dict, names: list[str], level: float, seed: int) -> tuple[list[dict], list[str]]:
    """``better_in_some``: the platform is better than the baseline by more than ``threshold`` in at
    least one variant ("in several cases"). Each variant is compared as ``better`` (:func:`_compare`);
    the claim's row is the variant most clearly better, its "holds" p-value Holm-adjusted over the k
    variants (the first step of Holm's method, k times the smallest p: an existence claim needs the
    correction), its "does not hold" p-value the largest of the variants' (every variant must be shown
    not better: an intersection-union test)."""
    plat, base = names
    rows, notes = _compare(table, check, plat, base, "better", float(check.get("threshold", 0.0)), level, seed)
    k = len(rows)
    witness = min(rows, key=lambda r: (r["p_hold"] != r["p_hold"], r["p_hold"], r["value"]))
    fails = [r["p_fail"] for r in rows]
    row = dict(witness)
    row["label"] = f"best of {k} variant{'s' if k > 1 else ''}" + (f": {witness['label']}" if witness["label"] else "")
    row["p_hold"] = min(1.0, k * witness["p_hold"])
    if k > 1:  # the shown interval is the variant's own: say that the verdict weighs it against k variants
        said = f"the most clearly better of {k} variants, its p-value for 'better' x {k} (Holm) = {row['p_hold']:.3g}"
        row["ci_note"] = "; ".join(n for n in (said, witness["ci_note"]) if n)
    row["p_fail"] = float("nan") if any(p != p for p in fails) else max(fails)
    return [row], notes


ACROSS_VARIANT_KINDS = {"ratio_of_overheads": _ratio_of_overheads_rows, "better_in_some": _better_in_some_rows}
