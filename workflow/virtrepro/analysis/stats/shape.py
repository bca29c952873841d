"""Normal-theory estimates, each saying so: the slope of log values over an ordered parameter
(:func:`log_slope`, the claims' ``trend``), the Brown-Forsythe difference of two scatters
(:func:`spread_difference`, ``spread``), and the Student-t interval of a mean that the repetition
rule's width uses (:func:`mean_ci`, :mod:`virtrepro.planning.adaptive`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .rank import CONSTANT_NOTE, _clean, _constant


def mean_ci(values, level: float = 0.95) -> tuple[float, float, float]:
    """Mean and two-sided Student-t confidence interval of the mean (assumes normality).

    NaN values are removed first. With fewer than 2 values, or a constant sample (no information
    about the variance), the interval is undefined (NaN, NaN); it is never faked.
    """
    data = _clean(values)
    if data.size == 0:
        raise ValueError("no values")
    mean = float(data.mean())
    if data.size < 2 or _constant(data):
        return mean, float("nan"), float("nan")
    # statsmodels' DescrStatsW(data).tconfint_mean(alpha=1 - level), step by step in its own operations
    # (the same floats; tests/test_stats.py compares them), without importing statsmodels and
    # scipy.stats (a second): the table's stop rule computes this for every variant it rebuilds.
    from scipy.special import stdtrit  # scipy.stats.t.ppf(q, df) is stdtrit(df, q)

    weights = np.ones(data.shape[0])
    n = weights.sum(0)
    centre = np.dot(data.T, weights) / n
    std = np.sqrt(np.dot(((data - centre) ** 2).T, weights) / n)
    critical = stdtrit(n - 1, 1 - (1 - level) / 2.0)
    se = std / np.sqrt(n - 1)
    return mean, float(centre - critical * se), float(centre + critical * se)


def _t_ppf(q: float, df: float) -> float:
    from scipy import stats as scipy_stats  # imported where used (the package's doc)

    return scipy_stats.t.ppf(q, df)


def _t_p(stat: float, df: float, alternative: str) -> float:
    if np.isnan(stat):
        return float("nan")
    from scipy import stats as scipy_stats

    return float(scipy_stats.t.sf(stat, df) if alternative == "greater" else scipy_stats.t.cdf(stat, df))


# ---------------------------------------------------------------------------
# Trends over an ordered parameter, and spreads (claims' ``trend`` and ``spread`` kinds)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Estimate:
    """An estimate with its two-sided interval at ``level`` and Student-t one-sided p-values
    (``p_value(s0, "greater")`` against ``estimate <= s0``); no interval when ``se`` is 0 or NaN."""

    estimate: float
    se: float
    df: float
    level: float
    note: str

    @property
    def tested(self) -> bool:
        return bool(np.isfinite(self.se) and self.se > 0 and self.df >= 1)

    @property
    def low(self) -> float:
        return self.estimate - _t_ppf(0.5 + self.level / 2, self.df) * self.se if self.tested else float("nan")

    @property
    def high(self) -> float:
        return self.estimate + _t_ppf(0.5 + self.level / 2, self.df) * self.se if self.tested else float("nan")

    def p_value(self, s0: float, alternative: str) -> float:
        if alternative not in ("greater", "less"):
            raise ValueError("alternative is 'greater' or 'less'")
        return _t_p((self.estimate - s0) / self.se, self.df, alternative) if self.tested else float("nan")


def log_slope(platform: dict, baseline: dict | None = None, level: float = 0.95) -> Estimate:
    """The slope of log values over the steps of an ordered parameter, by ordinary least squares.

    ``platform`` maps ``(variant, step)`` to a sample (``step``: 0, 1, ... in the parameter's order).
    Without ``baseline``: ``log y = a_variant + b step``. With ``baseline`` (same keys): the slope of
    the log ratio platform / baseline, ``log y = mu_(variant, step) + platform (a_variant + b step)``,
    every cell's baseline mean free, so ``b`` is how the ratio changes per step. One slope ``b`` is
    common to the variants given (pass one variant for its own slope). Assumes normal errors with one
    variance on the log scale (says so in ``note``); every value must be positive.
    """
    rows, cells = [], sorted(platform, key=str)
    if baseline is not None:
        cells = [c for c in cells if c in baseline]
    variants = sorted({v for v, _ in cells}, key=str)
    cell_ix = {c: i for i, c in enumerate(cells)}
    var_ix = {v: i for i, v in enumerate(variants)}
    n_cols = (len(cells) if baseline is not None else 0) + len(variants) + 1
    for side, samples in (("platform", platform), ("baseline", baseline)):
        if samples is None:
            continue
        for cell in cells:
            for value in _clean(samples[cell]):
                x = np.zeros(n_cols)
                if baseline is not None:
                    x[cell_ix[cell]] = 1.0
                if side == "platform":
                    offset = len(cells) if baseline is not None else 0
                    x[offset + var_ix[cell[0]]] = 1.0
                    x[-1] = float(cell[1])
                rows.append((x, value))
    nan = float("nan")
    note = "least squares on log values (assumes normal errors with one variance on the log scale)"
    if not rows or any(v <= 0 for _, v in rows):
        return Estimate(nan, nan, nan, level, "a value is 0 or negative: no slope on the log scale")
    design = np.array([x for x, _ in rows])
    y = np.log(np.array([v for _, v in rows]))
    if len({c[1] for c in cells}) < 2:
        return Estimate(nan, nan, nan, level, "fewer than two steps of the parameter")
    if np.linalg.matrix_rank(design) < n_cols:
        return Estimate(nan, nan, nan, level, "the steps run do not identify a slope")
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    df = len(y) - n_cols
    every = [_clean(side[c]) for side in (platform, baseline) if side is not None for c in cells]
    if all(x.size < 2 or _constant(x) for x in every):
        return Estimate(float(coef[-1]), nan, float(df), level, CONSTANT_NOTE)
    if df < 1:
        return Estimate(float(coef[-1]), nan, nan, level, "no residual degrees of freedom: no interval")
    sigma2 = float(np.sum((y - design @ coef) ** 2) / df)
    se = float(np.sqrt(sigma2 * np.linalg.inv(design.T @ design)[-1, -1]))
    return Estimate(float(coef[-1]), se, float(df), level, note)


def spread_difference(platform: list, baseline: list, level: float = 0.95) -> Estimate:
    """Brown-Forsythe comparison of the relative spread of two sides: the difference (platform -
    baseline) of the mean absolute deviation of log values from their sample's median, with a pooled
    Student-t interval (the two-sample t of Brown-Forsythe: its square is ``scipy.stats.levene(...,
    center="median")``'s F for two samples). Each side is a list of samples (variants): deviations
    are taken within each sample, then pooled. About 0.05 means 5 % more scatter around the median."""
    nan = float("nan")

    def deviations(samples):
        out = []
        for sample in samples:
            x = _clean(sample)
            if x.size < 3:
                continue  # two values are equally far from their median: no information on spread
            if np.any(x <= 0):
                raise ValueError("spread on the log scale needs positive values")
            logs = np.log(x)
            out.append(np.abs(logs - np.median(logs)))
        return np.concatenate(out) if out else np.array([])

    zp, zb = deviations(platform), deviations(baseline)
    if zp.size < 3 or zb.size < 3:
        return Estimate(nan, nan, nan, level, "fewer than 3 values a sample: no spread test")
    diff = float(zp.mean() - zb.mean())
    df = zp.size + zb.size - 2
    pooled = ((zp.size - 1) * zp.var(ddof=1) + (zb.size - 1) * zb.var(ddof=1)) / df
    se = float(np.sqrt(pooled * (1 / zp.size + 1 / zb.size)))
    note = "Brown-Forsythe: t on absolute deviations of log values from the median"
    return Estimate(diff, se, float(df), level, CONSTANT_NOTE if se == 0 else note)
