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
        [--claims data/reference/claims.yaml]

Prints one line a comparison and a count; exits 0 (it measures, it does not judge).
"""

from __future__ import annotations

import argparse
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
                same_side = (first[0] - 1) * (second[0] - 1) > 0
                both_include_one = first[1] <= 1 <= first[2] and second[1] <= 1 <= second[2]
                out.append({"benchmark": check["benchmark"], "metric": check["metric"], "platform": platform,
                            "variant": variant, "rounds": len(rounds), "first": first, "second": second,
                            "agree": bool(same_side or both_include_one)})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default="data")
    parser.add_argument("--testbed", default="reference-vm")
    parser.add_argument("--claims", default="data/reference/claims.yaml")
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


if __name__ == "__main__":
    main()
