"""Intervals and baseline comparisons checked against hand-computed values, scipy/statsmodels called
directly in the test, and a coverage simulation."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats
from statsmodels.stats.multitest import multipletests

from virtrepro.analysis.stats import (compare_to_baseline, equivalence_p, hl_ratio_ci, holm, location_ci, mean_ci,
    outliers, overhead, summarize)


def test_t_interval_of_a_textbook_sample():
    # x = 1..5: mean 3, s = sqrt(2.5), t(0.975, 4) = 2.776445
    mean, low, high = mean_ci([1, 2, 3, 4, 5], 0.95)
    half = 2.7764451051977987 * math.sqrt(2.5) / math.sqrt(5)
    assert mean == 3
    assert low == pytest.approx(3 - half, abs=1e-9) and high == pytest.approx(3 + half, abs=1e-9)


def test_t_interval_is_statsmodels_float_for_float():
    """mean_ci does statsmodels' DescrStatsW.tconfint_mean step by step (without importing it): the same
    floats on samples of the sizes and spreads the repetition rule sees."""
    from statsmodels.stats.weightstats import DescrStatsW

    rng = np.random.default_rng(7)
    for n in (2, 3, 5, 6, 10, 15, 30):
        for scale in (1e-6, 0.02, 1.0, 1e4):
            data = 100 + scale * rng.standard_normal(n)
            for level in (0.95, 0.97):
                _, low, high = mean_ci(data, level)
                assert (low, high) == tuple(float(v) for v in DescrStatsW(data).tconfint_mean(alpha=1 - level))


def test_the_stop_rule_imports_neither_scipy_stats_nor_statsmodels():
    """The table's stop rule (a t or signed-rank width) runs for every variant a build rebuilds: the
    statistics package loads its names on first use, so that path costs no second of imports."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import virtrepro

    env = {**os.environ, "PYTHONPATH": str(Path(virtrepro.__file__).parent.parent)}
    code = ("import sys; from virtrepro.planning import adaptive; "
            "adaptive.relative_half_width([1.0, 2.0, 3.5]); adaptive.log_half_width([1.0, 2, 3, 4, 5, 6.1]); adaptive.paired_half_width([1.0, 2, 3, 4, 5, 6.1], [1.1, 2, 3, 4, 5, 6]); from virtrepro.analysis.stats import by_round;"
            "print(sorted(m for m in ('scipy.stats', 'statsmodels') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.strip() == "[]"


def test_every_name_of_the_statistics_package_is_its_module_s():
    import importlib

    from virtrepro.analysis import stats

    for module, names in stats._MODULES.items():
        for name in names:
            assert getattr(stats, name) is getattr(importlib.import_module(f"virtrepro.analysis.stats.{module}"), name)
    with pytest.raises(AttributeError):
        stats.no_such_name


def test_97_percent_level_uses_the_right_quantile():
    data = [10.0, 12.0, 11.0, 13.0, 9.0, 11.5]
    mean, low, high = mean_ci(data, 0.97)
    s = pd.Series(data).std(ddof=1)
    half = scipy_stats.t.ppf(0.985, len(data) - 1) * s / math.sqrt(len(data))
    assert (high - low) / 2 == pytest.approx(half)
    assert mean == pytest.approx(11.083333333)


def test_one_value_has_no_interval():
    mean, low, high = mean_ci([4.0])
    assert mean == 4.0 and math.isnan(low) and math.isnan(high)


def test_summarize_groups():
    frame = pd.DataFrame({"platform": ["a", "a", "b", "b", "b"], "value": [1.0, 3.0, 2.0, 2.0, 2.0]})
    out = summarize(frame, ["platform"]).set_index("platform")
    assert out.loc["a", "n"] == 2 and out.loc["a", "mean"] == 2.0 and out.loc["b", "std"] == 0.0
    # the median's order-statistic interval needs 6 values at 95 % (1 - 2 / 2^n): none at 2 or 3, said so
    assert out.loc["a", "ci_method"] == "none" and math.isnan(out.loc["a", "ci_low"])
    assert "at n = 2 (at most 50.0%)" in out.loc["a", "ci_note"] and "at n = 3 (at most 75.0%)" in out.loc["b", "ci_note"]


def test_nan_is_removed_before_the_interval():
    # cleaned data 20, 21, 19.5, 22: mean 20.625, s = sqrt(3.6875 / 3) = 1.108678,
    # t(0.975, 3) = 3.182446, half-width 3.182446 * 1.108678 / 2 = 1.764154
    mean, low, high = mean_ci([20, float("nan"), 21, 19.5, 22])
    assert mean == pytest.approx(20.625)
    assert (round(low, 3), round(high, 3)) == (18.861, 22.389)
    out = summarize(pd.DataFrame({"g": ["x"] * 5, "value": [20, float("nan"), 21, 19.5, 22]}), ["g"]).iloc[0]
    assert out["n"] == 4 and out["mean"] == pytest.approx(20.625) and round(out["std"], 3) == 1.109
    assert out["median"] == pytest.approx(20.5) and out["ci_method"] == "none"
    assert out["shapiro_p"] == pytest.approx(scipy_stats.shapiro([20, 21, 19.5, 22]).pvalue)  # described, not used


def test_a_samples_interval_is_its_medians_order_statistic_interval_whatever_its_shape():
    # 1, 1, 1, 1, 1, 2, 3, 10: n = 8: [x(1), x(8)] covers the median with 1 - 2 / 2^8 = 99.2 %,
    # [x(2), x(7)] only with 1 - 2 * 9 / 256 = 93.0 % < 95 %
    values = [1, 1, 2, 3, 10, 1, 1, 1]
    out = location_ci(values)
    assert out["ci_method"] == "median-order" and out["ci_of"] == "median" and out["median"] == 1.0
    assert (out["ci_low"], out["ci_high"]) == (1.0, 10.0) and "99.2%" in out["ci_note"]
    # a normal-looking sample gets the same method: no pre-test chooses it
    normal = location_ci([9.8, 10.1, 9.9, 10.2, 10.0, 10.05, 9.95, 10.15])
    assert normal["ci_method"] == "median-order" and (normal["ci_low"], normal["ci_high"]) == (9.8, 10.2)
    # n = 5: even [min, max] covers the median with only 1 - 2/32 = 93.75 %: no interval at 95 %
    five = location_ci([1, 1, 1, 1, 9])
    assert five["ci_method"] == "none" and math.isnan(five["ci_low"]) and "93.8%" in five["ci_note"]


# --- overhead: the Hodges-Lehmann ratio and its exact Mann-Whitney interval ----------------------

# baseline 9, 10, 11, 12 (+ 1e-6, so that the printed resolution's widening is negligible), platform
# twice each: the 16 log differences are log 2 + log(y_i / y_j), symmetric about log 2, so the
# Hodges-Lehmann ratio is exactly 2. At 4 + 4 the exact Mann-Whitney interval at 95 % is the widest,
# [min, max] of the ratios (P(U <= 0) = 1 / C(8, 4) = 1/70 <= 0.025 < 2/70): [2 * 9 / 12, 2 * 12 / 9],
# achieved confidence 1 - 2/70 = 97.1 %.
BASE = [9.000001, 10.000001, 11.000001, 12.000001]
PLAT = [2 * v for v in BASE]
LOW, HIGH = 2 * BASE[0] / BASE[-1], 2 * BASE[-1] / BASE[0]


def test_overhead_is_the_hodges_lehmann_ratio_with_the_exact_interval_by_hand():
    out = overhead(BASE, PLAT, higher_is_better=False)
    assert out["ratio"] == pytest.approx(2.0, rel=1e-12) and out["method"] == "hl-moses"
    assert out["ratio_ci_low"] == pytest.approx(LOW, rel=1e-5) and out["ratio_ci_high"] == pytest.approx(HIGH, rel=1e-5)
    assert out["achieved"] == pytest.approx(1 - 2 / 70) and "97.1%" in out["ci_note"]


def test_overhead_interval_follows_the_ratio_interval():
    times = overhead(BASE, PLAT, higher_is_better=False)  # platform takes twice as long
    assert times["overhead_percent"] == pytest.approx(100.0)
    assert times["overhead_ci_low"] == pytest.approx((LOW - 1) * 100, rel=1e-5)
    assert times["overhead_ci_high"] == pytest.approx((HIGH - 1) * 100, rel=1e-5)
    rate = overhead(BASE, PLAT, higher_is_better=True)  # platform delivers twice the throughput
    assert rate["overhead_percent"] == pytest.approx(-100.0)
    assert rate["overhead_ci_low"] == pytest.approx((1 - HIGH) * 100, rel=1e-5)
    assert rate["overhead_ci_high"] == pytest.approx((1 - LOW) * 100, rel=1e-5)


def test_overhead_sign_convention_for_both_directions():
    base = [100.0, 100.0, 100.0]
    # higher is better: platform 90 % of the throughput -> 10 % overhead
    assert overhead(base, [90.0, 90.0, 90.0], True)["overhead_percent"] == pytest.approx(10.0)
    assert overhead(base, [110.0, 110.0, 110.0], True)["overhead_percent"] == pytest.approx(-10.0)
    # lower is better: platform takes 110 % of the time -> 10 % overhead
    assert overhead(base, [110.0, 110.0, 110.0], False)["overhead_percent"] == pytest.approx(10.0)
    assert overhead(base, [90.0, 90.0, 90.0], False)["overhead_percent"] == pytest.approx(-10.0)


def test_too_few_values_give_no_interval_and_say_so():
    # 3 + 3: even the widest interval has confidence 1 - 2 / C(6, 3) = 90 % < 95 %
    out = overhead(BASE[:3], PLAT[:3], higher_is_better=False)
    assert out["ratio"] == pytest.approx(2.0) and out["too_few"] and out["method"] == "none"
    assert math.isnan(out["ratio_ci_low"]) and math.isnan(out["overhead_ci_high"]) and "90.0%" in out["ci_note"]
    row = compare_to_baseline(_frame(native=BASE[:3], vm=PLAT[:3]), "native", higher_is_better=False).iloc[0]
    assert row["verdict"] == "inconclusive" and math.isnan(row["holm_p"])


def test_a_value_that_is_not_positive_has_no_ratio_on_the_log_scale():
    # NPB class S prints times below 5 ms as 0.00 s: a platform whose every run printed 0.00
    out = overhead([0.010, 0.011, 0.012, 0.013], [0.0, 0.0, 0.0, 0.0], higher_is_better=False)
    assert math.isnan(out["ratio"]) and math.isnan(out["ratio_ci_low"]) and "0 or negative" in out["ci_note"]


def test_a_normal_and_a_skewed_sample_get_the_same_method():
    skewed = [10.0, 10.0, 10.0, 10.0, 14.0]
    assert scipy_stats.shapiro(skewed).pvalue < 0.05  # the old gate would have refused an interval
    out = overhead(BASE, skewed, False)
    assert out["method"] == "hl-moses" and out["ratio_ci_low"] < out["ratio"] < out["ratio_ci_high"]
    assert out["shapiro_p_platform"] == pytest.approx(scipy_stats.shapiro(skewed).pvalue)  # reported only


# --- Holm -------------------------------------------------------------------


def test_holm_classic_example_keeps_order():
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_holm_leaves_nan_out_of_the_family():
    out = holm([0.01, float("nan"), 0.04])
    assert out[0] == pytest.approx(0.02) and math.isnan(out[1]) and out[2] == pytest.approx(0.04)


# --- outliers ---------------------------------------------------------------

# 1..9 and 16. numpy quartiles (type 7): Q1 = 3.25, Q3 = 7.75, IQR = 4.5,
# upper Tukey fence 7.75 + 1.5 * 4.5 = 14.5 -> 16 flagged.
# median 5.5, |x - median| = 4.5 3.5 2.5 1.5 .5 .5 1.5 2.5 3.5 10.5 -> MAD 2.5,
# scaled 1.4826 * 2.5 = 3.7065; 3.5 * 3.7065 = 12.97 > 10.5 -> nothing flagged,
# 2 * 3.7065 = 7.41 < 10.5 -> 16 flagged.
VECTOR = [1, 2, 3, 4, 5, 6, 7, 8, 9, 16]


def test_outlier_rules_on_a_fixed_vector():
    last = [False] * 9 + [True]
    assert outliers(VECTOR).tolist() == [False] * 10
    assert outliers(VECTOR, "iqr").tolist() == last
    assert outliers(VECTOR, "iqr", k=3.0).tolist() == [False] * 10  # fence 7.75 + 13.5 = 21.25
    assert outliers(VECTOR, "mad").tolist() == [False] * 10
    assert outliers(VECTOR, "mad", k=2.0).tolist() == last
    # NaN is never flagged and ignored for the quartiles; zero IQR flags everything off Q1 = Q3 = 1
    assert outliers([1.0, float("nan"), 1.0, 1.0, 1.0, 50.0], "iqr").tolist() == [False] * 5 + [True]
    with pytest.raises(ValueError):
        outliers(VECTOR, "zscore")


# --- compare_to_baseline ------------------------------------------------------


def _frame(**samples):
    return pd.DataFrame(
        [{"platform": name, "value": float(v)} for name, values in samples.items() for v in values]
    )


def test_identical_samples_with_a_wide_margin_are_equivalent():
    same = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8, 100.1]
    out = compare_to_baseline(_frame(native=same, vm=same), "native", higher_is_better=True, margin=0.10)
    row = out.iloc[0]
    assert row["verdict"] == "equivalent" and row["tost_p"] < 0.05
    assert row["overhead_percent"] == 0.0 and row["p_value"] == pytest.approx(1.0)


