"""How often do the verdicts' intervals cover the truth? A longer run of the coverage simulation of
tests/test_rank_intervals.py: one cell per method, noise and sample size, ``--draws`` draws each
(default 1000: a standard error of 0.007 at 95 %), printed as a table.

Methods (virtrepro.analysis.stats): ``moses`` (hl_ratio_ci, two samples), ``signed-rank`` (hl_paired_ci,
paired rounds with a drift between rounds), ``median`` (median_order_ci), ``ratio-of-ratios``
(shift_bootstrap_ci over four samples, a speed-up), ``geomean-4`` (shift_bootstrap_ci, the
geometric mean of four variants' ratios, eight samples), and their counterparts paired by round
``paired-ratio-of-ratios`` and ``paired-geomean-4`` (paired_shift_bootstrap_ci: each variant a job
of n rounds with a drift between its rounds that pairing cancels). The truth: a ratio of 1.07 under a scale
shift (platform = 1.07 x noise, baseline = noise), or the noise's median.

    PYTHONPATH=workflow .venv/bin/python bench/interval_coverage.py [--draws 1000] [--resamples 4000] [--methods ...]
"""

from __future__ import annotations

import argparse

import numpy as np

from virtrepro.analysis import stats

NOISE = {
    "normal": lambda rng, n: 1 + 0.05 * rng.standard_normal(n),
    "lognormal": lambda rng, n: rng.lognormal(0, 0.3, n),
    "skewed": lambda rng, n: 1 + 0.1 * rng.exponential(size=n),
    "mixture": lambda rng, n: np.where(rng.random(n) < 0.9, 1 + 0.02 * rng.standard_normal(n),
                                       1.3 + 0.05 * rng.standard_normal(n)),
}  # fmt: skip
RATIO = 1.07
SIZES = (5, 6, 8, 10, 15, 20, 30)
METHODS = ("moses", "signed-rank", "median", "ratio-of-ratios", "geomean-4", "paired-ratio-of-ratios", "paired-geomean-4")


def one(method: str, noise, n: int, rng, resamples: int, median: float) -> bool | None:
    """Whether one draw's interval covers the truth (None: no interval at this n)."""
    if method == "moses":
        ci, truth = stats.hl_ratio_ci(RATIO * noise(rng, n), noise(rng, n)), RATIO
    elif method == "signed-rank":
        rounds = rng.lognormal(0, 0.2, n)
        ci, truth = stats.hl_paired_ci(RATIO * rounds * noise(rng, n), rounds * noise(rng, n)), RATIO
    elif method == "median":
        low, high, _ = stats.median_order_ci(noise(rng, n))
        return None if low != low else bool(low <= median <= high)
    elif method.startswith("paired-"):
        variants = 2 if method == "paired-ratio-of-ratios" else 4
        pairs = []
        for index in range(variants):
            drift = rng.lognormal(0, 0.2, n)
            c = (1 if index == 0 else -1) if variants == 2 else 1 / variants
            factor = RATIO if variants == 4 or index == 0 else 1.0
            pairs.append((factor * drift * noise(rng, n), drift * noise(rng, n), c))
        ci = stats.paired_shift_bootstrap_ci(pairs, seed=int(rng.integers(1 << 31)), n_resamples=resamples)
        truth = RATIO
    else:
        variants = 1 if method == "ratio-of-ratios" else 4
        pairs = []
        for _ in range(variants):
            if method == "ratio-of-ratios":
                pairs += [(RATIO * noise(rng, n), noise(rng, n), 1), (noise(rng, n), noise(rng, n), -1)]
            else:
                pairs.append((RATIO * noise(rng, n), noise(rng, n), 1 / variants))
        ci, truth = stats.shift_bootstrap_ci(pairs, seed=int(rng.integers(1 << 31)), n_resamples=resamples), RATIO
    return None if ci.method == "none" else bool(ci.low <= truth <= ci.high)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=stats.N_RESAMPLES_SHIFT)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    medians = {name: float(np.median(noise(np.random.default_rng(1), 1_000_000))) for name, noise in NOISE.items()}
    print(f"coverage of nominal 95 % intervals, {args.draws} draws a cell ('-': no interval at this n)")
    print(f"{'method':22} {'noise':10} " + " ".join(f"n={n:<5}" for n in SIZES))
    for method in args.methods:
        for name, noise in NOISE.items():
            cells = []
            for n in SIZES:
                hits = [one(method, noise, n, rng, args.resamples, medians[name]) for _ in range(args.draws)]
                cells.append("-" if hits[0] is None else f"{np.mean(hits):.3f}")
            print(f"{method:22} {name:10} " + " ".join(f"{c:7}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
