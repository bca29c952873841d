"""The shift bootstrap: an interval for a product of Hodges-Lehmann ratios (a ratio of ratios from
four samples, a geometric mean over variants), each sample resampled on its own, and the seeds
that make each row's resamples its own (:func:`seed_for`)."""

from __future__ import annotations

import zlib

import numpy as np

from .rank import RatioCI, _clean, _log_rounding, _positive, _rounding_note, shapiro_p


N_RESAMPLES = 9999


def seed_for(seed: int, *labels) -> list[int]:
    """A generator seed of its own for one group or variant: ``[seed, crc32(label), ...]``, so that
    adding a variant never changes another's resamples."""
    return [int(seed)] + [zlib.crc32(str(label).encode()) for label in labels]


# the product of shifts has no exact rank interval: the comment block in rank.py says how it is bootstrapped
MIN_N_BOOTSTRAP = 5  # the bootstrap's coverage is shown from 5 values a sample (tests/test_stats.py)
N_RESAMPLES_SHIFT = 4000


def _hl_resampled(x: np.ndarray, y: np.ndarray, rng, n_resamples: int) -> np.ndarray:
    """The Hodges-Lehmann shift of log values of ``n_resamples`` resamples of x against y."""
    lx, ly = np.log(x), np.log(y)
    out = np.empty(n_resamples)
    step = max(1, 2_000_000 // (x.size * y.size))
    for start in range(0, n_resamples, step):
        size = min(step, n_resamples - start)
        a = lx[rng.integers(0, x.size, (size, x.size))]
        b = ly[rng.integers(0, y.size, (size, y.size))]
        out[start : start + size] = np.median((a[:, :, None] - b[:, None, :]).reshape(size, -1), axis=1)
    return out


def hl_ratio_estimate(pairs) -> float:
    """The point estimate of :func:`shift_bootstrap_ci`, ``exp(sum_i c_i HL_i)`` for ``pairs`` of
    ``(x_i, y_i, c_i)`` (one pair with c = 1: that of :func:`hl_ratio_ci`), without an interval; NaN
    when a sample is empty or has a value <= 0."""
    samples = [(_clean(x), _clean(y), float(c)) for x, y, c in pairs]
    if _positive(*[s for x, y, _ in samples for s in (x, y)]):
        return float("nan")
    return float(np.exp(sum(c * np.median((np.log(x)[:, None] - np.log(y)[None, :]).ravel()) for x, y, c in samples)))


def shift_bootstrap_ci(pairs, level: float = 0.95, seed=0, n_resamples: int = N_RESAMPLES_SHIFT) -> RatioCI:
    """``R = exp(sum_i c_i HL_i)`` with ``HL_i`` the Hodges-Lehmann shift of log values of ``x_i`` against
    ``y_i``; ``pairs`` is a list of ``(x_i, y_i, c_i)``. A ratio of ratios (a speed-up, an isolation
    efficiency) is ``[(plat_num, plat_den, 1), (base_num, base_den, -1)]``; the geometric mean of k
    per-variant ratios has ``c_i = 1 / k``.

    Interval: every sample resampled on its own (``seed``, e.g. :func:`seed_for`), the statistic
    recomputed, and the percentiles at the tails ``Phi(sqrt(n / (n - 1)) z_(alpha / 2))``, n the
    smallest sample (a resample's spread is too small by about that factor; Student-t quantiles in
    their place, Hesterberg's expanded percentile interval, covered 98-99 % at n = 5-11 for four
    samples). Its coverage is shown by simulation (tests/test_rank_intervals.py,
    bench/interval_coverage.py), from :data:`MIN_N_BOOTSTRAP` values a sample;
    ``none`` with ``too_few`` below. The values' printed resolution widens it as for the rank
    intervals. p-values invert the same percentiles."""
    samples = [(_clean(x), _clean(y), float(c)) for x, y, c in pairs]
    flat = [s for x, y, _ in samples for s in (x, y)]
    shapiro = tuple(shapiro_p(s) for s in flat)
    nan = float("nan")
    why = _positive(*flat)
    if why:
        return RatioCI(nan, nan, nan, "none", why, nan, level, False, shapiro)
    estimate = hl_ratio_estimate(samples)
    n = min(s.size for s in flat)
    what = f"bootstrap of the Hodges-Lehmann shifts of {len(flat)} samples (stretched percentile)"
    if n < MIN_N_BOOTSTRAP:
        return RatioCI(estimate, nan, nan, "none", f"{what}: coverage shown from {MIN_N_BOOTSTRAP} values a sample, "
                       f"a sample has {n}", nan, level, False, shapiro, None, nan, True)  # fmt: skip
    widen = float(sum(abs(c) * (np.max(_log_rounding(x)) + np.max(_log_rounding(y))) for x, y, c in samples))
    rng = np.random.default_rng(seed)
    boot = sum(c * _hl_resampled(x, y, rng, n_resamples) for x, y, c in samples)
    boot = np.sort(boot)
    stretch = np.sqrt(n / (n - 1))  # the resamples' spread is too small by about this factor
    from scipy import stats as scipy_stats  # imported where used (the package's doc: the stop rule needs none)

    def tail(alpha_half):  # the percentile tail that stands for a two-sided alpha / 2
        return float(scipy_stats.norm.cdf(stretch * scipy_stats.norm.ppf(alpha_half)))

    a = tail((1 - level) / 2)
    low, high = np.quantile(boot, [a, 1 - a])

    def p_value(r0, alternative):
        if r0 <= 0:
            return 0.0 if alternative == "greater" else 1.0
        delta = np.log(r0)
        if alternative == "greater":
            below = np.searchsorted(boot, delta + widen, side="right") / boot.size
        else:
            below = 1 - np.searchsorted(boot, delta - widen, side="left") / boot.size
        return float(scipy_stats.norm.cdf(scipy_stats.norm.ppf(below) / stretch))  # tail() inverted

    note = f"{what}, {n_resamples} resamples" + _rounding_note(widen)
    return RatioCI(estimate, float(np.exp(low - widen)), float(np.exp(high + widen)), "bootstrap-hl", note, nan,
                   level, False, shapiro, p_value, level)  # fmt: skip