def test_clearly_different_samples_are_worse_with_the_exact_mann_whitney_p():
    native = [10.0, 10.2, 9.9, 10.1, 9.8, 10.05]
    vm = [15.0, 15.3, 14.8, 15.1, 14.9, 15.2]  # run times: 50 % longer, every vm value above every native
    row = compare_to_baseline(_frame(native=native, vm=vm), "native", higher_is_better=False).iloc[0]
    # complete separation of 6 + 6: the exact two-sided p is 2 / C(12, 6) = 2 / 924
    assert row["verdict"] == "worse" and row["p_value"] == pytest.approx(2 / 924) and row["holm_p"] == row["p_value"]
    assert row["overhead_percent"] == pytest.approx(50.0, abs=1.0)
    assert row["overhead_ci_low"] < row["overhead_percent"] < row["overhead_ci_high"]
    # the same numbers as throughputs: the platform is better
    flipped = compare_to_baseline(_frame(native=native, vm=vm), "native", higher_is_better=True)
    assert flipped.iloc[0]["verdict"] == "better" and flipped.iloc[0]["overhead_percent"] < 0


def test_tiny_noisy_sample_is_inconclusive_not_equivalent():
    row = compare_to_baseline(_frame(native=[50.0, 150.0], vm=[60.0, 160.0]), "native", higher_is_better=False).iloc[0]
    assert row["verdict"] == "inconclusive"  # no test at 2 + 2, and that is NOT a claim of no overhead
    assert not row["tost_p"] < 0.05


