"""The figures' and summaries' comparisons, with the verdicts' methods: a platform's overhead
against a baseline (:func:`overhead`, :func:`compare_to_baseline`, one Holm family per call), a
sample's median (:func:`location_ci`, :func:`summarize`), outlier rules, paired rounds and the drift
between the parts of the run order."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .rank import RatioCI, _clean, hl_paired_ci, hl_ratio_ci, median_order_ci, shapiro_p


def location_ci(values, level: float = 0.95) -> dict:
    """n, mean, median, std and the median's distribution-free interval (:func:`median_order_ci`:
    order statistics, exact coverage for any continuous distribution, stated in ``ci_note``; none
    below 6 values at 95 %). ``ci_of`` names the estimand (``median``), ``shapiro_p`` is a description."""
    x = _clean(values)
    nan = float("nan")
    out = {
        "n": int(x.size), "mean": float(x.mean()) if x.size else nan,
        "std": float(x.std(ddof=1)) if x.size > 1 else nan, "median": float(np.median(x)) if x.size else nan,
        "shapiro_p": shapiro_p(x), "ci_method": "none", "ci_of": "", "ci_low": nan, "ci_high": nan, "ci_note": "",
    }  # fmt: skip
    if x.size == 0:
        out["ci_note"] = "no values"
        return out
    low, high, coverage = median_order_ci(x, level)
    if low == low:
        out.update(ci_method="median-order", ci_of="median", ci_low=low, ci_high=high,
                   ci_note=f"order-statistic interval of the median, achieved confidence {coverage:.1%}")  # fmt: skip
    else:
        out["ci_note"] = f"no {level:.0%} interval of the median at n = {x.size} (at most {coverage:.1%})"
    return out


def summarize(frame: pd.DataFrame, by: list[str], level: float = 0.95, value: str = "value") -> pd.DataFrame:
    """Per group, over the group's non-NaN values: n, mean, std, median, the Shapiro-Wilk p-value
    (a description) and the median's interval (:func:`location_ci`): columns ``ci_low``, ``ci_high``,
    ``ci_method``, ``ci_of``, ``ci_note``, ``level``."""
    rows = []
    for key, group in frame.groupby(by, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(by, key)), **location_ci(group[value], level), "level": level})
    columns = [*by, "n", "mean", "std", "median", "shapiro_p", "ci_method", "ci_of", "ci_low", "ci_high", "ci_note", "level"]
    return pd.DataFrame(rows, columns=columns)


# ---------------------------------------------------------------------------
# Comparing a platform with a baseline
# ---------------------------------------------------------------------------
#
# Conventions shared by everything below:
#
# - "baseline" is the reference sample (e.g. native), "platform" the sample
#   under test (e.g. a VM or container).
# - ratio = the Hodges-Lehmann ratio platform / baseline (hl_ratio_ci: exp of the median of all
#   log x_i - log y_j), with its exact Mann-Whitney interval.
# - overhead_percent is positive when the platform is WORSE than the baseline,
#   whatever the metric's direction:
#       higher is better (throughput, bandwidth, FLOP/s): (1 - ratio) * 100
#       lower is better  (times, latencies):              (ratio - 1) * 100
#   The mapping assumes a metric with positive values (a positive baseline
#   mean); for metrics that can be negative the ratio is still reported but
#   the percentage has no "overhead" meaning.
# - Differences and test statistics are oriented platform minus baseline.
# - NaN values are removed before any computation; an interval or p-value that
#   cannot be computed is NaN, never a made-up number.
# - alpha = 1 - level everywhere.

def _ratio_to_overhead(ratio: float, higher_is_better: bool) -> float:
    return (1.0 - ratio) * 100.0 if higher_is_better else (ratio - 1.0) * 100.0


def _overhead_interval(low: float, high: float, higher_is_better: bool) -> tuple[float, float]:
    """Map a ratio interval to an overhead-percent interval (kept ordered low <= high)."""
    a = _ratio_to_overhead(low, higher_is_better)
    b = _ratio_to_overhead(high, higher_is_better)
    if np.isnan(a) or np.isnan(b):
        return float("nan"), float("nan")
    return (min(a, b), max(a, b))


def overhead(baseline_values, platform_values, higher_is_better: bool, level: float = 0.95,
             paired: bool = False) -> dict:
    """The ratio platform / baseline (:func:`hl_ratio_ci`: Hodges-Lehmann with the exact Mann-Whitney
    interval), the overhead in percent and their intervals.

    ``overhead_percent`` is positive when the platform is worse than the baseline: ``(1 - ratio) *
    100`` if ``higher_is_better`` (throughput), else ``(ratio - 1) * 100`` (times, latencies), so
    +10 means "10 % worse" for both kinds of metric. ``overhead_ci_low <= overhead_ci_high`` always.
    No interval (``method`` ``none``, ``too_few``) where the sizes allow none at ``level`` (3 + 3 at
    95 %), and none for a value that is not positive; ``ci_note`` says why, or the achieved confidence.
    Returns a dict with keys ``n_baseline, n_platform, mean_baseline, mean_platform, ratio,
    ratio_ci_low, ratio_ci_high, overhead_percent, overhead_ci_low, overhead_ci_high, ci_note, level,
    method, achieved, too_few, shapiro_p_baseline, shapiro_p_platform, higher_is_better`` and ``ci``
    (the :class:`RatioCI`, for p-values). ``paired``: ``platform_values[i]`` and
    ``baseline_values[i]`` were measured in one round (:func:`by_round`), and the ratio is
    :func:`hl_paired_ci`'s (the exact signed-rank interval of the rounds' log ratios)."""
    if paired:
        plat, base = np.asarray(platform_values, dtype=float), np.asarray(baseline_values, dtype=float)
        keep = ~(np.isnan(plat) | np.isnan(base))
        plat, base = plat[keep], base[keep]
    else:
        base, plat = _clean(baseline_values), _clean(platform_values)
    if base.size == 0 or plat.size == 0:
        raise ValueError("both samples need at least one non-NaN value")
    ci = hl_paired_ci(plat, base, level) if paired else hl_ratio_ci(plat, base, level)
    o_low, o_high = _overhead_interval(ci.low, ci.high, higher_is_better)
    return {
        "n_baseline": int(base.size), "n_platform": int(plat.size),
        "mean_baseline": float(base.mean()), "mean_platform": float(plat.mean()),
        "ratio": ci.estimate, "ratio_ci_low": ci.low, "ratio_ci_high": ci.high,
        "overhead_percent": _ratio_to_overhead(ci.estimate, higher_is_better),
        "overhead_ci_low": o_low, "overhead_ci_high": o_high, "ci_note": ci.note, "level": level,
        "method": ci.method, "achieved": ci.achieved, "too_few": ci.too_few,
        "shapiro_p_platform": ci.shapiro[0] if ci.shapiro and not paired else float("nan"),
        "shapiro_p_baseline": ci.shapiro[1] if ci.shapiro and not paired else float("nan"),
        "higher_is_better": bool(higher_is_better), "ci": ci,
    }  # fmt: skip


def rank_p(ci: RatioCI, r0: float = 1.0) -> float:
    """Two-sided p-value of the ratio ``r0`` from a rank interval's inversion (twice the smaller
    one-sided p, at most 1); NaN without an interval."""
    p = 2.0 * min(ci.p_value(r0, "greater"), ci.p_value(r0, "less"))
    return min(1.0, p) if p == p else float("nan")


def equivalence_p(ci: RatioCI, margin: float) -> float:
    """Two one-sided tests of the ratio against ``1 - margin`` and ``1 + margin`` (the larger of the
    two one-sided p-values: below alpha when the 1 - 2 alpha interval lies inside the margin)."""
    p = (ci.p_value(1.0 + margin, "less"), ci.p_value(1.0 - margin, "greater"))
    return max(p) if p == p and all(x == x for x in p) else float("nan")


def holm(p_values) -> np.ndarray:
    """Holm step-down adjusted p-values, in the order given, over ONE family: the p-values given.

    Uses ``statsmodels.stats.multitest.multipletests(method="holm")``. NaN
    p-values (no test) are left out of the family (so they do not count towards the
    number of tests) and stay NaN in the output. The families this project uses: a figure or
    table's comparisons (:func:`compare_to_baseline`, one call per figure) and a claim's
    comparisons across its variants (:mod:`virtrepro.analysis.claims`).
    """
    p = np.asarray(p_values, dtype=float).ravel()
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    if ok.any():
        from statsmodels.stats.multitest import multipletests  # imported where used (the package's doc)

        out[ok] = multipletests(p[ok], method="holm")[1]
    return out


def outliers(values, rule: str = "none", k: float | None = None) -> np.ndarray:
    """Boolean mask, True for samples flagged as outliers. Nothing is removed.

    Rules
    -----
    ``"none"``: nothing is flagged.

    ``"iqr"`` (Tukey fences, default ``k = 1.5``): flag ``x < Q1 - k*IQR`` or
    ``x > Q3 + k*IQR``; ``IQR = scipy.stats.iqr`` and the quartiles by ``numpy.quantile``, both
    with linear interpolation (Hyndman-Fan type 7, as R's default).

    ``"mad"`` (default ``k = 3.5``): flag ``|x - median| > k * MAD`` with
    ``MAD = scipy.stats.median_abs_deviation(x, scale="normal")`` (``1.4826 * median|x - median|``);
    with ``k = 3.5`` this is the Iglewicz-Hoaglin modified z-score rule.

    Both comparisons are strict. With a zero spread (IQR or MAD = 0) every
    value away from the quartiles / median is flagged. NaN entries are never
    flagged and do not enter the quartiles or median.
    """
    data = np.asarray(values, dtype=float).ravel()
    mask = np.zeros(data.shape, dtype=bool)
    if rule in (None, "none"):
        return mask
    finite = ~np.isnan(data)
    x = data[finite]
    if rule not in ("iqr", "mad"):
        raise ValueError(f"unknown outlier rule {rule!r}; use 'none', 'iqr' or 'mad'")
    if x.size == 0:
        return mask
    from scipy import stats as scipy_stats  # imported where used (the package's doc)

    if rule == "iqr":
        k = 1.5 if k is None else k
        q1, q3 = np.quantile(x, [0.25, 0.75])
        spread = scipy_stats.iqr(x)
        flagged = (x < q1 - k * spread) | (x > q3 + k * spread)
    else:
        k = 3.5 if k is None else k
        flagged = np.abs(x - np.median(x)) > k * scipy_stats.median_abs_deviation(x, scale="normal")
    mask[finite] = flagged
    return mask


VERDICTS = ("equivalent", "worse", "better", "inconclusive")


def by_round(platform_values, platform_rounds, baseline_values, baseline_rounds):
    """The two sides' values paired by round, where both were measured in rounds: ``(platform,
    baseline, rounds)``, the values of the rounds both sides have, in the rounds' order; None (compare
    them unpaired) when a value of either side has no round (a log measured before rounds), a side
    has two values in one round, or no round is common to both. Values that are NaN are left out first."""
    sides = []
    for values, rounds in ((platform_values, platform_rounds), (baseline_values, baseline_rounds)):
        values = np.asarray(values, dtype=float).ravel()
        rounds = pd.to_numeric(pd.Series(np.asarray(rounds, dtype=object).ravel()), errors="coerce").to_numpy(float)
        if values.size != rounds.size:
            raise ValueError("one round a value")
        keep = ~np.isnan(values)
        values, rounds = values[keep], rounds[keep]
        if values.size == 0 or np.isnan(rounds).any() or np.unique(rounds).size != rounds.size:
            return None
        sides.append(dict(zip(rounds.astype(int).tolist(), values)))
    common = sorted(set(sides[0]) & set(sides[1]))
    if not common:
        return None
    return (np.array([sides[0][r] for r in common]), np.array([sides[1][r] for r in common]), np.array(common))


def round_halves(rounds) -> np.ndarray:
    """The half (1, 2) of each of ``rounds`` (distinct round numbers): of the n rounds sorted, the
    first ceil(n / 2) are half 1, the rest half 2 (as the table's ``part`` of data measured in rounds)."""
    rounds = np.asarray(rounds)
    first = np.sort(rounds)[: -(-rounds.size // 2)]
    return np.where(np.isin(rounds, first), 1, 2)


def compare_to_baseline(
    frame: pd.DataFrame,
    baseline: str,
    value: str = "value",
    by: list[str] | None = None,
    *,
    higher_is_better: bool | str,
    level: float = 0.95,
    margin: float = 0.05,
    platform: str = "platform",
    outlier_rule: str = "none",
    outlier_k: float | None = None,
) -> pd.DataFrame:
    """Compare every non-baseline platform with ``baseline``, per group: ONE Holm family.

    The rows one call returns are one family of tests for Holm's correction: call it once per
    figure (or table) with all the comparisons that figure shows, so a comparison has the same
    adjusted p-value wherever that figure is drawn (``holm_family_size`` says how many tests the
    family had). Claims have their own families (:mod:`virtrepro.analysis.claims`).

    For each group of ``by`` (all rows form one group when ``by`` is empty or None) and each
    platform (column ``platform``) other than ``baseline``, one row with:

    - the ``by`` columns, ``platform``, ``baseline``;
    - ``n_baseline, n_platform, mean_baseline, mean_platform`` (after NaN and outlier removal) and
      ``dropped_baseline, dropped_platform``: how many values the outlier rule removed (0 when
      ``outlier_rule="none"``, the default; the rule is applied to each sample on its own);
    - ``ratio, ratio_ci_low, ratio_ci_high, overhead_percent, overhead_ci_low, overhead_ci_high,
      ci_method, ci_note, achieved, shapiro_p_baseline, shapiro_p_platform`` from :func:`overhead`
      (the Hodges-Lehmann ratio and its exact Mann-Whitney interval; overhead > 0 means worse);
    - ``p_value``: the two-sided Mann-Whitney p of a ratio of 1 (:func:`rank_p`) and ``holm_p``, its
      Holm adjustment over all rows of this call (rows without a p are left out), ``holm_family_size``;
    - ``tost_p``: the equivalence p for a ratio within ``1 +- margin`` (:func:`equivalence_p`; not
      multiplicity-adjusted);
    - ``significant``: ``holm_p < alpha``;
    - ``verdict``, with ``alpha = 1 - level``: ``"equivalent"`` if ``tost_p < alpha`` (the only way
      to a "no relevant overhead" statement; a difference can be equivalent and significant), else
      ``"worse"`` / ``"better"`` if ``holm_p < alpha`` (in the direction of the ratio), else
      ``"inconclusive"`` (also with no interval at this n). A non-significant test alone never
      yields "equivalent".

    ``higher_is_better`` is a bool for the whole frame, or the name of a boolean column (constant
    within each group and platform pair). Groups where a side has no values still produce rows
    (verdict ``"inconclusive"``, ``ci_note`` says why).

    Where ``frame`` has a ``round`` column and both sides of a comparison were measured in rounds
    (:func:`by_round`), the comparison is paired by round: the ratio and its interval are
    :func:`hl_paired_ci`'s over the rounds both have (``ci_method`` ``hl-signed-rank``; ``n_baseline``
    and ``n_platform`` count those rounds); p-values invert that interval. With an outlier rule, or
    where :func:`by_round` pairs nothing, the samples are compared unpaired as above.
    """
    if outlier_rule not in (None, "none", "iqr", "mad"):
        raise ValueError(f"unknown outlier rule {outlier_rule!r}")
    by = list(by or [])
    alpha = 1.0 - level
    data = frame[frame[platform].notna()]
    groups = data.groupby(by, sort=True, dropna=False) if by else [((), data)]

    rows = []
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        for other in sorted(p for p in group[platform].unique() if p != baseline):
            row = _comparison_row(group, baseline, other, value, platform, higher_is_better, level, margin,
                                  outlier_rule, outlier_k)
            rows.append({**dict(zip(by, key)), **row})
    columns = [*by, platform, *_COMPARED_COLUMNS]
    out = pd.DataFrame(rows, columns=[c for c in columns if c not in _DERIVED])
    _decide_family(out, alpha)
    out["level"], out["margin"], out["outlier_rule"] = level, margin, outlier_rule or "none"
    return out[columns]


def _comparison_row(group: pd.DataFrame, baseline: str, other: str, value: str, platform: str,
                    higher_is_better: bool | str, level: float, margin: float, outlier_rule: str | None,
                    outlier_k: float | None) -> dict:
    """One row of :func:`compare_to_baseline` (without its ``by`` columns): ``other`` against
    ``baseline`` in ``group``, paired by round where both sides were measured in rounds."""

    def sample(name) -> tuple[np.ndarray, int]:
        values = _clean(group.loc[group[platform] == name, value])
        flagged = outliers(values, outlier_rule, outlier_k)
        return values[~flagged], int(flagged.sum())

    base, base_dropped = sample(baseline)
    plat, plat_dropped = sample(other)
    mine, theirs = group[group[platform] == other], group[group[platform] == baseline]
    hib = _direction(pd.concat([theirs, mine]), higher_is_better)
    row = {platform: other, "baseline": baseline, "dropped_baseline": base_dropped,
           "dropped_platform": plat_dropped, "higher_is_better": hib}
    paired = None
    if "round" in group.columns and outlier_rule in (None, "none"):
        paired = by_round(mine[value], mine["round"], theirs[value], theirs["round"])
    if paired is not None:
        row.update(_compared(paired[1], paired[0], hib, level, margin, paired=True))
    else:
        row.update(_compared(base, plat, hib, level, margin))
    return row


# compare_to_baseline's columns after the ``by`` columns and the platform's
_COMPARED_COLUMNS = [
    "baseline", "n_baseline", "n_platform", "dropped_baseline", "dropped_platform",
    "mean_baseline", "mean_platform", "higher_is_better", "ratio", "ratio_ci_low", "ratio_ci_high",
    "overhead_percent", "overhead_ci_low", "overhead_ci_high", "ci_method", "ci_note", "achieved",
    "shapiro_p_baseline", "shapiro_p_platform", "p_value", "holm_p", "holm_family_size", "tost_p",
    "significant", "verdict", "level", "margin", "outlier_rule",
]  # fmt: skip


def _decide_family(out: pd.DataFrame, alpha: float) -> None:
    """Holm over the rows of one :func:`compare_to_baseline` call (one family), and each row's verdict."""
    out["holm_p"] = holm(out["p_value"].to_numpy(float)) if len(out) else []
    out["holm_family_size"] = int(out["p_value"].notna().sum())
    out["significant"] = out["holm_p"] < alpha
    out["verdict"] = [
        "equivalent" if tost < alpha else ("better" if ratio_better else "worse") if sig else "inconclusive"
        for tost, sig, ratio_better in zip(out["tost_p"], out["significant"], out["overhead_percent"] < 0)
    ]


_DERIVED = ("holm_p", "holm_family_size", "significant", "verdict", "level", "margin", "outlier_rule")


def _direction(rows: pd.DataFrame, higher_is_better: bool | str) -> bool:
    if isinstance(higher_is_better, str):
        flags = rows[higher_is_better].dropna().unique()
        if len(flags) != 1:
            raise ValueError(f"column {higher_is_better!r} must hold one value per group, got {list(flags)}")
        return bool(flags[0])
    return bool(higher_is_better)


def _compared(base: np.ndarray, plat: np.ndarray, hib: bool, level: float, margin: float, paired: bool = False) -> dict:
    """One comparison's columns of :func:`compare_to_baseline` (NaN, with the reason, without values)."""
    nan = float("nan")
    if not (base.size and plat.size):
        return {"n_baseline": int(base.size), "n_platform": int(plat.size),
                "mean_baseline": float(base.mean()) if base.size else nan,
                "mean_platform": float(plat.mean()) if plat.size else nan,
                "ratio": nan, "ratio_ci_low": nan, "ratio_ci_high": nan, "overhead_percent": nan,
                "overhead_ci_low": nan, "overhead_ci_high": nan, "ci_method": "none", "achieved": nan,
                "ci_note": "no values for the baseline" if not base.size else "no values for the platform",
                "shapiro_p_baseline": shapiro_p(base), "shapiro_p_platform": shapiro_p(plat),
                "p_value": nan, "tost_p": nan}  # fmt: skip
    res = overhead(base, plat, hib, level, paired=paired)
    ci = res.pop("ci")
    res["ci_method"] = res.pop("method")
    for key in ("level", "too_few", "higher_is_better"):
        res.pop(key)
    return {**res, "p_value": rank_p(ci), "tost_p": equivalence_p(ci, margin)}


def drift_between_parts(table: pd.DataFrame, platform: str, level: float = 0.95) -> pd.DataFrame:
    """A platform's second part against its first, per benchmark, variant and metric.

    The workflow measured a variant's repetitions in two parts, in the order A B C D D C B A
    over (platform, part), before it measured in rounds (docs/methodology.md, "Run order"): for the first platform (the
    baseline) the two parts are the furthest apart in time, so a drift of the host over the run
    shows there first. One row per group with both parts: ``n_part1, n_part2, mean_part1,
    mean_part2`` and ``ratio`` (part 2 / part 1, :func:`hl_ratio_ci`) with its interval (NaN where
    the data carry none at this n, with ``ci_note``). Logs measured before the parts existed (``part`` empty)
    are left out; an empty frame when none has both parts."""
    columns = ["benchmark", "variant", "metric", "n_part1", "n_part2", "mean_part1", "mean_part2",
               "ratio", "ratio_ci_low", "ratio_ci_high", "ci_method", "ci_note"]
    if "part" not in table.columns:
        return pd.DataFrame(columns=columns)
    rows = []
    data = table[(table["platform"] == platform) & table["part"].notna()]
    for (benchmark, variant, metric), group in data.groupby(["benchmark", "variant", "metric"], sort=True):
        first = group.loc[group["part"] == 1, "value"].to_numpy(dtype=float)
        second = group.loc[group["part"] == 2, "value"].to_numpy(dtype=float)
        if first.size == 0 or second.size == 0 or np.nanmean(first) <= 0:
            continue
        interval = hl_ratio_ci(second, first, level)
        rows.append({"benchmark": benchmark, "variant": variant, "metric": metric,
                     "n_part1": int(np.isfinite(first).sum()), "n_part2": int(np.isfinite(second).sum()),
                     "mean_part1": float(np.nanmean(first)), "mean_part2": float(np.nanmean(second)),
                     "ratio": interval.estimate, "ratio_ci_low": interval.low, "ratio_ci_high": interval.high,
                     "ci_method": interval.method, "ci_note": interval.note})
    return pd.DataFrame(rows, columns=columns)


def paired_rounds(table: pd.DataFrame, baseline: str, level: float = 0.95) -> pd.DataFrame:
    """Platforms against ``baseline`` measured in alternating rounds (:mod:`virtrepro.measurement.interleave`).

    Repetition r of every platform ran back to back (round r), so the ratio platform / baseline of
    one round is a paired comparison made seconds apart: a drift of the host slower than a round
    cancels in it. Per platform, benchmark, variant, metric and labels, over the rounds both have:
    ``rounds``, ``above`` (rounds whose ratio exceeds 1), ``ratio`` (the Hodges-Lehmann estimate of
    the rounds' log ratios) and its exact signed-rank interval (:func:`hl_paired_ci`; none below 6
    rounds at 95 %, ``ci_note`` says why or its achieved confidence). Ratios are of the metric's
    values, whatever its direction. Rounds with a value that is not positive are left out (no log)."""
    columns = ["platform", "benchmark", "variant", "metric", "labels", "rounds", "above", "ratio",
               "ratio_ci_low", "ratio_ci_high", "ci_method", "ci_note"]
    keys = ["benchmark", "variant", "metric", "labels"]
    rounds = table.groupby([*keys, "repetition", "platform"])["value"].mean().unstack("platform")
    if baseline not in rounds.columns:
        return pd.DataFrame(columns=columns)
    rows = []
    for platform in sorted(set(rounds.columns) - {baseline}):
        for key, group in rounds[[platform, baseline]].groupby(level=keys, sort=True):
            both = group[(group[platform] > 0) & (group[baseline] > 0)]
            if both.empty:
                continue
            ci = hl_paired_ci(both[platform].to_numpy(float), both[baseline].to_numpy(float), level)
            rows.append({"platform": platform, **dict(zip(keys, key)), "rounds": len(both),
                         "above": int((both[platform] > both[baseline]).sum()), "ratio": ci.estimate,
                         "ratio_ci_low": ci.low, "ratio_ci_high": ci.high, "ci_method": ci.method, "ci_note": ci.note})
    return pd.DataFrame(rows, columns=columns)
