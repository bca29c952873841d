"""The verdicts' distribution-free intervals: Hodges-Lehmann with the exact Mann-Whitney (Moses)
interval of a ratio of two samples, the signed-rank interval of paired rounds and of one sample's
log location, order statistics for a median, and the widening by the values' printed resolution
(the comment block below). Also the helpers every statistic shares (``_clean``, ``shapiro_p``)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

import numpy as np


CONSTANT_NOTE = "all samples are constant: no information about their variance, no interval and no test"


def _clean(values) -> np.ndarray:
    """The finite values (NaN dropped) as a flat float array."""
    data = np.asarray(values, dtype=float).ravel()
    return data[~np.isnan(data)]


def _constant(x: np.ndarray) -> bool:
    return x.size >= 2 and bool(np.ptp(x) == 0)


def shapiro_p(values) -> float:
    """Shapiro-Wilk p-value of the non-NaN values; NaN below 3 values or for a constant sample."""
    x = _clean(values)
    if x.size < 3 or _constant(x):
        return float("nan")
    from scipy import stats as scipy_stats  # imported where used: the stop rule's intervals need none of it

    return float(scipy_stats.shapiro(x).pvalue)


def median_order_ci(values, level: float = 0.95) -> tuple[float, float, float]:
    """Distribution-free interval for the median from order statistics: ``[x_(k), x_(n+1-k)]`` with
    the largest ``k`` whose coverage ``1 - 2 * P(Binomial(n, 1/2) <= k - 1)`` is at least ``level``.

    Returns ``(low, high, coverage)``; ``(nan, nan, best possible coverage)`` when n is too small
    for the level (``[min, max]`` covers with ``1 - 2 / 2^n``: 93.75 % at n = 5).
    """
    x = np.sort(_clean(values))
    n = x.size
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    k = np.arange(1, n // 2 + 1)
    from scipy import stats as scipy_stats

    coverage = 1 - 2 * scipy_stats.binom.cdf(k - 1, n, 0.5)
    ok = k[coverage >= level]
    if ok.size == 0:
        return float("nan"), float("nan"), float(coverage[0]) if coverage.size else 0.0
    best = int(ok.max())
    return float(x[best - 1]), float(x[n - best]), float(coverage[best - 1])


@dataclass(frozen=True)
class RatioCI:
    """A ratio (two samples', paired rounds', or a product of such ratios), its interval at ``level``
    and one-sided p-values.

    ``method``: ``hl-moses``, ``hl-signed-rank``, ``bootstrap-hl`` or ``none`` (no interval; ``note``
    says why).
    :meth:`p_value` inverts the same method, so a bound of the two-sided interval is where
    the one-sided p-value is ``(1 - level) / 2``.
    """

    estimate: float
    low: float
    high: float
    method: str
    note: str
    df: float
    level: float
    unbounded: bool = False
    shapiro: tuple = ()
    _p: Callable[[float, str], float] | None = field(default=None, repr=False, compare=False)
    achieved: float = float("nan")  # the interval's achieved confidence where it is exact (the rank intervals)
    too_few: bool = False  # no interval because the samples are too small for the level

    def p_value(self, r0: float, alternative: str) -> float:
        """One-sided p-value against ``R <= r0`` (``alternative="greater"``) or ``R >= r0``
        (``"less"``); NaN when there is no interval."""
        if alternative not in ("greater", "less"):
            raise ValueError("alternative is 'greater' or 'less'")
        return float("nan") if self._p is None else float(self._p(r0, alternative))


# ---------------------------------------------------------------------------
# Distribution-free intervals for the verdicts (no normality pre-test)
# ---------------------------------------------------------------------------
#
# A ratio platform / baseline is a shift of log values: log x = log y + delta under a scale model
# (the platform multiplies every run by r = exp(delta)). Hodges-Lehmann estimates delta by the median
# of the m*n differences log x_i - log y_j; the exact Mann-Whitney (Moses) interval is the k-th
# smallest to the k-th largest difference, k from the exact null distribution of U, so it covers
# delta with the ACHIEVED confidence 1 - 2 P(U <= k - 1) for any continuous distribution (96.8 % at
# 5 + 5 for a nominal 95 %; none at 3 + 3, where even [min, max] has 90 %). Paired rounds: the
# Walsh averages of the log differences and the signed-rank distribution. Values printed at a
# resolution h are the true values rounded, each log value within e = -log(1 - h / 2x) of the
# true one, so every difference within E = max e_x + max e_y and the interval computed from the
# printed values, widened by E on each side, contains the interval of the true values: its
# coverage is at least the achieved confidence, ties or not (the note gives E when it matters).
# p-values invert the same interval: the one-sided p against r0 is below (1 - level) / 2 exactly
# when the bound excludes r0. A product of several shifts (a ratio of ratios from four samples, a
# geometric mean over variants) has no exact rank interval: a bootstrap that resamples every
# sample on its own, the statistic recomputed from the resamples' Hodges-Lehmann shifts, and the
# percentile interval at tails stretched by sqrt(n / (n - 1)) on the normal scale (n the smallest
# sample: a resample's spread is too small by about that factor), whose coverage
# tests/test_rank_intervals.py shows by simulation (0.96 pooled from 5 values a sample).


def printed_resolution(values) -> float:
    """The resolution the values were printed at: ``10**-d`` with ``d`` the most decimals any value has
    in its shortest printed form (``[1.88, 1.9]`` -> 0.01, ``[2701.0]`` -> 1); at most 15 decimals."""
    decimals = 0
    for v in _clean(values):
        text = np.format_float_positional(abs(float(v)), unique=True, trim="-")
        decimals = max(decimals, len(text.partition(".")[2]))
    return 10.0 ** -min(decimals, 15)


def _log_rounding(x: np.ndarray) -> np.ndarray:
    """How far each log value of ``x`` may lie from the log of the true value rounded to it (at most)."""
    half = printed_resolution(x) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > half, -np.log1p(-half / np.maximum(x, half)), np.inf)


@lru_cache(maxsize=None)
def rank_sum_cdf(m: int, n: int) -> np.ndarray:
    """``P(U <= u)`` for u = 0..m*n, U the Mann-Whitney statistic of m against n untied values under
    the null (exact: counts of the arrangements, ``c(i, j, u) = c(i - 1, j, u - j) + c(i, j - 1, u)``)."""
    rows = [np.ones(1) for _ in range(n + 1)]  # i = 0: one arrangement with U = 0 for every j
    for i in range(1, m + 1):
        new = [np.ones(1)]
        for j in range(1, n + 1):
            counts = np.zeros(i * j + 1)
            counts[: len(new[j - 1])] += new[j - 1]
            counts[j : j + len(rows[j])] += rows[j]
            new.append(counts)
        rows = new
    counts = rows[n]
    return np.cumsum(counts) / counts.sum()


@lru_cache(maxsize=None)
def signed_rank_cdf(n: int) -> np.ndarray:
    """``P(T <= t)`` for t = 0..n(n+1)/2, T the Wilcoxon signed-rank statistic of n untied, non-zero
    differences under the null (exact: subset sums of 1..n)."""
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1
    for r in range(1, n + 1):
        counts[r:] = counts[r:] + counts[:-r].copy()
    return np.cumsum(counts) / counts.sum()


def _rank_interval(name: str, what: str, diffs: np.ndarray, slack: np.ndarray, cdf: np.ndarray, level: float,
                   shapiro: tuple) -> RatioCI:  # fmt: skip
    """The ratio ``exp(median(diffs))`` and the interval from the k-th smallest of ``diffs - slack`` to
    the k-th largest of ``diffs + slack`` (``slack``: each difference's rounding bound), k the largest
    whose tail ``P(S <= k - 1)`` (``cdf``) is at most ``(1 - level) / 2``; no interval when even k = 1
    has a larger tail. p-values invert the same rule."""
    lower, upper = np.sort(diffs - slack), np.sort(diffs + slack)
    total = diffs.size
    estimate = float(np.exp(np.median(diffs)))
    alpha = 1.0 - level
    ok = np.nonzero(cdf[:total] <= alpha / 2 + 1e-12)[0]
    if ok.size == 0:
        best = 1 - 2 * cdf[0]
        note = f"{what}: no {level:.0%} interval, even the widest has confidence {best:.1%}"
        return RatioCI(estimate, float("nan"), float("nan"), "none", note, float("nan"), level, False, shapiro,
                       None, best, True)  # fmt: skip
    k = int(ok[-1]) + 1
    achieved = float(1 - 2 * cdf[k - 1])

    def p_value(r0, alternative):
        if r0 <= 0:
            return 0.0 if alternative == "greater" else 1.0
        delta = np.log(r0)
        if alternative == "greater":  # the lower bound exceeds delta while fewer than k lie at or below it
            count = int(np.searchsorted(lower, delta, side="right"))
        else:
            count = total - int(np.searchsorted(upper, delta, side="left"))
        return float(cdf[min(count, total)])

    widest = float(np.max(slack))
    rounding = f"; widened by up to {widest:.2%} a side for the printed resolution" if widest >= 5e-5 else ""
    note = f"{what}, achieved confidence {achieved:.1%}{rounding}"
    low, high = np.exp(lower[k - 1]), np.exp(upper[total - k])
    return RatioCI(estimate, float(low), float(high), name, note, float("nan"), level, False, shapiro, p_value,
                   achieved)  # fmt: skip


def _positive(*samples) -> str:
    if any(x.size == 0 for x in samples):
        return "no values in a sample"
    if any(np.any(x <= 0) for x in samples):
        return "a value is 0 or negative: no ratio on the log scale"
    return ""


def _rounding_note(widen: float) -> str:
    return f"; widened by {widen:.2%} a side for the printed resolution" if widen >= 5e-5 else ""


def hl_ratio_ci(platform, baseline, level: float = 0.95) -> RatioCI:
    """Ratio platform / baseline of two independent samples under a scale shift: ``exp`` of the
    Hodges-Lehmann shift of log values (the median of all ``log x_i - log y_j``) and the exact
    Mann-Whitney (Moses) interval, at the achieved confidence (``RatioCI.achieved``; see the comment
    above). ``method`` ``hl-moses``, or ``none`` with ``too_few`` set when no interval reaches
    ``level`` at these sizes (3 + 3 at 95 %). The Shapiro-Wilk p-values are recorded, not used."""
    x, y = _clean(platform), _clean(baseline)
    shapiro = (shapiro_p(x), shapiro_p(y))
    nan = float("nan")
    why = _positive(x, y)
    if why:
        return RatioCI(nan, nan, nan, "none", why, nan, level, False, shapiro)
    diffs = (np.log(x)[:, None] - np.log(y)[None, :]).ravel()
    slack = (_log_rounding(x)[:, None] + _log_rounding(y)[None, :]).ravel()
    return _rank_interval("hl-moses", f"Hodges-Lehmann with the exact Mann-Whitney interval ({x.size} + {y.size})",
                          diffs, slack, rank_sum_cdf(x.size, y.size), level, shapiro)


def hl_paired_ci(platform, baseline, level: float = 0.95, describe: bool = True) -> RatioCI:
    """Ratio platform / baseline of paired values (``platform[i]`` and ``baseline[i]`` measured in one
    round): ``exp`` of the Hodges-Lehmann estimate of the log differences (the median of their Walsh
    averages) and the exact signed-rank interval, at its achieved confidence; ``hl-signed-rank``, or
    ``none`` (too few rounds: 5 at 95 %, where the widest has 93.75 %). Pairs with a NaN are left out.
    ``describe=False`` leaves out the Shapiro-Wilk p-value (a description, NaN then): the repetition
    rule reads the width alone and need not import scipy.stats."""
    x, y = np.asarray(platform, dtype=float).ravel(), np.asarray(baseline, dtype=float).ravel()
    if x.size != y.size:
        raise ValueError("paired samples need the same length")
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    nan = float("nan")
    why = _positive(x, y)
    w = np.log(x) - np.log(y) if not why else np.array([])
    shapiro = (shapiro_p(w) if describe else nan,)
    if why:
        return RatioCI(nan, nan, nan, "none", why, nan, level, False, shapiro)
    i, j = np.triu_indices(w.size)
    e = _log_rounding(x) + _log_rounding(y)  # each log difference's rounding bound
    return _rank_interval("hl-signed-rank", f"Hodges-Lehmann with the exact signed-rank interval ({w.size} rounds)",
                          (w[i] + w[j]) / 2, (e[i] + e[j]) / 2, signed_rank_cdf(w.size), level, shapiro)


def hl_location_ci(values, level: float = 0.95, describe: bool = True) -> RatioCI:
    """The location of one sample on the log scale: ``exp`` of the Hodges-Lehmann estimate of the
    log values (the median of their Walsh averages, a pseudo-median) and the exact one-sample
    signed-rank interval, each bound widened for the printed resolution as in :func:`hl_paired_ci`;
    ``hl-signed-rank``, or ``none`` with ``too_few`` below :func:`signed_rank_min_n` values (6 at 95 %).
    Distribution-free for a sample symmetric on the log scale; the repetition rule
    (:mod:`virtrepro.planning.adaptive`) uses its width as a per-sample proxy for the ratio's interval,
    with ``describe=False`` (no Shapiro-Wilk p-value: see :func:`hl_paired_ci`)."""
    x = _clean(values)
    nan = float("nan")
    why = _positive(x)
    if why:
        return RatioCI(nan, nan, nan, "none", why, nan, level, False, ())
    w = np.log(x)
    i, j = np.triu_indices(w.size)
    e = _log_rounding(x)
    return _rank_interval("hl-signed-rank", f"Hodges-Lehmann with the exact signed-rank interval ({w.size} values)",
                          (w[i] + w[j]) / 2, (e[i] + e[j]) / 2, signed_rank_cdf(w.size), level,
                          (shapiro_p(w) if describe else nan,))


def signed_rank_min_n(level: float = 0.95) -> int:
    """The fewest values for which the exact signed-rank interval reaches ``level``: the widest
    interval (the extreme Walsh averages) has confidence ``1 - 2 * 2**-n`` (6 at 95 %, 8 at 99 %)."""
    n = 1
    while 2.0 ** -n > (1.0 - level) / 2 + 1e-12:
        n += 1
    return n


def rank_sum_min_n(level: float = 0.95) -> int:
    """The fewest values a side (equal sizes) for which the exact Mann-Whitney interval of
    :func:`hl_ratio_ci` reaches ``level``: the widest has confidence ``1 - 2 / C(2n, n)`` (4 at 95 %)."""
    n = 1
    while 1.0 / math.comb(2 * n, n) > (1.0 - level) / 2 + 1e-12:
        n += 1
    return n
