"""Do the first and the second half of the rounds agree? For every comparison of a container with
native that a claim uses (a testable claim's check: its benchmark, metric and ``where``, a container
among its platforms), each variant measured in rounds on both is paired by round and re-estimated
within the first ceil(n / 2) of the rounds both have and within the rest
(:func:`virtrepro.analysis.stats.round_halves`): the Hodges-Lehmann ratio container / native of each
half with its exact signed-rank interval (:func:`virtrepro.analysis.stats.hl_paired_ci`). The halves
agree when their estimates lie on the same side of 1 or both intervals include 1. A half of fewer
than 6 rounds has no 95 % interval: its widest one, the extreme Walsh averages, is used, with its
achieved confidence (75 % at 3 rounds, 87.5 % at 4, 93.75 % at 5). Derived metrics (a speed-up, an
isolation efficiency) compare two variants and are left out; their claims' drift check re-estimates
them by halves too (docs/methodology.md).

    PYTHONPATH=workflow .venv/bin/python bench/round_halves.py [--data-dir data] [--testbed reference-vm]
        [--claims data/reference/claims.yaml] [--splits 2000]

Prints one line a comparison and a count; exits 0 (it measures, it does not judge).

How many disagreements would chance alone give? Under no drift the rounds are exchangeable: which
rounds form a "half" does not matter. For each comparison the script enumerates every split of its
paired rounds into two halves of the same sizes (at most ``--splits`` of them, drawn at random beyond
that), keeping each round's pair together, and counts the share of splits whose halves disagree:
that comparison's chance of a disagreement without drift. The number of disagreements expected
without drift is their sum, and its distribution is the Poisson-binomial of those chances (the
comparisons taken as independent; those of one native variant share its rounds, so the spread is a
little narrower than the true one). The script prints the observed count beside that mean, its
central 95 % range and P(at least the observed count): a count within the range is what an
exchangeable order gives, so the halves show no drift beyond chance.
"""

from __future__ import annotations

import argparse
import itertools
import math
from pathlib import Path

import numpy as np

from virtrepro import datalayout
from virtrepro.analysis import stats
from virtrepro.analysis.claims.loading import load_claims
from virtrepro.analysis.claims.selection import NotMeasured, _records
from virtrepro.platforms import catalog as platform_catalog
from virtrepro.results.reading import read_table

DERIVED = ("parallel_speedup", "isolation_efficiency")


def _containers(check: dict) -> list[str]:
    named = [check.get("platform"), check.get("baseline"), *(check.get("platforms") or [])]
    return sorted({name for name in named if name in platform_catalog.BY_NAME
                   and platform_catalog.BY_NAME[name].family == platform_catalog.CONTAINER})


def _selected(table, check: dict, platform: str):
    """The records the check compares on ``platform`` (the claims' own selection), none when it has none."""
    try:
        return _records(table, check, platform)
    except NotMeasured:
        return table.iloc[0:0]


def _half(plat: np.ndarray, base: np.ndarray) -> tuple[float, float, float, float]:
    """The half's ratio, its interval (95 % where it exists, else the widest) and that interval's confidence."""
    ci = stats.hl_paired_ci(plat, base, 0.95, describe=False)
    if ci.method != "none":
        return ci.estimate, ci.low, ci.high, ci.achieved
    w = np.log(plat) - np.log(base)
    walsh = [(w[i] + w[j]) / 2 for i in range(w.size) for j in range(i, w.size)]
    return ci.estimate, math.exp(min(walsh)), math.exp(max(walsh)), 1 - 2 * 2.0 ** -w.size


def compare(table, claims: list[dict]) -> list[dict]:
    seen, out = set(), []
    for claim in claims:
        check = claim.get("check") or {}
        if not claim.get("testable") or check.get("metric") in DERIVED or "benchmark" not in check:
            continue
        for platform in _containers(check):
            key = (check["benchmark"], check["metric"], repr(sorted((check.get("where") or {}).items())), platform)
            if key in seen:
                continue
            seen.add(key)
            plat, base = _selected(table, check, platform), _selected(table, check, "native")
            for variant in sorted(set(plat["variant"]) & set(base["variant"])):
                if (platform, check["benchmark"], check["metric"], variant) in seen:
                    continue  # another claim's selection of the same comparison
                seen.add((platform, check["benchmark"], check["metric"], variant))
                p, b = plat[plat["variant"] == variant], base[base["variant"] == variant]
                paired = stats.by_round(p["value"], p["round"], b["value"], b["round"])
                if paired is None:
                    continue
                x, y, rounds = paired
                if len(rounds) < 4:  # two rounds a half at least
                    continue
                halves = stats.round_halves(rounds)
                first, second = (_half(x[halves == h], y[halves == h]) for h in (1, 2))
                out.append({"benchmark": check["benchmark"], "metric": check["metric"], "platform": platform,
                            "variant": variant, "rounds": len(rounds), "first": first, "second": second,
                            "agree": _agree(first, second), "x": x, "y": y})
    return out


