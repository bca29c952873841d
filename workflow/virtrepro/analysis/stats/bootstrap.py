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
MIN_N_BOOTSTRAP = 5  # the bootstrap's coverage is shown from 5 values a sample (tests/test_rank_intervals.py)
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
    return _stretched_percentile(boot, n, estimate, widen, level, f"{what}, {n_resamples} resamples", shapiro)


def _stretched_percentile(boot: np.ndarray, n: int, estimate: float, widen: float, level: float, note: str,
                          shapiro: tuple, df: float | None = None) -> RatioCI:
    """The interval and p-values of a bootstrap of a log ratio (``boot``, its resampled values): the
    percentiles at the tails ``Phi(sqrt(n / (n - 1)) z_(alpha / 2))``, n the smallest sample (a
    resample's spread is too small by about that factor), or with ``df`` Student-t quantiles in
    place of z (Hesterberg's expanded percentile interval); each bound widened by ``widen`` for the
    printed resolution; p-values invert the same percentiles."""
    from scipy import stats as scipy_stats  # imported where used (the package's doc: the stop rule needs none)

    boot = np.sort(boot)
    stretch = np.sqrt(n / (n - 1))

    def quantile(p):
        return scipy_stats.norm.ppf(p) if df is None else scipy_stats.t.ppf(p, df)

    def tail(alpha_half):  # the percentile tail that stands for a two-sided alpha / 2
        return float(scipy_stats.norm.cdf(stretch * quantile(alpha_half)))

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
        z = scipy_stats.norm.ppf(below) / stretch
        return float(scipy_stats.norm.cdf(z) if df is None else scipy_stats.t.cdf(z, df))  # tail() inverted

    return RatioCI(estimate, float(np.exp(low - widen)), float(np.exp(high + widen)), "bootstrap-hl",
                   note + _rounding_note(widen), float("nan"), level, False, shapiro, p_value, level)


MIN_N_PAIRED_BOOTSTRAP = 6  # rounds a sample: the paired bootstrap's coverage is shown from 6 (bench/interval_coverage.py)


def _walsh_median(d: np.ndarray) -> float:
    """The Hodges-Lehmann estimate of one sample: the median of its Walsh averages (hl_paired_ci's)."""
    i, j = np.triu_indices(d.size)
    return float(np.median((d[i] + d[j]) / 2))


