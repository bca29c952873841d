"""What the repetition rule that serves the verdict (``target: claims``, virtrepro.planning.adaptive) costs and
guarantees: a simulation of data-dependent stopping. Each draw measures a baseline and a platform
sample one repetition at a time, each stopping on its own by the rule (the signed-rank half-width of
its log values at most (m / 2) / sqrt(2), at least 6 repetitions, at most ``--cap``); the verdict's
interval (stats.hl_ratio_ci) is then computed on the two stopped samples. Printed per noise and true
ratio: the coverage of the true ratio, the mean n and the share stopped at the cap, the share of the
verdict's intervals whose half-width is within m / 2, and how often "within m" (overhead_at_most m)
holds and does not hold, beside a fixed n of 6 and of the cap for comparison.

    PYTHONPATH=workflow .venv/bin/python bench/stop_rule_coverage.py [--draws 1000] [--margin 0.05]

Its output at the defaults (about 3 minutes on 2 cores) is in bench/results/stop_rule_coverage.txt,
quoted in docs/methodology.md ("A stop rule that serves the verdict").
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from virtrepro.planning import adaptive
from virtrepro.analysis import stats

NOISE = {  # multiplicative noise around 1: a run-to-run spread of 1-5 %, some skewed or with outliers
    "normal-1%": lambda rng, n: 1 + 0.01 * rng.standard_normal(n),
    "lognormal-2%": lambda rng, n: rng.lognormal(0, 0.02, n),
    "lognormal-5%": lambda rng, n: rng.lognormal(0, 0.05, n),
    "skewed-2%": lambda rng, n: 1 + 0.02 * rng.exponential(size=n),
    "mixture": lambda rng, n: np.where(rng.random(n) < 0.9, 1 + 0.01 * rng.standard_normal(n),
                                       1.08 + 0.02 * rng.standard_normal(n)),
}  # fmt: skip


def stopped_sample(rule: adaptive.RepetitionRule, stream: np.ndarray) -> np.ndarray:
    """The values the rule stops with when ``stream`` comes one value at a time."""
    for n in range(1, rule.max + 1):
        if adaptive.decide(rule, [[{"metric": "m", "value": v}] for v in stream[:n]]).stop:
            return stream[:n]
    return stream[: rule.max]


def cell(noise, ratio: float, margin: float, cap: int, draws: int, rng, fixed: int | None) -> dict:
    rule = adaptive.RepetitionRule(6, cap, 0.5, interval=adaptive.SIGNED_RANK,
                                   targets=(adaptive.Target("m", margin, ("simulated",)),))
    covered, sizes, capped, narrow, holds, fails = [], [], [], [], 0, 0
    for _ in range(draws):
        base_stream, plat_stream = 100 * noise(rng, cap), 100 * ratio * noise(rng, cap)
        if fixed is None:
            base, plat = stopped_sample(rule, base_stream), stopped_sample(rule, plat_stream)
        else:
            base, plat = base_stream[:fixed], plat_stream[:fixed]
        ci = stats.hl_ratio_ci(plat, base)
        covered.append(ci.low <= ratio <= ci.high)
        sizes += [base.size, plat.size]
        capped += [base.size == cap, plat.size == cap]
        narrow.append((math.log(ci.high) - math.log(ci.low)) / 2 <= margin / 2)
        holds += ci.high < 1 + margin  # overhead_at_most margin: the interval's upper bound below it
        fails += ci.low > 1 + margin
    return {"coverage": np.mean(covered), "mean_n": np.mean(sizes), "capped": np.mean(capped),
            "narrow": np.mean(narrow), "holds": holds / draws, "fails": fails / draws}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--margin", type=float, default=0.05)
    parser.add_argument("--cap", type=int, default=30)
    parser.add_argument("--seed", type=int, default=38)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"margin {args.margin:g}, cap {args.cap}, {args.draws} draws a cell; rule: signed-rank half-width "
          f"<= {args.margin / 2 / math.sqrt(2):.4f} on the log scale, n >= {adaptive.verdict_min_n(0.95)}")
    print(f"{'noise':14} {'ratio':>6} {'n':>9} {'coverage':>8} {'mean n':>7} {'capped':>7} {'narrow':>7} "
          f"{'holds':>6} {'fails':>6}")
    for name, noise in NOISE.items():
        for ratio in (1.0, 1 + args.margin, 1 + 2 * args.margin):
            for label, fixed in (("rule", None), ("fixed 6", 6), (f"fixed {args.cap}", args.cap)):
                r = cell(noise, ratio, args.margin, args.cap, args.draws, rng, fixed)
                print(f"{name:14} {ratio:6.3f} {label:>9} {r['coverage']:8.3f} {r['mean_n']:7.1f} {r['capped']:7.2f} "
                      f"{r['narrow']:7.2f} {r['holds']:6.2f} {r['fails']:6.2f}", flush=True)


if __name__ == "__main__":
    main()