def test_holm_is_applied_across_all_rows_and_groups():
    rng = np.random.default_rng(0)
    rows = []
    for bench, shift in (("a", 0.0), ("b", 0.3), ("c", 3.0)):
        for plat, mu in (("native", 10.0), ("vm", 10.0 + shift), ("ct", 10.0 + shift / 2)):
            rows += [{"bench": bench, "platform": plat, "value": v} for v in rng.normal(mu, 0.5, 8)]
    out = compare_to_baseline(pd.DataFrame(rows), "native", by=["bench"], higher_is_better=False, level=0.9)
    assert len(out) == 6 and set(out["platform"]) == {"vm", "ct"}
    expected = multipletests(out["p_value"].to_numpy(), method="holm")[1]  # statsmodels, called here
    assert out["holm_p"].to_numpy() == pytest.approx(expected) and (out["holm_family_size"] == 6).all()
    assert (out["holm_p"] >= out["p_value"]).all()
    assert (out["significant"] == (out["holm_p"] < 0.1)).all()
    for _, row in out.iterrows():  # verdicts follow the documented order of rules
        if row["tost_p"] < 0.1:
            assert row["verdict"] == "equivalent"
        elif row["holm_p"] < 0.1:  # run times: a ratio above 1 is worse
            assert row["verdict"] == ("worse" if row["ratio"] > 1 else "better")
        else:
            assert row["verdict"] == "inconclusive"
    assert out.set_index(["bench", "platform"]).loc[("c", "vm"), "verdict"] == "worse"


