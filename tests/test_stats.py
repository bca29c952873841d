"""Intervals and baseline comparisons checked against hand-computed values, scipy/statsmodels called
directly in the test, and a coverage simulation."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats
from statsmodels.stats.multitest import multipletests

from virtrepro.stats import (
    compare_to_baseline,
    holm,
    location_ci,
    mean_ci,
    outliers,
    overhead,
    ratio_ci,
    summarize,
    tost_p,
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
    assert out.loc["a", "n"] == 2 and out.loc["a", "mean"] == 2.0 and out.loc["a", "ci_method"] == "t"
    # a constant sample carries no information about its variance: no interval, and said so
    assert out.loc["b", "std"] == 0.0 and math.isnan(out.loc["b", "ci_low"]) and math.isnan(out.loc["b", "ci_high"])
    assert out.loc["b", "ci_method"] == "none" and "constant" in out.loc["b", "ci_note"]


def test_nan_is_removed_before_the_interval():
    # cleaned data 20, 21, 19.5, 22: mean 20.625, s = sqrt(3.6875 / 3) = 1.108678,
    # t(0.975, 3) = 3.182446, half-width 3.182446 * 1.108678 / 2 = 1.764154
    mean, low, high = mean_ci([20, float("nan"), 21, 19.5, 22])
    assert mean == pytest.approx(20.625)
    assert (round(low, 3), round(high, 3)) == (18.861, 22.389)
    out = summarize(pd.DataFrame({"g": ["x"] * 5, "value": [20, float("nan"), 21, 19.5, 22]}), ["g"]).iloc[0]
    assert out["n"] == 4 and out["mean"] == pytest.approx(20.625) and round(out["std"], 3) == 1.109
    assert (round(out["ci_low"], 3), round(out["ci_high"], 3)) == (18.861, 22.389) and out["ci_method"] == "t"
    assert out["shapiro_p"] == pytest.approx(scipy_stats.shapiro([20, 21, 19.5, 22]).pvalue)


def test_a_sample_that_departs_from_normality_gets_the_medians_order_statistic_interval():
    # 1, 1, 1, 1, 1, 2, 3, 10: Shapiro-Wilk rejects; n = 8: [x(1), x(8)] covers the median with
    # 1 - 2 / 2^8 = 99.2 %, [x(2), x(7)] only with 1 - 2 * 9 / 256 = 93.0 % < 95 %
    values = [1, 1, 2, 3, 10, 1, 1, 1]
    assert scipy_stats.shapiro(values).pvalue < 0.05
    out = location_ci(values)
    assert out["ci_method"] == "median-order" and out["ci_of"] == "median" and out["median"] == 1.0
    assert (out["ci_low"], out["ci_high"]) == (1.0, 10.0) and "99.2%" in out["ci_note"]
    # n = 5: even [min, max] covers the median with only 1 - 2/32 = 93.75 %: no interval at 95 %
    five = location_ci([1, 1, 1, 1, 9])
    assert five["ci_method"] == "median-order" and math.isnan(five["ci_low"]) and "93.8%" in five["ci_note"]


def test_a_large_sample_that_departs_from_normality_gets_bca_from_scipy():
    x = np.random.default_rng(3).lognormal(0, 1, 30)
    out = location_ci(x, seed=5)
    ref = scipy_stats.bootstrap((x,), np.mean, method="BCa", n_resamples=9999, rng=np.random.default_rng(5))
    assert out["ci_method"] == "bca" and out["ci_of"] == "mean"
    assert out["ci_low"] == pytest.approx(ref.confidence_interval.low)
    assert out["ci_high"] == pytest.approx(ref.confidence_interval.high)


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
    assert not out["ci_unbounded"] and out["method"] == "fieller" and "assumes normality" in out["ci_note"]
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

def test_two_constant_samples_carry_no_information_about_their_variance():
    # times printed as 0.01 and 0.02 s, n = 2 each: scipy's Welch gives t = -inf, p = 0, df = 1
    base, plat = [0.01, 0.01], [0.02, 0.02]
    welch = welch_test(base, plat)
    assert math.isnan(welch["statistic"]) and math.isnan(welch["p_value"]) and math.isnan(welch["df"])
    assert "constant" in welch["note"]
    assert math.isnan(tost_p(base, plat))
    out = overhead(base, plat, higher_is_better=False)
    assert out["ratio"] == pytest.approx(2.0) and out["method"] == "none" and "constant" in out["ci_note"]
    assert math.isnan(out["ratio_ci_low"]) and math.isnan(out["overhead_ci_high"])
    row = compare_to_baseline(_frame(native=base, vm=plat), "native", higher_is_better=False).iloc[0]
    assert row["verdict"] == "inconclusive" and "constant" in row["ci_note"] and math.isnan(row["holm_p"])


def test_a_constant_zero_platform_sample_has_a_degenerate_interval_not_an_error():
    # NPB class S prints times below 5 ms as 0.00 s: a platform whose every run printed 0.00
    out = overhead([0.010, 0.011, 0.012], [0.0, 0.0, 0.0], higher_is_better=False)
    assert out["ratio"] == 0.0 and out["ratio_ci_low"] == out["ratio_ci_high"] == 0.0
    assert out["overhead_percent"] == pytest.approx(-100.0) and not out["ci_unbounded"]
    assert "constant sample" in out["ci_note"]


def test_too_few_values_give_no_interval():
    out = overhead([10.0], PLAT, higher_is_better=False)
    assert out["ratio"] == 2.0 and math.isnan(out["ratio_ci_low"]) and math.isnan(out["ratio_ci_high"])
    assert not out["ci_unbounded"] and "fewer than 2" in out["ci_note"]


def _ratio_of_means(p, b, axis=-1):
    return np.mean(p, axis=axis) / np.mean(b, axis=axis)


def test_bca_where_a_large_sample_departs_from_normality_is_scipys_bootstrap():
    rng = np.random.default_rng(42)
    base, plat = rng.lognormal(2.3, 1.0, 25), rng.normal(15, 2, 30)
    out = overhead(base, plat, True, seed=7)
    ref = scipy_stats.bootstrap((plat, base), _ratio_of_means, method="BCa", n_resamples=9999,
                                vectorized=True, rng=np.random.default_rng(7))  # fmt: skip
    assert out["method"] == "bca" and out["shapiro_p_baseline"] < 0.05
    assert out["ratio_ci_low"] == pytest.approx(ref.confidence_interval.low)
    assert out["ratio_ci_high"] == pytest.approx(ref.confidence_interval.high)
    assert overhead(base, plat, True, seed=7)["ratio_ci_low"] == out["ratio_ci_low"]  # seeded


def test_no_interval_where_a_small_sample_departs_from_normality():
    skewed = [10.0, 10.0, 10.0, 10.0, 14.0]  # Shapiro-Wilk p < 0.05 at n = 5
    assert scipy_stats.shapiro(skewed).pvalue < 0.05
    out = overhead(BASE, skewed, False)
    assert out["method"] == "none" and math.isnan(out["ratio_ci_low"]) and "normality" in out["ci_note"]
    row = compare_to_baseline(_frame(native=BASE, vm=skewed), "native", higher_is_better=False).iloc[0]
    assert row["verdict"] == "inconclusive" and row["ci_method"] == "none"


def test_unknown_method_is_rejected():
    with pytest.raises(ValueError):
        overhead(BASE, PLAT, True, method="bootstrap")


# --- coverage at this project's sample sizes ---------------------------------------------------------


def test_coverage_of_the_intervals_at_n_3_5_10():
    """2000 simulated normal samples per n: the mean's t interval, Fieller's ratio interval and the
    log-scale delta interval of a ratio of ratios cover the true value 95 % of the time, within
    +-2.5 points (the binomial standard error at 2000 draws is 0.5 point)."""
    rng = np.random.default_rng(2024)
    draws = 2000
    for n in (3, 5, 10):
        hit_mean = hit_ratio = hit_rr = 0
        for _ in range(draws):
            a, b = rng.normal(100, 5, n), rng.normal(80, 8, n)
            _, low, high = mean_ci(a)
            hit_mean += low <= 100 <= high
            r = ratio_ci([(b, 1), (a, -1)], method="fieller")
            hit_ratio += r.low <= 0.8 <= r.high
            c, d = rng.normal(50, 2, n), rng.normal(40, 3, n)
            rr = ratio_ci([(b, 1), (a, -1), (d, -1), (c, 1)], method="delta-log")  # (80/100) / (40/50) = 1
            hit_rr += rr.low <= 1.0 <= rr.high
        for hits in (hit_mean, hit_ratio, hit_rr):
            assert abs(hits / draws - 0.95) < 0.025, (n, hit_mean, hit_ratio, hit_rr)


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
    expected = multipletests(out["welch_p"].to_numpy(), method="holm")[1]  # statsmodels, called here
    assert out["holm_p"].to_numpy() == pytest.approx(expected) and (out["holm_family_size"] == 6).all()
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


def test_drift_between_parts_compares_a_platforms_second_part_with_its_first():
    import pandas as pd

    from virtrepro.stats import drift_between_parts

    rows = [("native", 1, v) for v in (10.0, 10.2, 9.8)] + [("native", 2, v) for v in (11.0, 11.2, 10.8)]
    rows += [("lxc", 1, 5.0), ("lxc", 2, 50.0), ("native", None, 1000.0)]  # another platform; a log without parts
    table = pd.DataFrame([{"platform": p, "part": part, "value": v, "benchmark": "b", "variant": "k",
                           "metric": "m"} for p, part, v in rows])
    drift = drift_between_parts(table, "native")
    assert len(drift) == 1
    row = drift.iloc[0]
    assert (row.n_part1, row.n_part2) == (3, 3)
    assert row.mean_part1 == pytest.approx(10.0) and row.mean_part2 == pytest.approx(11.0)
    assert row.ratio == pytest.approx(1.1)
    assert 1.0 < row.ratio_ci_low < 1.1 < row.ratio_ci_high
    assert drift_between_parts(table.drop(columns="part"), "native").empty


def test_paired_rounds_compares_each_round_and_cancels_a_drift_between_rounds():
    from virtrepro.stats import paired_rounds

    # the host drifts by half over the rounds; lxc is 5 % above native in every round, +-1 %
    native = [100.0 * (1 + 0.05 * r) for r in range(8)]
    noise = [1.01, 0.99, 1.0, 1.01, 0.99, 1.0, 1.005, 0.995]
    lxc = [n * 1.05 * e for n, e in zip(native, noise)]
    rows = [("native", r, v) for r, v in enumerate(native)] + [("lxc", r, v) for r, v in enumerate(lxc)]
    rows += [("lxc", 8, 1.0)]  # a round native lacks: left out
    rows += [("podman", 0, 50.0), ("podman", 1, -1.0)]  # a value that is not positive: its round left out
    table = pd.DataFrame([{"platform": p, "repetition": r, "value": v, "benchmark": "b", "variant": "k",
                           "metric": "m", "labels": "{}"} for p, r, v in rows])
    found = paired_rounds(table, "native").set_index("platform")
    row = found.loc["lxc"]
    logs = np.log(np.array(lxc) / np.array(native))
    half = scipy_stats.t.ppf(0.975, len(logs) - 1) * logs.std(ddof=1) / math.sqrt(len(logs))
    assert (row.rounds, row.above, row.ci_method) == (8, 8, "t")
    assert row.ratio == pytest.approx(math.exp(logs.mean()))
    assert row.ratio == pytest.approx(1.05, abs=0.002)
    assert row.ratio_ci_low == pytest.approx(math.exp(logs.mean() - half))
    assert row.ratio_ci_high == pytest.approx(math.exp(logs.mean() + half))
    # a block comparison of the same values would see the drift: lxc's mean over native's is not 1.05
    assert np.mean(lxc[4:]) / np.mean(native[:4]) > 1.2
    podman = found.loc["podman"]
    assert (podman.rounds, podman.ratio, podman.ci_method) == (1, pytest.approx(0.5), "none")
    assert paired_rounds(table, "absent").empty
