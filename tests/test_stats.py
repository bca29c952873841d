"""Student-t intervals and baseline comparisons checked against hand-computable cases."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from virtrepro.stats import (
    compare_to_baseline,
    holm,
    mean_ci,
    outliers,
    overhead,
    summarize,
    welch_test,
)


def test_t_interval_of_a_textbook_sample():
    # x = 1..5: mean 3, s = sqrt(2.5), t(0.975, 4) = 2.776445
    mean, low, high = mean_ci([1, 2, 3, 4, 5], 0.95)
    half = 2.7764451051977987 * math.sqrt(2.5) / math.sqrt(5)
    assert mean == 3
    assert low == pytest.approx(3 - half, abs=1e-9) and high == pytest.approx(3 + half, abs=1e-9)


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
    assert out.loc["a", "n"] == 2 and out.loc["a", "mean"] == 2.0
    assert out.loc["b", "std"] == 0.0 and out.loc["b", "ci_low"] == pytest.approx(2.0)


# --- overhead / Fieller -----------------------------------------------------

# baseline 9, 10, 11: mean 10, s^2 = 1, n = 3  -> var of the mean v_b = 1/3
# platform 18, 20, 22: mean 20, s^2 = 4, n = 3 -> var of the mean v_p = 4/3
# ratio R = 2; Welch-Satterthwaite df at R = 2:
#   (v_p + R^2 v_b)^2 / (v_p^2/2 + R^4 v_b^2/2) = (8/3)^2 / (8/9 + 8/9) = 4
BASE = [9.0, 10.0, 11.0]
PLAT = [18.0, 20.0, 22.0]
T_975_4 = 2.7764451051977987


def _fieller_by_hand():
    t2 = T_975_4**2
    a = 10.0**2 - t2 * (1 / 3)
    b = -2 * 10.0 * 20.0
    c = 20.0**2 - t2 * (4 / 3)
    root = math.sqrt(b * b - 4 * a * c)
    return (-b - root) / (2 * a), (-b + root) / (2 * a)


def test_fieller_interval_matches_the_closed_form():
    out = overhead(BASE, PLAT, higher_is_better=False)
    low, high = _fieller_by_hand()
    assert out["ratio"] == 2.0
    assert out["df"] == pytest.approx(4.0)
    assert out["ratio_ci_low"] == pytest.approx(low, rel=1e-12)
    assert out["ratio_ci_high"] == pytest.approx(high, rel=1e-12)
    assert (round(out["ratio_ci_low"], 4), round(out["ratio_ci_high"], 4)) == (1.5904, 2.5151)
    # the bounds are exactly where the Fieller pivot equals t: (mean_p - R mean_b)^2 = t^2 (v_p + R^2 v_b)
    for r in (out["ratio_ci_low"], out["ratio_ci_high"]):
        assert (20 - r * 10) ** 2 == pytest.approx(T_975_4**2 * (4 / 3 + r**2 / 3))
    assert not out["ci_unbounded"] and out["ci_note"] == ""
    # Fieller is asymmetric around the estimate (unlike the delta method)
    assert 2.0 - out["ratio_ci_low"] < out["ratio_ci_high"] - 2.0


def test_overhead_interval_follows_the_ratio_interval():
    low, high = _fieller_by_hand()
    times = overhead(BASE, PLAT, higher_is_better=False)  # platform takes twice as long
    assert times["overhead_percent"] == pytest.approx(100.0)
    assert times["overhead_ci_low"] == pytest.approx((low - 1) * 100)
    assert times["overhead_ci_high"] == pytest.approx((high - 1) * 100)
    rate = overhead(BASE, PLAT, higher_is_better=True)  # platform delivers twice the throughput
    assert rate["overhead_percent"] == pytest.approx(-100.0)
    assert rate["overhead_ci_low"] == pytest.approx((1 - high) * 100)
    assert rate["overhead_ci_high"] == pytest.approx((1 - low) * 100)


def test_fieller_is_unbounded_when_the_baseline_mean_is_near_zero():
    # mean 0.1 with s ~ 5.1 over 3 values: g = t^2 v_b / mean_b^2 >> 1
    out = overhead([-5.0, 0.1, 5.2], PLAT, higher_is_better=False)
    assert out["ci_unbounded"] is True
    assert "unbounded" in out["ci_note"]
    for key in ("ratio_ci_low", "ratio_ci_high", "overhead_ci_low", "overhead_ci_high"):
        assert math.isnan(out[key])
    assert out["ratio"] == pytest.approx(200.0)  # the point estimate is still reported


def test_overhead_sign_convention_for_both_directions():
    base = [100.0, 100.0, 100.0]
    # higher is better: platform 90 % of the throughput -> 10 % overhead
    assert overhead(base, [90.0, 90.0, 90.0], True)["overhead_percent"] == pytest.approx(10.0)
    assert overhead(base, [110.0, 110.0, 110.0], True)["overhead_percent"] == pytest.approx(-10.0)
    # lower is better: platform takes 110 % of the time -> 10 % overhead
    assert overhead(base, [110.0, 110.0, 110.0], False)["overhead_percent"] == pytest.approx(10.0)
    assert overhead(base, [90.0, 90.0, 90.0], False)["overhead_percent"] == pytest.approx(-10.0)
    # zero variance everywhere: the interval is the point estimate, and said so
    out = overhead(base, [90.0, 90.0, 90.0], True)
    assert out["ratio_ci_low"] == out["ratio_ci_high"] == pytest.approx(0.9)
    assert "zero variance" in out["ci_note"]


def test_a_constant_zero_platform_sample_has_a_degenerate_interval_not_an_error():
    # NPB class S prints times below 5 ms as 0.00 s: a platform whose every run printed 0.00
    out = overhead([0.010, 0.011, 0.010], [0.0, 0.0, 0.0], higher_is_better=False)
    assert out["ratio"] == 0.0 and out["ratio_ci_low"] == out["ratio_ci_high"] == 0.0
    assert out["overhead_percent"] == pytest.approx(-100.0) and not out["ci_unbounded"]


def test_too_few_values_give_no_interval():
    out = overhead([10.0], PLAT, higher_is_better=False)
    assert out["ratio"] == 2.0 and math.isnan(out["ratio_ci_low"]) and math.isnan(out["ratio_ci_high"])
    assert not out["ci_unbounded"] and "fewer than 2" in out["ci_note"]


def test_bootstrap_is_seeded_and_close_to_fieller_for_large_samples():
    rng = np.random.default_rng(42)
    base, plat = rng.normal(10, 1, 200), rng.normal(15, 4, 300)
    one = overhead(base, plat, True, method="bootstrap", seed=7, n_boot=4000)
    two = overhead(base, plat, True, method="bootstrap", seed=7, n_boot=4000)
    other = overhead(base, plat, True, method="bootstrap", seed=8, n_boot=4000)
    keys = ("ratio_ci_low", "ratio_ci_high", "overhead_ci_low", "overhead_ci_high")
    assert [one[k] for k in keys] == [two[k] for k in keys]
    assert math.isnan(one["df"]) and one["method"] == "bootstrap"
    assert one["ratio_ci_low"] != other["ratio_ci_low"]
    fieller = overhead(base, plat, True)
    assert one["ratio_ci_low"] == pytest.approx(fieller["ratio_ci_low"], abs=0.01)
    assert one["ratio_ci_high"] == pytest.approx(fieller["ratio_ci_high"], abs=0.01)
    assert one["overhead_ci_low"] < one["overhead_percent"] < one["overhead_ci_high"]


def test_bootstrap_with_the_baseline_mean_crossing_zero_has_no_interval():
    out = overhead([-5.0, 0.1, 5.2], PLAT, False, method="bootstrap")
    assert out["ci_unbounded"] is True
    assert math.isnan(out["ratio_ci_low"]) and math.isnan(out["ratio_ci_high"])


def test_unknown_method_is_rejected():
    with pytest.raises(ValueError):
        overhead(BASE, PLAT, True, method="delta")


# --- Welch ------------------------------------------------------------------

# Wikipedia, "Welch's t-test", example 1: t = -2.46, df ~ 25.0, p = 0.021 (A1 - A2)
A1 = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4]
A2 = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4]


def test_welch_matches_textbook_example_and_hand_formula():
    out = welch_test(A1, A2)  # baseline A1, platform A2: oriented A2 - A1
    assert round(out["statistic"], 2) == 2.46 and round(out["df"], 1) == 25.0
    assert round(out["p_value"], 3) == 0.021
    ref = scipy_stats.ttest_ind(A2, A1, equal_var=False)
    assert out["statistic"] == pytest.approx(ref.statistic) and out["p_value"] == pytest.approx(ref.pvalue)
    v1 = pd.Series(A1).var(ddof=1) / len(A1)
    v2 = pd.Series(A2).var(ddof=1) / len(A2)
    df = (v1 + v2) ** 2 / (v1**2 / (len(A1) - 1) + v2**2 / (len(A2) - 1))
    t = (sum(A2) / len(A2) - sum(A1) / len(A1)) / math.sqrt(v1 + v2)
    assert out["df"] == pytest.approx(df) and out["statistic"] == pytest.approx(t)


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
    assert row["overhead_percent"] == 0.0 and row["welch_p"] == pytest.approx(1.0)


def test_clearly_different_means_are_worse_with_a_small_holm_p():
    native = [10.0, 10.2, 9.9, 10.1, 9.8, 10.0]
    vm = [15.0, 15.3, 14.8, 15.1, 14.9, 15.2]  # run times: 50 % longer
    out = compare_to_baseline(_frame(native=native, vm=vm), "native", higher_is_better=False)
    row = out.iloc[0]
    assert row["verdict"] == "worse" and row["holm_p"] < 1e-6
    assert row["overhead_percent"] == pytest.approx(50.0, abs=1.0)
    assert row["overhead_ci_low"] < row["overhead_percent"] < row["overhead_ci_high"]
    # the same numbers as throughputs: the platform is better
    flipped = compare_to_baseline(_frame(native=native, vm=vm), "native", higher_is_better=True)
    assert flipped.iloc[0]["verdict"] == "better" and flipped.iloc[0]["overhead_percent"] < 0


def test_tiny_noisy_sample_is_inconclusive_not_equivalent():
    out = compare_to_baseline(_frame(native=[50.0, 150.0], vm=[60.0, 160.0]), "native", higher_is_better=False)
    row = out.iloc[0]
    assert row["welch_p"] > 0.05  # the t-test does not reject ...
    assert row["verdict"] == "inconclusive"  # ... and that is NOT a claim of no overhead
    assert row["tost_p"] >= 0.05


def test_holm_is_applied_across_all_rows_and_groups():
    rng = np.random.default_rng(0)
    rows = []
    for bench, shift in (("a", 0.0), ("b", 0.3), ("c", 3.0)):
        for plat, mu in (("native", 10.0), ("vm", 10.0 + shift), ("ct", 10.0 + shift / 2)):
            rows += [{"bench": bench, "platform": plat, "value": v} for v in rng.normal(mu, 0.5, 8)]
    out = compare_to_baseline(pd.DataFrame(rows), "native", by=["bench"], higher_is_better=False, level=0.9)
    assert len(out) == 6 and set(out["platform"]) == {"vm", "ct"}
    assert out["holm_p"].to_numpy() == pytest.approx(holm(out["welch_p"].to_numpy()))
    assert (out["holm_p"] >= out["welch_p"]).all()
    assert (out["significant"] == (out["holm_p"] < 0.1)).all()
    # verdicts follow the documented order of rules
    for _, row in out.iterrows():
        if row["tost_p"] < 0.1:
            assert row["verdict"] == "equivalent"
        elif row["holm_p"] < 0.1:  # run times: a larger platform mean is worse
            assert row["verdict"] == ("worse" if row["mean_platform"] > row["mean_baseline"] else "better")
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
    frame = pd.DataFrame(
        {
            "metric": ["time"] * 6 + ["rate"] * 6 + ["only_vm"] * 3,
            "hib": [False] * 6 + [True] * 6 + [True] * 3,
            "platform": (["native"] * 3 + ["vm"] * 3) * 2 + ["vm"] * 3,
            "value": [10, 10.1, 9.9, 12, 12.1, 11.9, 10, 10.1, 9.9, 12, 12.1, 11.9, 1, 2, 3],
        }
    )
    out = compare_to_baseline(frame, "native", by=["metric"], higher_is_better="hib").set_index("metric")
    assert out.loc["time", "verdict"] == "worse" and out.loc["time", "overhead_percent"] == pytest.approx(20.0)
    assert out.loc["rate", "verdict"] == "better" and out.loc["rate", "overhead_percent"] == pytest.approx(-20.0)
    assert out.loc["only_vm", "verdict"] == "inconclusive" and out.loc["only_vm", "n_baseline"] == 0
    assert "baseline" in out.loc["only_vm", "ci_note"]


def test_tost_p_is_the_larger_of_two_one_sided_welch_tests():
    native = [100.0, 102.0, 98.0, 101.0, 99.0, 100.0, 103.0, 97.0]
    vm = [101.0, 104.0, 99.0, 103.0]  # unequal n and variances: Welch df, not pooled
    row = compare_to_baseline(_frame(native=native, vm=vm), "native", higher_is_better=False, margin=0.03).iloc[0]
    d = sum(vm) / 4 - sum(native) / 8  # 1.75
    delta = 0.03 * 100.0
    v_b = pd.Series(native).var(ddof=1) / 8
    v_p = pd.Series(vm).var(ddof=1) / 4
    se = math.sqrt(v_b + v_p)
    df = (v_b + v_p) ** 2 / (v_b**2 / 7 + v_p**2 / 3)
    p_lower = scipy_stats.t.sf((d + delta) / se, df)  # H0: d <= -delta
    p_upper = scipy_stats.t.cdf((d - delta) / se, df)  # H0: d >= +delta
    assert row["tost_p"] == pytest.approx(max(p_lower, p_upper), rel=1e-9)


def test_equivalence_takes_precedence_over_a_tiny_significant_difference():
    native = [100.0, 100.1, 99.9, 100.0, 100.1, 99.9]
    vm = [101.0, 101.1, 100.9, 101.0, 101.1, 100.9]  # 1 % slower, very precisely measured
    row = compare_to_baseline(_frame(native=native, vm=vm), "native", higher_is_better=False).iloc[0]
    assert row["significant"] and row["holm_p"] < 1e-6  # the difference is real ...
    assert row["verdict"] == "equivalent"  # ... but within the 5 % margin
    assert row["overhead_percent"] == pytest.approx(1.0)