def test_nothing_is_dropped_unless_a_rule_is_given():
    native = [10.0, 10.1, 9.9, 10.0, 10.2, 9.8, 10.1, 30.0]
    vm = [11.0, 11.1, 10.9, 11.0, 11.2, 10.8, 11.1, 11.0]
    frame = _frame(native=native, vm=vm)
    kept = compare_to_baseline(frame, "native", higher_is_better=False).iloc[0]
    assert kept["n_baseline"] == 8 and kept["dropped_baseline"] == 0 and kept["outlier_rule"] == "none"
    assert kept["mean_baseline"] == pytest.approx(sum(native) / 8)
    cut = compare_to_baseline(frame, "native", higher_is_better=False, outlier_rule="iqr").iloc[0]
    assert cut["n_baseline"] == 7 and cut["dropped_baseline"] == 1 and cut["dropped_platform"] == 0
    assert cut["mean_baseline"] == pytest.approx(sum(native[:-1]) / 7)
    assert cut["outlier_rule"] == "iqr"


def test_direction_can_come_from_a_column_and_missing_baseline_is_reported():
    base = [10.0, 10.1, 9.9, 10.05, 9.95]
    frame = pd.DataFrame(
        {
            "metric": ["time"] * 10 + ["rate"] * 10 + ["only_vm"] * 3,
            "hib": [False] * 10 + [True] * 10 + [True] * 3,
            "platform": (["native"] * 5 + ["vm"] * 5) * 2 + ["vm"] * 3,
            "value": (base + [1.2 * v for v in base]) * 2 + [1, 2, 3],
        }
    )
    out = compare_to_baseline(frame, "native", by=["metric"], higher_is_better="hib").set_index("metric")
    # 5 + 5, completely separated: p = 2 / C(10, 5) = 2/252, Holm over the two tests 4/252 < 0.05
    assert out.loc["time", "verdict"] == "worse" and out.loc["time", "overhead_percent"] == pytest.approx(20.0)
    assert out.loc["rate", "verdict"] == "better" and out.loc["rate", "overhead_percent"] == pytest.approx(-20.0)
    assert out.loc["time", "p_value"] == pytest.approx(2 / 252) and out.loc["time", "holm_p"] == pytest.approx(4 / 252)
    assert out.loc["only_vm", "verdict"] == "inconclusive" and out.loc["only_vm", "n_baseline"] == 0
    assert "baseline" in out.loc["only_vm", "ci_note"]


