"""The claim kinds about the shape of the data: ``trend`` (over an ordered parameter), ``spread``
(scatter of two platforms) and ``saturation`` (where a throughput stops growing). Expected values
come from statsmodels' OLS, scipy's Levene test and hand arithmetic, not from the code under test."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats as scipy_stats

from test_claims import claim, rows, scaled, spread, table
from virtrepro.analysis import claims, stats


@pytest.fixture(autouse=True)
def _fewer_repetitions_decide(monkeypatch):
    """Some of these tables have 3 values a step: the shape kinds' repetition gate
    (claims.MIN_REPETITIONS, tested in test_adaptive.py) is lowered so that the rules tested here decide."""
    monkeypatch.setattr(claims.gates, "MIN_REPETITIONS", 1)

RNG = np.random.default_rng(20240607)


def noisy(mean, n=5, cv=0.02):
    return mean * np.exp(RNG.normal(0, cv, n))


# ------------------------------------------------------------------ stats.log_slope


def test_log_slope_without_baseline_matches_statsmodels_ols():
    data = {("a", s): noisy(10 * 1.3**s) for s in range(4)} | {("b", s): noisy(50 * 1.3**s) for s in range(4)}
    frame = pd.DataFrame([(v, s, np.log(x)) for (v, s), xs in data.items() for x in xs], columns=["variant", "step", "y"])
    fit = smf.ols("y ~ C(variant) + step", frame).fit()
    got = stats.log_slope(data, level=0.95)
    assert got.estimate == pytest.approx(fit.params["step"], rel=1e-10)
    assert got.se == pytest.approx(fit.bse["step"], rel=1e-10)
    low, high = fit.conf_int(0.05).loc["step"]
    assert (got.low, got.high) == (pytest.approx(low, rel=1e-10), pytest.approx(high, rel=1e-10))
    assert got.p_value(0.0, "greater") == pytest.approx(fit.pvalues["step"] / 2, rel=1e-8)


def test_log_slope_of_the_ratio_matches_statsmodels_ols_with_interaction():
    base = {("a", s): noisy(100.0 * (1 + s)) for s in range(3)}  # any shape: every cell's mean is free
    plat = {("a", s): noisy(100.0 * (1 + s) * 1.1**s) for s in range(3)}  # ratio grows 10 % a step
    records = [(side, s, np.log(x)) for side, d in (("p", plat), ("b", base)) for (_, s), xs in d.items() for x in xs]
    frame = pd.DataFrame(records, columns=["side", "step", "y"])
    frame["plat"] = (frame["side"] == "p").astype(float)
    frame["cell"] = frame["step"].astype(str)
    fit = smf.ols("y ~ 0 + C(cell) + plat + plat:step", frame).fit()
    got = stats.log_slope(plat, base)
    assert got.estimate == pytest.approx(fit.params["plat:step"], rel=1e-10)
    assert got.se == pytest.approx(fit.bse["plat:step"], rel=1e-10)
    assert got.df == fit.df_resid


def test_log_slope_by_hand_two_steps():
    # log values 0, 0.2 at step 0 and 1.0, 1.2 at step 1: slope 1.0; residuals +-0.1 on 4 - 2 = 2 df
    data = {("v", 0): np.exp([0.0, 0.2]), ("v", 1): np.exp([1.0, 1.2])}
    got = stats.log_slope(data)
    assert got.estimate == pytest.approx(1.0)
    sigma2 = 4 * 0.1**2 / 2
    assert got.se == pytest.approx(math.sqrt(sigma2 * (1 / 2 + 1 / 2)))
    assert got.df == 2


def test_log_slope_refuses_what_it_cannot_estimate():
    assert not stats.log_slope({("v", 0): [1.0, 2.0]}).tested  # one step
    assert not stats.log_slope({("v", 0): [1.0, 1.0], ("v", 1): [2.0, 2.0]}).tested  # constant: se 0
    assert "0 or negative" in stats.log_slope({("v", 0): [0.0, 1.0], ("v", 1): [2.0, 3.0]}).note


# ------------------------------------------------------------------ stats.spread_difference


def test_spread_difference_is_brown_forsythe_as_scipy_computes_it():
    wide, narrow = noisy(10.0, n=8, cv=0.10), noisy(10.0, n=8, cv=0.01)
    got = stats.spread_difference([wide], [narrow])
    p_two = scipy_stats.levene(np.log(wide), np.log(narrow), center="median").pvalue
    assert 2 * min(got.p_value(0, "greater"), got.p_value(0, "less")) == pytest.approx(p_two, rel=1e-8)
    assert got.estimate > 0 and got.p_value(0, "greater") < 0.05
    by_hand = np.mean(np.abs(np.log(wide) - np.median(np.log(wide)))) - np.mean(np.abs(np.log(narrow) - np.median(np.log(narrow))))
    assert got.estimate == pytest.approx(by_hand)


def test_spread_difference_needs_three_values():
    assert not stats.spread_difference([[1.0, 2.0]], [[1.0, 2.0, 3.0]]).tested


# ------------------------------------------------------------------ saturation_bounds


def test_saturation_bounds_by_hand():
    # 6 values a size, each size's a scaled copy of the first: Hodges-Lehmann ratios 2, 1.02, 2.05 / 2.04,
    # gains +100 %, +2 %, +0.5 %; with gain 5 % it saturates at the 2nd size (each step's exact interval
    # is about +-1 %: the first step gains significantly more than 5 %, the others significantly less)
    base = spread(100, 1)
    samples = [np.array(scaled(base, f)) for f in (1, 2, 2.04, 2.05)]
    got = claims.saturation_bounds(samples, gain=0.05)
    assert got["estimate"] == 1 and got["earliest"] == 1 and got["latest"] == 1
    assert got["gains"] == pytest.approx([1.0, 0.02, 2.05 / 2.04 - 1], abs=1e-6)


def test_saturation_not_reached_is_the_last_size():
    samples = [np.array(scaled(spread(100, 1), f)) for f in (1, 2, 4)]
    got = claims.saturation_bounds(samples, gain=0.05)
    assert got["estimate"] == 2 and got["earliest"] == 2 and got["latest"] == 2


def test_saturation_with_noise_gives_wide_bounds():
    samples = [np.array(spread(100, 10)), np.array(spread(105, 25)), np.array(spread(106, 21))]
    got = claims.saturation_bounds(samples, gain=0.05)
    assert got["earliest"] == 0 and got["latest"] == 2


# ------------------------------------------------------------------ the kinds in evaluate_claim


def scaling(platform, factor, steps=(1, 2, 4, 8), kernel="cg"):
    return [r for i, s in enumerate(steps) for r in rows(platform, "npb_mpi", "time", "s", noisy(100.0 * factor**i), kernel=kernel, procs=s)]


def evaluate(kind, data, **check):
    c = claim(kind, benchmark="npb_mpi", metric="time", **check)
    c["paper_platform"] = "OpenVZ"
    return claims.evaluate_claim(c, data)


def test_trend_of_overhead_over_process_counts():
    data = table(scaling("native", 1.0), scaling("lxc", 1.15))  # lxc's time ratio grows 15 % a step
    row = evaluate("trend", data, platform="lxc", baseline="native", over="procs", direction="worsens")
    assert row["verdict"] == "holds" and row["value"] == pytest.approx(0.15, abs=0.03)
    row = evaluate("trend", data, platform="lxc", baseline="native", over="procs", direction="improves")
    assert row["verdict"] == "does not hold"


def test_trend_without_baseline_and_flat_data_is_not_a_trend():
    data = table(scaling("lxc", 1.0), scaling("native", 1.0))
    row = evaluate("trend", data, platform="lxc", over="procs", direction="worsens")
    assert row["verdict"] in ("inconclusive", "does not hold") and abs(row["value"]) < 0.05


def test_trend_pooled_over_kernels_is_one_comparison():
    data = table(scaling("native", 1.0), scaling("lxc", 1.1), scaling("native", 1.0, kernel="ep"), scaling("lxc", 1.1, kernel="ep"))
    per_kernel = evaluate("trend", data, platform="lxc", baseline="native", over="procs", direction="worsens")
    pooled = evaluate("trend", data, platform="lxc", baseline="native", over="procs", direction="worsens", aggregate="mean")
    assert "2 comparisons" in per_kernel["note"] and pooled["verdict"] == "holds"
    assert "geometric mean over 2 variants" in pooled["variant"]


def test_spread_kind():
    data = table(rows("native", "npb_mpi", "time", "s", noisy(100.0, n=10, cv=0.005), kernel="cg"),
                 rows("lxc", "npb_mpi", "time", "s", noisy(100.0, n=10, cv=0.08), kernel="cg"))  # fmt: skip
    assert evaluate("spread", data, platform="lxc", baseline="native", direction="larger")["verdict"] == "holds"
    assert evaluate("spread", data, platform="lxc", baseline="native", direction="smaller")["verdict"] == "does not hold"


def test_saturation_kind():
    sizes = (64, 256, 1024, 4096)
    means = (100.0, 380.0, 900.0, 910.0)  # saturates at 1024
    data = table(*[rows("lxc", "netperf", "throughput", "Mbit/s", spread(m, 2), test="TCP_STREAM", size=s) for s, m in zip(sizes, means)])

    def verdict(between):
        c = claim("saturation", benchmark="netperf", metric="throughput", platform="lxc", over="size", between=between, gain=0.05)
        c["paper_platform"] = "OpenVZ"
        return claims.evaluate_claim(c, data)

    assert verdict([512, 2048])["verdict"] == "holds"
    assert verdict([128, 512])["verdict"] == "does not hold"
    assert verdict([512, 2048])["value"] == 1024


def test_load_claims_checks_the_new_kinds(tmp_path):
    bad = tmp_path / "c.yaml"
    bad.write_text("- {id: x-1, paper: x, source: s, quote: q, published: p, paper_platform: OpenVZ, testable: true,\n"
                   "   check: {kind: trend, benchmark: npb_mpi, metric: time, platform: lxc, over: procs, direction: up}}\n")  # fmt: skip
    with pytest.raises(ValueError, match="direction"):
        claims.load_claims(bad)


def test_trend_flat_is_an_equivalence_bound_on_the_slope():
    """``direction: flat``: the per-step change of the overhead within +-threshold. The slope and its
    interval are statsmodels' OLS (as above); the bound is log(1 + t) on the log scale."""
    steady = table(scaling("native", 1.0), scaling("lxc", 1.01))  # the ratio grows 1 % a step
    growing = table(scaling("native", 1.0), scaling("lxc", 1.15))  # 15 % a step
    flat = {"platform": "lxc", "baseline": "native", "over": "procs", "direction": "flat"}
    assert evaluate("trend", steady, threshold=0.05, **flat)["verdict"] == "holds"
    assert evaluate("trend", growing, threshold=0.05, **flat)["verdict"] == "does not hold"
    row = evaluate("trend", growing, threshold=0.15, **flat)  # the bound inside the interval
    assert row["ci_low"] < 0.15 < row["ci_high"] and row["verdict"] == "inconclusive"