def _agree(first, second) -> bool:
    """Two halves agree: their estimates on the same side of 1, or both intervals include 1."""
    same_side = (first[0] - 1) * (second[0] - 1) > 0
    both_include_one = first[1] <= 1 <= first[2] and second[1] <= 1 <= second[2]
    return bool(same_side or both_include_one)


def splits(n: int, limit: int, rng: np.random.Generator) -> list[tuple[int, ...]]:
    """The index sets of the first half (ceil(n / 2) of ``n`` rounds) of every split, or ``limit`` of
    them drawn at random (without repeats) where there are more."""
    size = -(-n // 2)
    if math.comb(n, size) <= limit:
        return list(itertools.combinations(range(n), size))
    drawn: set[tuple[int, ...]] = set()
    while len(drawn) < limit:
        drawn.add(tuple(sorted(rng.choice(n, size, replace=False).tolist())))
    return sorted(drawn)


def chance_of_disagreement(x: np.ndarray, y: np.ndarray, limit: int, rng: np.random.Generator) -> float:
    """The share of the splits of the paired rounds (x_r, y_r) into two halves whose halves disagree:
    the chance of a disagreement when the rounds' order carries nothing (no drift)."""
    found = []
    for first in splits(x.size, limit, rng):
        mask = np.zeros(x.size, bool)
        mask[list(first)] = True
        found.append(not _agree(_half(x[mask], y[mask]), _half(x[~mask], y[~mask])))
    return float(np.mean(found))


def poisson_binomial(chances) -> np.ndarray:
    """P(T = k), k = 0..len(chances), of a sum T of independent Bernoulli trials with these chances."""
    pmf = np.zeros(len(chances) + 1)
    pmf[0] = 1.0
    for p in chances:
        pmf[1:] = pmf[1:] * (1 - p) + pmf[:-1] * p
        pmf[0] *= 1 - p
    return pmf


def chance_summary(observed: int, chances) -> dict:
    """The mean, central 95 % range and P(T >= observed) of the disagreements chance alone gives."""
    pmf = poisson_binomial(chances)
    cdf = np.cumsum(pmf)
    return {"mean": float(np.sum(np.arange(pmf.size) * pmf)), "low": int(np.searchsorted(cdf, 0.025)),
            "high": int(np.searchsorted(cdf, 0.975)), "p_at_least": float(pmf[observed:].sum())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default="data")
    parser.add_argument("--testbed", default="reference-vm")
    parser.add_argument("--claims", default="data/reference/claims.yaml")
    parser.add_argument("--splits", type=int, default=2000,
                        help="the most splits of a comparison's rounds into halves to try (all where there are fewer)")
    args = parser.parse_args()
    table = read_table(datalayout.table_paths(Path(args.data_dir), args.testbed)["parquet"])
    rows = compare(table, load_claims(args.claims))

    def shown(half):
        estimate, low, high, confidence = half
        return f"x{estimate:.3f} [{low:.3f}, {high:.3f}] at {confidence:.1%}"

    for row in rows:
        print(f"{'agree   ' if row['agree'] else 'DISAGREE'} {row['platform']:12} {row['benchmark']} {row['metric']} "
              f"{row['variant']} ({row['rounds']} rounds): first half {shown(row['first'])}, "
              f"second half {shown(row['second'])}")
    agree = sum(row["agree"] for row in rows)
    print(f"{agree} of {len(rows)} container-vs-native comparisons that claims use agree between the halves "
          f"of their rounds (same side of 1, or both intervals include 1)")
    rng = np.random.default_rng(20261129)
    chances = [chance_of_disagreement(row["x"], row["y"], args.splits, rng) for row in rows]
    said = chance_summary(len(rows) - agree, chances)
    print(f"without drift (rounds exchangeable, every split into halves of the same sizes): "
          f"{said['mean']:.1f} disagreements expected, 95 % of counts in {said['low']}-{said['high']}; "
          f"P(at least {len(rows) - agree}) = {said['p_at_least']:.2f}")


if __name__ == "__main__":
    main()