def test_equivalence_p_is_below_alpha_exactly_when_the_1_minus_2_alpha_interval_is_inside_the_margin():
    rng = np.random.default_rng(11)
    for _ in range(40):
        native, vm = rng.normal(100, 2, 8), rng.normal(101, 2, 7)
        at_90 = hl_ratio_ci(vm, native, 0.90)
        inside = 0.97 < at_90.low and at_90.high < 1.03
        assert (equivalence_p(hl_ratio_ci(vm, native, 0.95), 0.03) < 0.05) == inside


def test_equivalence_takes_precedence_over_a_tiny_significant_difference():
    native = [100.0, 100.1, 99.9, 100.05, 100.15, 99.95]
    vm = [101.0, 101.1, 100.9, 101.05, 101.15, 100.95]  # 1 % slower, very precisely measured
    row = compare_to_baseline(_frame(native=native, vm=vm), "native", higher_is_better=False).iloc[0]
    assert row["significant"] and row["holm_p"] == pytest.approx(2 / 924)  # the difference is real ...
    assert row["verdict"] == "equivalent"  # ... but within the 5 % margin
    assert row["overhead_percent"] == pytest.approx(1.0, abs=0.01)


def test_drift_between_parts_compares_a_platforms_second_part_with_its_first():
    from virtrepro.analysis.stats import drift_between_parts

    first = [10.0, 10.2, 9.8, 10.1]
    rows = [("native", 1, v) for v in first] + [("native", 2, 1.1 * v) for v in first]
    rows += [("lxc", 1, 5.0), ("lxc", 2, 50.0), ("native", None, 1000.0)]  # another platform; a log without parts
    table = pd.DataFrame([{"platform": p, "part": part, "value": v, "benchmark": "b", "variant": "k",
                           "metric": "m"} for p, part, v in rows])
    drift = drift_between_parts(table, "native")
    assert len(drift) == 1
    row = drift.iloc[0]
    assert (row.n_part1, row.n_part2) == (4, 4)
    assert row.mean_part1 == pytest.approx(10.025) and row.mean_part2 == pytest.approx(11.0275)
    # part 2 is part 1 times 1.1: the Hodges-Lehmann ratio is 1.1; at 4 + 4 the interval is the ratios'
    # [min, max] (1.1 * 9.8 / 10.2, 1.1 * 10.2 / 9.8), widened for the printed resolution (0.05 at one decimal)
    assert row.ratio == pytest.approx(1.1)
    assert row.ratio_ci_low < 1.1 * 9.8 / 10.2 and row.ratio_ci_low > 1.1 * 9.75 / 10.25 * 0.999
    assert row.ratio_ci_high > 1.1 * 10.2 / 9.8 and row.ratio_ci_high < 1.1 * 10.25 / 9.75 * 1.001
    assert drift_between_parts(table.drop(columns="part"), "native").empty


