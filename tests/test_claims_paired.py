"""Comparisons paired by round (issue 40): where both platforms of a comparison were measured in rounds,
the claims and the figures' comparisons pair the values by round (Hodges-Lehmann of the Walsh averages
of the rounds' log ratios, the exact signed-rank interval), the drift gate compares the first half of
the rounds with the second, and the table's ``round`` column comes from the sidecars (version 3).

Expected values are worked out here by hand, independently of the code: the Walsh averages enumerated
with itertools, the signed-rank null distribution counted over every subset of the ranks."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import DATA, commit_capture, table_row
from virtrepro import results
from virtrepro.analysis import claims, conditions
from virtrepro.analysis.stats import compare_to_baseline


def walsh(w):
    """Every Walsh average (w_i + w_j) / 2, i <= j, sorted."""
    return sorted((a + b) / 2 for a, b in itertools.combinations_with_replacement(w, 2))


def signed_rank_k(n, level=0.95):
    """The k of the exact signed-rank interval (k-th smallest to k-th largest Walsh average) and its
    coverage, by counting the subsets of the ranks 1..n by their sum (the null distribution of T)."""
    counts = {}
    for size in range(n + 1):
        for subset in itertools.combinations(range(1, n + 1), size):
            counts[sum(subset)] = counts.get(sum(subset), 0) + 1
    total = 2 ** n
    k, below = 0, 0
    while True:  # the largest k with P(T <= k - 1) <= (1 - level) / 2
        below_next = below + counts.get(k, 0)
        if below_next / total > (1 - level) / 2:
            return k, 1 - 2 * below / total
        k, below = k + 1, below_next


def test_the_signed_rank_critical_values_by_hand():
    assert signed_rank_k(6) == (1, 1 - 2 / 64)  # [min, max] of the Walsh averages: 96.9 %
    assert signed_rank_k(5)[0] == 0  # no 95 % interval at 5 rounds (the widest has 93.75 %)
    assert signed_rank_k(8) == (4, 1 - 2 * 5 / 256)  # the 4th smallest to the 4th largest: 96.1 %


# six rounds: native drifts by 20 % over the run, lxc is 2-4 % slower than native in every round
NATIVE = [100.0 + 4.0 * r + 0.123456789 for r in range(6)]
RATIOS = [0.97, 0.96, 0.98, 0.965, 0.975, 0.97]
LXC = [n * r for n, r in zip(NATIVE, RATIOS)]


def rows(platform, values, rounds=True, metric="throughput"):
    return [table_row({}, testbed="t", platform=platform, benchmark="bench", repetition=i, part=None,
                      round=i if rounds else None, metric=metric, unit="MB/s", value=float(v),
                      source_log=f"t/{platform}/bench/rep-{i}.log") for i, v in enumerate(values)]


def claim(threshold=0.05, kind="overhead_at_most"):
    return {"id": "x-paired", "paper": "x", "source": "Sec. 1", "published": "p", "testable": True,
            "check": {"kind": kind, "benchmark": "bench", "metric": "throughput", "platform": "lxc",
                      "baseline": "native", "threshold": threshold}}


def test_pairing_by_round_removes_a_drift_both_platforms_share():
    table = pd.DataFrame(rows("native", NATIVE) + rows("lxc", LXC))
    row = claims.evaluate_claim(claim(), table)
    w = [math.log(x / y) for x, y in zip(LXC, NATIVE)]
    averages = walsh(w)
    assert len(averages) == 21
    k, coverage = signed_rank_k(6)
    estimate = math.exp(np.median(averages))
    low, high = math.exp(averages[k - 1]), math.exp(averages[-k])  # min and max: 0.96 and 0.98
    assert (low, high) == pytest.approx((0.96, 0.98), rel=1e-12)
    # throughput: higher is better, the relative difference is 1 - ratio (positive = worse)
    assert row["value"] == pytest.approx(1 - estimate, abs=1e-9)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((1 - high, 1 - low), abs=1e-9)
    assert row["ci_method"] == "hl-signed-rank" and "6 rounds" in row["note"]
    assert f"achieved confidence {coverage:.1%}" in row["note"] and "96.9%" in row["note"]
    assert row["verdict"] == "holds"  # every round 2-4 % slower: within 5 %

    # the same values unpaired: the drift of native (100 to 120) is in both samples, the Mann-Whitney
    # interval spans it, and the claim cannot be decided
    unpaired = claims.evaluate_claim(claim(), pd.DataFrame(rows("native", NATIVE, False) + rows("lxc", LXC, False)))
    assert unpaired["ci_method"] == "hl-moses" and unpaired["verdict"] == "inconclusive"
    assert unpaired["ci_high"] - unpaired["ci_low"] > 5 * (row["ci_high"] - row["ci_low"])
    assert unpaired["ci_high"] > 0.05 and row["ci_high"] < 0.05


def test_a_side_measured_before_rounds_is_compared_unpaired():
    table = pd.DataFrame(rows("native", NATIVE, rounds=False) + rows("lxc", LXC))
    assert claims.evaluate_claim(claim(), table)["ci_method"] == "hl-moses"


def test_the_paired_p_values_invert_the_paired_interval():
    # the paired interval of the relative difference, [2 %, 4 %], lies inside +-5 % and above 1 %
    table = pd.DataFrame(rows("native", NATIVE) + rows("lxc", LXC))
    assert claims.evaluate_claim(claim(0.05, "equivalent"), table)["verdict"] == "holds"
    assert claims.evaluate_claim(claim(0.01, "overhead_at_least"), table)["verdict"] == "holds"


# 16 rounds for the drift gate: half 1 = rounds 0-7, half 2 = rounds 8-15 (ceil(16 / 2) = 8)
def drifting(first_half_ratios, second_half_ratios):
    native = [200.0 - 2.5 * r + 0.987654321 for r in range(16)]  # native drifts too: it cancels
    ratios = list(first_half_ratios) + list(second_half_ratios)
    return native, [n * r for n, r in zip(native, ratios)]


JITTER = [1.0, 1.001, 0.999, 1.002, 0.998, 1.0005, 0.9995, 1.0015]
SLOW = [0.70 * j for j in JITTER]  # 30 % worse
# half 1: six rounds 5 % worse, two 20 % worse: its median Walsh average (21 of 36 near log 0.95) lies
# below 10 %, yet pooled only those 21 of 136 Walsh averages lie above log 0.9, fewer than k = 30
MIXED = [0.95 * j for j in JITTER[:6]] + [0.80, 0.801]


def test_the_halves_of_the_rounds_that_disagree_make_a_decided_claim_not_comparable():
    native, lxc = drifting(MIXED, SLOW)
    w = [math.log(x / y) for x, y in zip(lxc, native)]
    k, _ = signed_rank_k(16)
    averages = walsh(w)
    assert k == 30 and sum(a > math.log(0.9) for a in averages) == 21 < k  # pooled: does not hold at 10 %
    half1, half2 = 1 - math.exp(np.median(walsh(w[:8]))), 1 - math.exp(np.median(walsh(w[8:])))
    assert half1 < 0.10 < half2
    table = pd.DataFrame(rows("native", native) + rows("lxc", lxc))
    row = claims.evaluate_claim(claim(0.10), table)
    assert row["ci_method"] == "hl-signed-rank"
    assert row["ci_low"] == pytest.approx(1 - math.exp(averages[-k]), abs=1e-9) and row["ci_low"] > 0.10
    assert row["verdict"] == conditions.NOT_COMPARABLE and "drift between parts" in row["note"]
    assert "within each half of the rounds" in row["note"]
    assert f"half 1 {100 * half1:+.1f}%, half 2 {100 * half2:+.1f}%" in row["note"]


def test_the_halves_of_the_rounds_that_agree_decide_as_pooled():
    native, lxc = drifting(SLOW, SLOW)
    row = claims.evaluate_claim(claim(0.10), pd.DataFrame(rows("native", native) + rows("lxc", lxc)))
    assert row["ci_method"] == "hl-signed-rank" and row["verdict"] == "does not hold"
    assert "drift" not in row["note"]


def test_compare_to_baseline_pairs_by_round_where_the_table_has_rounds():
    table = pd.DataFrame(rows("native", NATIVE) + rows("lxc", LXC))[["platform", "round", "value"]]
    paired = compare_to_baseline(table, "native", higher_is_better=True, margin=0.01).iloc[0]
    assert paired["ci_method"] == "hl-signed-rank" and paired["n_platform"] == paired["n_baseline"] == 6
    assert (paired["ratio_ci_low"], paired["ratio_ci_high"]) == pytest.approx((0.96, 0.98), rel=1e-9)
    assert paired["verdict"] == "worse"  # 2-4 % worse: not within 1 %, and the interval excludes 1
    unpaired = compare_to_baseline(table.drop(columns="round"), "native", higher_is_better=True, margin=0.01).iloc[0]
    assert unpaired["ci_method"] == "hl-moses" and unpaired["verdict"] == "inconclusive"


# --- the table's round column, from the sidecars the measurement writes ---------------------------

SYSBENCH = "raw/tb/{platform}/sysbench_cpu/threads-1_prime-20000_seconds-10"


def place(data: Path, platform: str, rep: int, rounds: bool = True, order_part: int | None = None) -> None:
    directory = SYSBENCH.format(platform=platform)
    sidecar = {"command": "captured", "testbed": "tb", "platform": {"name": platform}, "benchmark": "sysbench_cpu",
               "variant": Path(directory).name, "parameters": {"threads": "1", "prime": "20000", "seconds": "10"},
               "repetition": rep}
    if rounds:
        sidecar.update(sidecar_version=3, round=rep, position=rep % 2, round_order=["native", "lxc"][:: 1 - 2 * (rep % 2)],
                       frozen=["lxc"] if platform == "native" else ["native"])
    elif order_part is not None:
        sidecar.update(order={"part": order_part, "parts": 2, "sequence": "A B B A", "slot": rep})
    commit_capture(DATA / "sysbench" / "cpu-1thread-10s.log", data / directory / f"rep-{rep}.log", sidecar)


def parts_by_round(table, platform):
    mine = table[table["platform"] == platform].drop_duplicates("source_log")
    return dict(zip(mine["round"].astype(int), mine["part"].astype(int)))


def test_the_table_has_each_logs_round_and_its_half_as_its_part(tmp_path):
    for rep in range(5):
        place(tmp_path, "native", rep)
        place(tmp_path, "lxc", rep)
    table = results.write_table(tmp_path, "tb", csv=False)
    assert str(table["round"].dtype) == "Int64" and "round" in results.COLUMNS
    assert (table["round"] == table["repetition"]).all()
    # 5 rounds: the first ceil(5 / 2) = 3 are part 1
    assert parts_by_round(table, "native") == {0: 1, 1: 1, 2: 1, 3: 2, 4: 2}
    # two rounds more, added to a table built before: the halves are made anew (7 rounds: 4 and 3)
    place(tmp_path, "native", 5)
    place(tmp_path, "native", 6)
    table = results.write_table(tmp_path, "tb", csv=False)
    assert parts_by_round(table, "native") == {0: 1, 1: 1, 2: 1, 3: 1, 4: 2, 5: 2, 6: 2}
    assert parts_by_round(table, "lxc") == {0: 1, 1: 1, 2: 1, 3: 2, 4: 2}
    pd.testing.assert_frame_equal(table, results.build_table(tmp_path, "tb"))


def test_logs_measured_before_rounds_have_no_round_and_keep_their_part(tmp_path):
    place(tmp_path, "native", 0, rounds=False, order_part=1)
    place(tmp_path, "native", 1, rounds=False, order_part=2)
    place(tmp_path, "lxc", 0, rounds=False)
    table = results.build_table(tmp_path, "tb")
    assert table["round"].isna().all()
    native = table[table["platform"] == "native"].drop_duplicates("source_log")
    assert native["part"].tolist() == [1, 2] and table.loc[table["platform"] == "lxc", "part"].isna().all()
    assert json.loads(native["stopping"].iat[0])["n_repetitions"] == 2


# A speed-up (time at 1 thread / at 2) of lxc against native, each thread count a job of its own
# rounds: native's time drifts by up to 30 % across the rounds of each job, lxc's with it, and lxc's
# own factor per round is given (its speed-up is ~0.9 of native's).
DRIFT_1 = [1.00, 1.10, 1.22, 1.05, 0.93, 1.30, 1.15, 1.01]
DRIFT_2 = [1.20, 0.95, 1.08, 1.25, 1.02, 0.91, 1.18, 1.11]
OWN_1 = [1.001, 0.998, 1.003, 1.000, 0.999, 1.002, 0.997, 1.001]  # lxc / native at 1 thread
OWN_2 = [1.112, 1.108, 1.115, 1.110, 1.109, 1.113, 1.111, 1.107]  # lxc / native at 2 threads


def speedup_rows(platform, times, threads, rounds=True):
    return [table_row({"kernel": "cg", "threads": threads}, testbed="t", platform=platform, benchmark="npb_omp",
                      repetition=i, part=None, round=i if rounds else None, metric="time", unit="s",
                      value=float(v), source_log=f"t/{platform}/npb_omp/kernel-cg_threads-{threads}/rep-{i}.log")
            for i, v in enumerate(times)]  # fmt: skip


def speedup_table(rounds=True):
    native_1 = [round(20.0 * d, 6) for d in DRIFT_1]
    native_2 = [round(10.0 * d, 6) for d in DRIFT_2]
    lxc_1 = [round(n * o, 6) for n, o in zip(native_1, OWN_1)]
    lxc_2 = [round(n * o, 6) for n, o in zip(native_2, OWN_2)]
    table = pd.DataFrame(speedup_rows("native", native_1, 1, rounds) + speedup_rows("native", native_2, 2, rounds)
                         + speedup_rows("lxc", lxc_1, 1, rounds) + speedup_rows("lxc", lxc_2, 2, rounds))
    return table, (native_1, native_2, lxc_1, lxc_2)


def speedup_claim():
    return {"id": "x-speedup", "paper": "x", "source": "Sec. 1", "published": "p", "testable": True,
            "check": {"kind": "overhead_at_most", "benchmark": "npb_omp", "metric": "parallel_speedup",
                      "platform": "lxc", "baseline": "native", "threshold": 0.15}}


def test_a_speedup_measured_in_rounds_is_paired_within_each_thread_counts_rounds():
    table, (native_1, native_2, lxc_1, lxc_2) = speedup_table()
    row = claims.evaluate_claim(speedup_claim(), table)
    # the speed-up ratio (lxc_1 / lxc_2) / (native_1 / native_2) regrouped as (lxc_1 / native_1) /
    # (lxc_2 / native_2): the Hodges-Lehmann estimate of each job's per-round log ratios (the median of
    # their 36 Walsh averages), enumerated here
    hl_1 = float(np.median(walsh([math.log(a / b) for a, b in zip(lxc_1, native_1)])))
    hl_2 = float(np.median(walsh([math.log(a / b) for a, b in zip(lxc_2, native_2)])))
    ratio = math.exp(hl_1 - hl_2)
    assert ratio == pytest.approx(1.0005 / 1.1105, abs=2e-3)  # the medians of OWN_1 and OWN_2
    assert row["value"] == pytest.approx(1 - ratio, rel=1e-9)  # higher is better: relative = 1 - ratio
    assert "paired by round" in row["note"] and row["ci_method"] == "bootstrap-hl"
    # the drift cancels: lxc's own factors vary by under 0.5 %, so the interval is narrow, and the
    # claim (at most 15 % worse) holds; compared unpaired the drift's 30 % makes it inconclusive
    assert row["ci_high"] - row["ci_low"] < 0.02 and row["verdict"] == "holds"
    unpaired = claims.evaluate_claim(speedup_claim(), speedup_table(rounds=False)[0])
    assert "paired by round" not in unpaired["note"] and unpaired["ci_high"] - unpaired["ci_low"] > 0.2
    assert unpaired["verdict"] != "holds"


def test_a_product_of_ratios_paired_by_round_is_estimated_within_each_half_of_each_ratios_rounds():
    """The drift gate's re-estimate of a speed-up paired by round: each ratio within the first
    ceil(n / 2) of its own rounds, then the rest; the halves' speed-up ratios worked out by hand."""
    from virtrepro.analysis.claims import intervals
    from virtrepro.analysis.claims.selection import _Pair

    _, (native_1, native_2, lxc_1, lxc_2) = speedup_table()
    rounds_1, rounds_2 = np.arange(8), np.arange(3, 10)  # the 2-thread job: 7 rounds, numbered 3..9
    arrays = {"num": (np.array(lxc_1), np.array(native_1), rounds_1),
              "den": (np.array(lxc_2[:7]), np.array(native_2[:7]), rounds_2)}
    pair = _Pair("speed-up", {k: a[0] for k, a in arrays.items()}, {k: a[1] for k, a in arrays.items()}, None,
                 ({k: a[2] for k, a in arrays.items()}, {k: a[2] for k, a in arrays.items()}))
    components = intervals._round_components([(pair, 1.0)])
    assert [c for _, _, c, _ in components] == [1.0, -1.0]
    halves = intervals._component_halves(components)

    def hl(a, b):
        return float(np.median(walsh([math.log(x / y) for x, y in zip(a, b)])))

    # 8 rounds: 4 + 4; 7 rounds: 4 + 3
    expected = {1: math.exp(hl(lxc_1[:4], native_1[:4]) - hl(lxc_2[:4], native_2[:4])),
                2: math.exp(hl(lxc_1[4:], native_1[4:]) - hl(lxc_2[4:7], native_2[4:7]))}
    assert halves == pytest.approx(expected, rel=1e-12)
    # a ratio measured before rounds: nothing pairs, the product is compared unpaired
    before = _Pair("x", pair.plat, pair.base, None, ({"num": np.full(8, np.nan), "den": rounds_2}, pair.rounds[1]))
    assert intervals._round_components([(before, 1.0)]) is None