def _walsh_median_resampled(d: np.ndarray, rng, n_resamples: int) -> np.ndarray:
    """:func:`_walsh_median` of ``n_resamples`` resamples (with replacement) of ``d``."""
    i, j = np.triu_indices(d.size)
    out = np.empty(n_resamples)
    step = max(1, 2_000_000 // i.size)
    for start in range(0, n_resamples, step):
        size = min(step, n_resamples - start)
        a = d[rng.integers(0, d.size, (size, d.size))]
        out[start : start + size] = np.median((a[:, i] + a[:, j]) / 2, axis=1)
    return out


def _paired_samples(pairs) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """``pairs`` of ``(x_i, y_i, c_i)`` as flat arrays without the rounds in which a side is NaN;
    ValueError when the two sides of one differ in length."""
    samples = []
    for x, y, c in pairs:
        x, y = np.asarray(x, dtype=float).ravel(), np.asarray(y, dtype=float).ravel()
        if x.size != y.size:
            raise ValueError("paired samples need the same length")
        keep = ~(np.isnan(x) | np.isnan(y))
        samples.append((x[keep], y[keep], float(c)))
    return samples


def paired_ratio_estimate(pairs) -> float:
    """The point estimate of :func:`paired_shift_bootstrap_ci`, ``exp(sum_i c_i HL_i)`` for ``pairs``
    of ``(x_i, y_i, c_i)`` paired by round, without an interval; NaN when a sample is empty or has a
    value <= 0."""
    samples = _paired_samples(pairs)
    if _positive(*[s for x, y, _ in samples for s in (x, y)]):
        return float("nan")
    return float(np.exp(sum(c * _walsh_median(np.log(x) - np.log(y)) for x, y, c in samples)))


def paired_shift_bootstrap_ci(pairs, level: float = 0.95, seed=0, n_resamples: int = N_RESAMPLES_SHIFT) -> RatioCI:
    """:func:`shift_bootstrap_ci` for samples paired by round: ``R = exp(sum_i c_i HL_i)``, ``HL_i`` the
    Hodges-Lehmann estimate of the per-round log ratios ``log x_i[r] - log y_i[r]`` (the median of
    their Walsh averages, :func:`hl_paired_ci`'s estimate); ``pairs`` is a list of ``(x_i, y_i,
    c_i)`` with ``x_i[r]`` and ``y_i[r]`` measured in one round (:func:`by_round`). A ratio of ratios
    paired within each variant's rounds is ``[(plat_num, base_num, 1), (plat_den, base_den, -1)]``
    (the same ratio as the unpaired one's ``(plat_num / plat_den) / (base_num / base_den)``); the
    geometric mean of k paired ratios has ``c_i = 1 / k``.

    Interval: each sample's rounds resampled on their own, a round's two values together (a drift
    common to the round cancels in every resample), the statistic recomputed, and the stretched
    percentiles of :func:`shift_bootstrap_ci`, n the fewest rounds, with Student-t quantiles in place
    of z at the Welch-Satterthwaite degrees of freedom of the samples' bootstrap variances
    (:func:`welch_df`; one sample of n rounds has n - 1). Its coverage is shown by
    simulation (bench/interval_coverage.py, tests/test_rank_intervals.py), from :data:`MIN_N_PAIRED_BOOTSTRAP`
    rounds a sample; ``none`` with ``too_few`` below. Pairs with a NaN are left out; each log
    ratio's printed-resolution bound widens it as for the rank intervals."""
    nan = float("nan")
    samples = _paired_samples(pairs)
    why = _positive(*[s for x, y, _ in samples for s in (x, y)])
    if why:
        return RatioCI(nan, nan, nan, "none", why, nan, level, False, ())
    diffs = [(np.log(x) - np.log(y), c) for x, y, c in samples]
    shapiro = tuple(shapiro_p(d) for d, _ in diffs)
    estimate = paired_ratio_estimate(samples)
    n = min(d.size for d, _ in diffs)
    what = (f"bootstrap of the Hodges-Lehmann estimates of {len(diffs)} samples of per-round log ratios "
            "(paired by round, stretched percentile)")
    if n < MIN_N_PAIRED_BOOTSTRAP:
        return RatioCI(estimate, nan, nan, "none", f"{what}: coverage shown from {MIN_N_PAIRED_BOOTSTRAP} rounds a "
                       f"sample, a sample has {n}", nan, level, False, shapiro, None, nan, True)  # fmt: skip
    widen = float(sum(abs(c) * np.max(_log_rounding(x) + _log_rounding(y)) for x, y, c in samples))
    rng = np.random.default_rng(seed)
    parts = [c * _walsh_median_resampled(d, rng, n_resamples) for d, c in diffs]
    df = welch_df([np.var(part) for part in parts], [d.size for d, _ in diffs])
    note = f"{what}, Student-t tails at {df:.1f} df, {n_resamples} resamples"
    return _stretched_percentile(sum(parts), n, estimate, widen, level, note, shapiro, df)


def welch_df(variances, sizes) -> float:
    """The Welch-Satterthwaite degrees of freedom of a sum of independent estimates with these
    ``variances`` from samples of these ``sizes``: ``(sum v_i)^2 / sum v_i^2 / (n_i - 1)``; n - 1 for
    one, the sum of the n_i - 1 at most, the smallest n_i - 1 at least (a constant sample's
    variance of 0 counts for nothing)."""
    v = np.asarray(variances, dtype=float)
    k = np.asarray(sizes, dtype=float) - 1
    if not np.any(v > 0):
        return float(np.min(k))
    return float(min(max(v.sum() ** 2 / np.sum(v**2 / k), np.min(k)), np.sum(k)))