def test_paired_rounds_compares_each_round_and_cancels_a_drift_between_rounds():
    from itertools import combinations_with_replacement

    from virtrepro.analysis.stats import paired_rounds

    # the host drifts by half over the rounds; lxc is 5 % above native in every round, +-1 %
    native = [100.0 * (1 + 0.05 * r) for r in range(8)]
    noise = [1.01, 0.99, 1.0, 1.012, 0.993, 1.0035, 1.005, 0.995]
    lxc = [n * 1.05 * e for n, e in zip(native, noise)]
    rows = [("native", r, v) for r, v in enumerate(native)] + [("lxc", r, v) for r, v in enumerate(lxc)]
    rows += [("lxc", 8, 1.0)]  # a round native lacks: left out
    rows += [("podman", 0, 50.0), ("podman", 1, -1.0)]  # a value that is not positive: its round left out
    table = pd.DataFrame([{"platform": p, "repetition": r, "value": v, "benchmark": "b", "variant": "k",
                           "metric": "m", "labels": "{}"} for p, r, v in rows])
    found = paired_rounds(table, "native").set_index("platform")
    row = found.loc["lxc"]
    # by enumeration: the 36 Walsh averages of the 8 log ratios; at n = 8 the exact signed-rank
    # interval at 95 % is the 4th smallest to the 4th largest (P(W <= 3) = 5/256 <= 0.025 < 7/256)
    logs = np.log(np.array(lxc) / np.array(native))
    walsh = sorted((a + b) / 2 for a, b in combinations_with_replacement(logs, 2))
    assert (row.rounds, row.above, row.ci_method) == (8, 8, "hl-signed-rank")
    assert row.ratio == pytest.approx(math.exp(np.median(walsh)))
    assert row.ratio == pytest.approx(1.05, abs=0.002)
    assert row.ratio_ci_low == pytest.approx(math.exp(walsh[3]), rel=1e-6)
    assert row.ratio_ci_high == pytest.approx(math.exp(walsh[-4]), rel=1e-6)
    # a block comparison of the same values would see the drift: lxc's mean over native's is not 1.05
    assert np.mean(lxc[4:]) / np.mean(native[:4]) > 1.2
    podman = found.loc["podman"]
    assert (podman.rounds, podman.ratio, podman.ci_method) == (1, pytest.approx(0.5), "none")
    assert paired_rounds(table, "absent").empty
