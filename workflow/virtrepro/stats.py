"""Summary statistics over repetitions and platform-vs-baseline comparisons.

statsmodels and scipy underneath. ``mean_ci``/``summarize`` describe one
sample per group; ``overhead``, ``welch_test``, ``holm``, ``outliers`` and
``compare_to_baseline`` compare a platform with a baseline (conventions are
stated in the comment block before ``overhead``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import DescrStatsW, ttost_ind


def mean_ci(values, level: float = 0.95) -> tuple[float, float, float]:
    """Mean and two-sided Student-t confidence interval of the mean.

    With one value the interval is undefined (NaN, NaN); it is never faked.
    """
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        raise ValueError("no values")
    mean = float(data.mean())
    if data.size < 2:
        return mean, float("nan"), float("nan")
    low, high = DescrStatsW(data).tconfint_mean(alpha=1 - level)
    return mean, float(low), float(high)


def summarize(frame: pd.DataFrame, by: list[str], level: float = 0.95, value: str = "value") -> pd.DataFrame:
    """n, mean, standard deviation and t confidence interval per group."""
    rows = []
    for key, group in frame.groupby(by, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        mean, low, high = mean_ci(group[value], level)
        rows.append(
            {
                **dict(zip(by, key)),
                "n": int(group[value].count()),
                "mean": mean,
                "std": float(group[value].std(ddof=1)) if len(group) > 1 else float("nan"),
                "ci_low": low,
                "ci_high": high,
                "level": level,
            }
        )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------
# Comparing a platform with a baseline
# ---------------------------------------------------------------------------
#
# Conventions shared by everything below:
#
# - "baseline" is the reference sample (e.g. native), "platform" the sample
#   under test (e.g. a VM or container).
# - ratio = mean(platform) / mean(baseline).
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

_UNBOUNDED_NOTE = (
    "Fieller interval unbounded: the baseline mean is not significantly different "
    "from 0 at this level (g = t^2 * var(mean_b) / mean_b^2 >= 1), so the ratio "
    "has no finite confidence interval"
)


def _clean(values) -> np.ndarray:
    data = np.asarray(values, dtype=float).ravel()
    return data[~np.isnan(data)]


def _ratio_to_overhead(ratio: float, higher_is_better: bool) -> float:
    return (1.0 - ratio) * 100.0 if higher_is_better else (ratio - 1.0) * 100.0


def _overhead_interval(low: float, high: float, higher_is_better: bool) -> tuple[float, float]:
    """Map a ratio interval to an overhead-percent interval (kept ordered low <= high)."""
    a = _ratio_to_overhead(low, higher_is_better)
    b = _ratio_to_overhead(high, higher_is_better)
    if np.isnan(a) or np.isnan(b):
        return float("nan"), float("nan")
    return (min(a, b), max(a, b))


def fieller_interval(
    mean_b: float, var_mean_b: float, mean_p: float, var_mean_p: float, t: float
) -> tuple[float, float, bool]:
    """Fieller interval for mean_p / mean_b with independent means.

    ``var_mean_*`` are the variances of the sample means (s^2 / n) and ``t`` the
    two-sided critical value. The interval is the set of R with
    ``(mean_p - R*mean_b)^2 <= t^2 * (var_mean_p + R^2 * var_mean_b)``, i.e. the
    roots of ``a R^2 + b R + c = 0`` with ``a = mean_b^2 - t^2 var_mean_b``,
    ``b = -2 mean_b mean_p`` and ``c = mean_p^2 - t^2 var_mean_p``.
    Returns ``(low, high, bounded)``; when ``a <= 0`` the set is not a finite
    interval and ``(nan, nan, False)`` is returned.
    """
    a = mean_b**2 - t**2 * var_mean_b
    if not a > 0:
        return float("nan"), float("nan"), False
    b = -2.0 * mean_b * mean_p
    c = mean_p**2 - t**2 * var_mean_p
    disc = max(b * b - 4.0 * a * c, 0.0)  # = 4 t^2 (a var_mean_p + mean_p^2 var_mean_b) >= 0
    root = np.sqrt(disc)
    return float((-b - root) / (2 * a)), float((-b + root) / (2 * a)), True


def overhead(
    baseline_values,
    platform_values,
    higher_is_better: bool,
    level: float = 0.95,
    method: str = "fieller",
    n_boot: int = 10_000,
    seed: int = 0,
) -> dict:
    """Ratio of means platform/baseline, overhead in percent, and their CI.

    Conventions
    -----------
    ``ratio = mean(platform) / mean(baseline)``. ``overhead_percent`` is
    positive when the platform is worse than the baseline:
    ``(1 - ratio) * 100`` if ``higher_is_better`` (throughput), else
    ``(ratio - 1) * 100`` (times, latencies). So +10 means "10 % worse" for
    both kinds of metric, and -10 means "10 % better".

    Methods
    -------
    ``"fieller"`` (default): Fieller's theorem for two independent samples
    with unequal variances. With ``v_b = s_b^2/n_b`` and ``v_p = s_p^2/n_p``
    the interval is ``{R : (mean_p - R mean_b)^2 <= t^2 (v_p + R^2 v_b)}``
    (see :func:`fieller_interval`). ``t`` is the ``1 - alpha/2`` Student-t
    quantile with Welch-Satterthwaite degrees of freedom for the linear
    combination ``mean_p - R mean_b`` evaluated at the point estimate
    ``R = ratio``::

        df = (v_p + R^2 v_b)^2 / (v_p^2/(n_p-1) + R^4 v_b^2/(n_b-1))

    (the plug-in choice used e.g. by the R package mratios). If
    ``g = t^2 v_b / mean_b^2 >= 1`` the baseline mean is not significantly
    different from 0, the confidence set is unbounded, and the bounds are
    NaN with ``ci_unbounded = True`` and an explanation in ``ci_note``.
    If both samples have zero variance the interval collapses to the point
    estimate (noted in ``ci_note``).

    ``"bootstrap"``: percentile bootstrap; each sample is resampled
    independently with replacement ``n_boot`` times using
    ``numpy.random.default_rng(seed)`` (``seed=0`` by default, so results
    are reproducible). If any resampled baseline mean is 0 or has the
    opposite sign of the observed one, the ratio distribution is not usable
    and the bounds are NaN with ``ci_unbounded = True``.

    Each sample needs at least 2 non-NaN values for an interval; otherwise
    the bounds are NaN (``ci_note`` says why).

    Returns a dict with keys: ``n_baseline, n_platform, mean_baseline,
    mean_platform, ratio, ratio_ci_low, ratio_ci_high, overhead_percent,
    overhead_ci_low, overhead_ci_high, ci_unbounded, ci_note, df, level,
    method, higher_is_better``. ``df`` is NaN for the bootstrap.
    ``overhead_ci_low <= overhead_ci_high`` always (for higher-is-better
    metrics the low overhead bound comes from the high ratio bound).
    """
    if method not in ("fieller", "bootstrap"):
        raise ValueError(f"unknown method {method!r}; use 'fieller' or 'bootstrap'")
    if not 0 < level < 1:
        raise ValueError("level must be in (0, 1)")
    base = _clean(baseline_values)
    plat = _clean(platform_values)
    if base.size == 0 or plat.size == 0:
        raise ValueError("both samples need at least one non-NaN value")
    mean_b, mean_p = float(base.mean()), float(plat.mean())
    ratio = mean_p / mean_b if mean_b != 0 else float("nan")
    nan = float("nan")
    low, high, unbounded, note, df = nan, nan, False, "", nan

    if mean_b == 0:
        note = "baseline mean is 0: ratio undefined"
    elif base.size < 2 or plat.size < 2:
        note = "fewer than 2 values in a sample: no interval"
    elif method == "fieller":
        alpha = 1.0 - level
        v_b = float(base.var(ddof=1)) / base.size
        v_p = float(plat.var(ddof=1)) / plat.size
        if v_b == 0 and v_p == 0:
            low = high = ratio
            note = "both samples have zero variance: interval is the point estimate"
        else:
            denominator = v_p**2 / (plat.size - 1) + ratio**4 * v_b**2 / (base.size - 1)
            if denominator > 0:
                df = (v_p + ratio**2 * v_b) ** 2 / denominator
            else:
                # one sample is constant and the ratio is 0 (e.g. NPB class S times printed as 0.00 s):
                # the Welch-Satterthwaite df is that of the other sample, its limit as its term vanishes
                df = float(base.size - 1 if v_p == 0 else plat.size - 1)
            t = float(scipy_stats.t.ppf(1 - alpha / 2, df))
            low, high, bounded = fieller_interval(mean_b, v_b, mean_p, v_p, t)
            if not bounded:
                unbounded, note = True, _UNBOUNDED_NOTE
    else:
        alpha = 1.0 - level
        rng = np.random.default_rng(seed)
        boot_b = base[rng.integers(0, base.size, size=(n_boot, base.size))].mean(axis=1)
        boot_p = plat[rng.integers(0, plat.size, size=(n_boot, plat.size))].mean(axis=1)
        if np.any(np.sign(boot_b) != np.sign(mean_b)):
            unbounded = True
            note = (
                "bootstrap baseline mean reached 0 or changed sign: the ratio has "
                "no usable bootstrap interval"
            )
        else:
            ratios = boot_p / boot_b
            low, high = (float(q) for q in np.quantile(ratios, [alpha / 2, 1 - alpha / 2]))

    o_low, o_high = _overhead_interval(low, high, higher_is_better)
    return {
        "n_baseline": int(base.size),
        "n_platform": int(plat.size),
        "mean_baseline": mean_b,
        "mean_platform": mean_p,
        "ratio": ratio,
        "ratio_ci_low": low,
        "ratio_ci_high": high,
        "overhead_percent": _ratio_to_overhead(ratio, higher_is_better),
        "overhead_ci_low": o_low,
        "overhead_ci_high": o_high,
        "ci_unbounded": unbounded,
        "ci_note": note,
        "df": float(df),
        "level": level,
        "method": method,
        "higher_is_better": bool(higher_is_better),
    }


def welch_test(baseline_values, platform_values) -> dict:
    """Welch's unequal-variance two-sample t-test (two-sided), via scipy.

    The statistic is oriented platform minus baseline:
    ``t = (mean_p - mean_b) / sqrt(s_p^2/n_p + s_b^2/n_b)`` with
    Welch-Satterthwaite degrees of freedom
    ``df = (v_p + v_b)^2 / (v_p^2/(n_p-1) + v_b^2/(n_b-1))``, ``v = s^2/n``.
    NaN values are removed first; with fewer than 2 values in a sample the
    result is NaN. Returns ``{"statistic", "p_value", "df"}``.
    """
    base = _clean(baseline_values)
    plat = _clean(platform_values)
    if base.size < 2 or plat.size < 2:
        return {"statistic": float("nan"), "p_value": float("nan"), "df": float("nan")}
    res = scipy_stats.ttest_ind(plat, base, equal_var=False)
    return {"statistic": float(res.statistic), "p_value": float(res.pvalue), "df": float(res.df)}


def holm(p_values) -> np.ndarray:
    """Holm step-down adjusted p-values, in the order given.

    Uses ``statsmodels.stats.multitest.multipletests(method="holm")``. NaN
    p-values are left out of the family (so they do not count towards the
    number of tests) and stay NaN in the output.
    """
    p = np.asarray(p_values, dtype=float).ravel()
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    if ok.any():
        out[ok] = multipletests(p[ok], method="holm")[1]
    return out


def outliers(values, rule: str = "none", k: float | None = None) -> np.ndarray:
    """Boolean mask, True for samples flagged as outliers. Nothing is removed.

    Rules
    -----
    ``"none"``: nothing is flagged.

    ``"iqr"`` (Tukey fences, default ``k = 1.5``): flag ``x < Q1 - k*IQR`` or
    ``x > Q3 + k*IQR``; quartiles by ``numpy.quantile`` with its default
    linear interpolation (Hyndman-Fan type 7, as R's default).

    ``"mad"`` (default ``k = 3.5``): flag ``|x - median| > k * 1.4826 * MAD``
    with ``MAD = median(|x - median|)``; with ``k = 3.5`` this is the
    Iglewicz-Hoaglin modified z-score rule ``|0.6745 (x - median) / MAD| > 3.5``.

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
    if x.size == 0:
        return mask
    if rule == "iqr":
        k = 1.5 if k is None else k
        q1, q3 = np.quantile(x, [0.25, 0.75])
        iqr = q3 - q1
        flagged = (x < q1 - k * iqr) | (x > q3 + k * iqr)
    elif rule == "mad":
        k = 3.5 if k is None else k
        med = np.median(x)
        mad = 1.4826 * np.median(np.abs(x - med))
        flagged = np.abs(x - med) > k * mad
    else:
        raise ValueError(f"unknown outlier rule {rule!r}; use 'none', 'iqr' or 'mad'")
    mask[finite] = flagged
    return mask


def tost_p(baseline_values, platform_values, margin: float = 0.05) -> float:
    """TOST equivalence p-value, relative margin of the baseline mean.

    Null: ``|mean_p - mean_b| >= margin * |mean_b|``; alternative: the
    difference lies strictly inside ``(-margin*|mean_b|, +margin*|mean_b|)``.
    Welch version: ``statsmodels.stats.weightstats.ttost_ind(platform,
    baseline, low, upp, usevar="unequal")``. The margin uses the observed
    baseline mean as if it were known (the usual practical simplification).
    NaN when a sample has fewer than 2 values or the statistic is undefined.
    """
    base = _clean(baseline_values)
    plat = _clean(platform_values)
    if base.size < 2 or plat.size < 2:
        return float("nan")
    delta = margin * abs(float(base.mean()))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = ttost_ind(plat, base, -delta, delta, usevar="unequal")[0]
    return float(p)


VERDICTS = ("equivalent", "worse", "better", "inconclusive")


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
    method: str = "fieller",
    n_boot: int = 10_000,
    seed: int = 0,
    outlier_rule: str = "none",
    outlier_k: float | None = None,
) -> pd.DataFrame:
    """Compare every non-baseline platform with ``baseline``, per group.

    For each group of ``by`` (all rows form one group when ``by`` is empty or
    None) and each platform (column ``platform``) other than ``baseline``,
    one row with:

    - the ``by`` columns, ``platform``, ``baseline``;
    - ``n_baseline, n_platform, mean_baseline, mean_platform`` (after NaN and
      outlier removal) and ``dropped_baseline, dropped_platform``: how many
      values the outlier rule removed (0 when ``outlier_rule="none"``, the
      default: nothing is dropped unless the caller asks for it; the rule is
      applied to each platform's sample within the group separately);
    - ``ratio, ratio_ci_low, ratio_ci_high, overhead_percent,
      overhead_ci_low, overhead_ci_high, ci_unbounded, ci_note`` from
      :func:`overhead` (same conventions: overhead > 0 means the platform is
      worse);
    - ``welch_p`` (two-sided, :func:`welch_test`) and ``holm_p``: Holm
      adjustment over all rows returned by this call (rows with NaN p are
      left out of the family);
    - ``tost_p``: equivalence p-value for the margin ``margin * |mean_baseline|``
      (:func:`tost_p`; not multiplicity-adjusted);
    - ``significant``: ``holm_p < alpha``;
    - ``verdict``, with ``alpha = 1 - level``, decided in this order:

      1. ``"equivalent"`` if ``tost_p < alpha``: the difference is shown to
         lie within +/- margin. This is the ONLY way this function supports
         a "no relevant overhead" claim. A difference can be both
         equivalent and significant (tiny but real); ``significant`` and the
         overhead columns still show it.
      2. ``"worse"`` / ``"better"`` if ``holm_p < alpha``; the direction is
         that of ``overhead_percent`` (worse = lower throughput or longer
         time). "worse"/"better" is used rather than "slower"/"faster" so the
         wording is right for both metric directions.
      3. ``"inconclusive"`` otherwise, including when p-values are NaN
         (too few values, missing baseline in the group). A non-significant
         t-test alone never yields "equivalent".

    ``higher_is_better`` is a bool for the whole frame, or the name of a
    boolean column (it must be constant within each group and platform pair).
    Groups where the baseline has no values still produce rows (verdict
    ``"inconclusive"``, ``ci_note`` says why).
    """
    if outlier_rule not in (None, "none", "iqr", "mad"):
        raise ValueError(f"unknown outlier rule {outlier_rule!r}")
    by = list(by or [])
    alpha = 1.0 - level
    data = frame[frame[platform].notna()]
    if by:
        groups = data.groupby(by, sort=True, dropna=False)
    else:
        groups = [((), data)]

    def sample(group: pd.DataFrame, name) -> tuple[np.ndarray, int]:
        values = _clean(group.loc[group[platform] == name, value])
        flagged = outliers(values, outlier_rule, outlier_k)
        return values[~flagged], int(flagged.sum())

    def direction(group: pd.DataFrame) -> bool:
        if isinstance(higher_is_better, str):
            flags = group[higher_is_better].dropna().unique()
            if len(flags) != 1:
                raise ValueError(
                    f"column {higher_is_better!r} must hold one value per group, got {list(flags)}"
                )
            return bool(flags[0])
        return bool(higher_is_better)

    rows = []
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        base, base_dropped = sample(group, baseline)
        others = sorted(p for p in group[platform].unique() if p != baseline)
        for other in others:
            plat, plat_dropped = sample(group, other)
            both = pd.concat([group[group[platform] == baseline], group[group[platform] == other]])
            hib = direction(both)
            row = {**dict(zip(by, key)), platform: other, "baseline": baseline}
            if base.size and plat.size:
                res = overhead(base, plat, hib, level=level, method=method, n_boot=n_boot, seed=seed)
            else:
                nan = float("nan")
                res = {
                    "n_baseline": int(base.size), "n_platform": int(plat.size),
                    "mean_baseline": float(base.mean()) if base.size else nan,
                    "mean_platform": float(plat.mean()) if plat.size else nan,
                    "ratio": nan, "ratio_ci_low": nan, "ratio_ci_high": nan,
                    "overhead_percent": nan, "overhead_ci_low": nan, "overhead_ci_high": nan,
                    "ci_unbounded": False,
                    "ci_note": "no values for the baseline" if not base.size else "no values for the platform",
                }  # fmt: skip
            row.update(
                {
                    "n_baseline": res["n_baseline"],
                    "n_platform": res["n_platform"],
                    "dropped_baseline": base_dropped,
                    "dropped_platform": plat_dropped,
                    "mean_baseline": res["mean_baseline"],
                    "mean_platform": res["mean_platform"],
                    "higher_is_better": hib,
                    "ratio": res["ratio"],
                    "ratio_ci_low": res["ratio_ci_low"],
                    "ratio_ci_high": res["ratio_ci_high"],
                    "overhead_percent": res["overhead_percent"],
                    "overhead_ci_low": res["overhead_ci_low"],
                    "overhead_ci_high": res["overhead_ci_high"],
                    "ci_unbounded": res["ci_unbounded"],
                    "ci_note": res["ci_note"],
                    "welch_p": welch_test(base, plat)["p_value"],
                    "tost_p": tost_p(base, plat, margin),
                }
            )
            rows.append(row)

    columns = [
        *by, platform, "baseline", "n_baseline", "n_platform", "dropped_baseline",
        "dropped_platform", "mean_baseline", "mean_platform", "higher_is_better", "ratio",
        "ratio_ci_low", "ratio_ci_high", "overhead_percent", "overhead_ci_low",
        "overhead_ci_high", "ci_unbounded", "ci_note", "welch_p", "holm_p", "tost_p",
        "significant", "verdict", "level", "margin", "outlier_rule",
    ]  # fmt: skip
    derived = ("holm_p", "significant", "verdict", "level", "margin", "outlier_rule")
    out = pd.DataFrame(rows, columns=[c for c in columns if c not in derived])
    out["holm_p"] = holm(out["welch_p"].to_numpy()) if len(out) else []
    out["significant"] = out["holm_p"] < alpha
    verdicts = []
    for tost, sig, m_b, m_p, hib in zip(
        out["tost_p"], out["significant"], out["mean_baseline"], out["mean_platform"], out["higher_is_better"]
    ):
        # direction from the means, so it does not depend on the sign of the baseline mean
        worse = (m_p < m_b) if hib else (m_p > m_b)
        if tost < alpha:
            verdicts.append("equivalent")
        elif sig and m_p != m_b:
            verdicts.append("worse" if worse else "better")
        else:
            verdicts.append("inconclusive")
    out["verdict"] = verdicts
    out["level"] = level
    out["margin"] = margin
    out["outlier_rule"] = outlier_rule or "none"
    return out[columns]
