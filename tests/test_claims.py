"""Claim verdicts on small synthetic tables whose answers can be checked by hand, and every claim of
claims.yaml against the committed reference-vm table."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

from conftest import table_row
from virtrepro.analysis import claims, stats
from virtrepro import results


REPO = Path(__file__).resolve().parent.parent


def rows(platform, benchmark, metric, unit, values, **params):
    """One record per value, each from its own log (one repetition each), of the variant ``params``."""
    return [
        table_row(params, testbed="t", platform=platform, benchmark=benchmark, repetition=i, metric=metric, unit=unit,
                  value=float(v), source_log=f"t/{platform}/{benchmark}/{'_'.join(f'{k}-{v}' for k, v in params.items())}/rep-{i}.log")
        for i, v in enumerate(values)
    ]  # fmt: skip


def table(*groups):
    return pd.DataFrame([r for g in groups for r in g])


def claim(kind, benchmark="bench", metric="throughput", testable=True, **check):
    return {"id": f"x-{kind}", "paper": "x", "source": "Sec. 1", "published": "p", "testable": testable,
            "check": {"kind": kind, "benchmark": benchmark, "metric": metric, **check}}  # fmt: skip


def spread(center, half):
    """Six values around ``center``, ``half`` either side (6 + 6 values: the smallest equal sizes with
    a 95 % Mann-Whitney interval that is not the whole range, achieved confidence 95.9 %)."""
    return [round(center + half * a, 6) for a in (-1, -0.6, -0.2, 0.2, 0.6, 1)]


def scaled(values, factor):
    """The values times ``factor``: their Hodges-Lehmann ratio to ``values`` is ``factor``."""
    return [round(v * factor, 6) for v in values]


# baseline around 100, platform 0.95 times it: 5 % less throughput, i.e. an overhead of +0.05
BASE = spread(100.0, 1.0)
PLAT = scaled(BASE, 0.95)
THROUGHPUT = table(rows("native", "bench", "throughput", "MB/s", BASE), rows("lxc", "bench", "throughput", "MB/s", PLAT))


def one(kind, data=THROUGHPUT, **check):
    return claims.evaluate_claim(claim(kind, **check), data)


def test_direction_table():
    assert claims.higher_is_better("throughput", "MB/s")
    assert claims.higher_is_better("events_per_second", "events/s")
    assert claims.higher_is_better("hpl_gflops", "Gflop/s")
    assert claims.higher_is_better("parallel_speedup")
    assert not claims.higher_is_better("time", "s")
    assert not claims.higher_is_better("half_round_trip_latency", "us")
    assert not claims.higher_is_better("latency_avg", "ms")
    assert not claims.higher_is_better("provision", "s")
    assert not claims.higher_is_better("put_block_cpu", "%")
    assert not claims.higher_is_better("retransmits", "segments")  # iperf3: fewer resent segments is better
    assert not claims.higher_is_better("clat_stdev", "us") and not claims.higher_is_better("mops_total_stddev", "Mop/s")
    with pytest.raises(ValueError, match="no better direction"):
        claims.higher_is_better("single_stream_t_value")  # a t-value has no better direction
    with pytest.raises(ValueError, match="no better direction"):
        claims.higher_is_better("size_at_max_throughput", "bytes")


def test_overhead_value_and_interval_are_the_hodges_lehmann_ratio_as_a_fraction():
    row = one("overhead_at_most", platform="lxc", baseline="native", threshold=0.10)
    ref = stats.hl_ratio_ci(PLAT, BASE, level=0.95)  # tested against R and enumeration in test_rank_intervals.py
    assert row["value"] == pytest.approx(0.05)
    assert row["ci_low"] == pytest.approx(1 - ref.high) and row["ci_high"] == pytest.approx(1 - ref.low)
    # the 6 x 6 log differences log(0.95) + log(b_i / b_j), each widened by its rounding bound (BASE
    # printed at 0.1, PLAT at 0.01); k = 6 (P(U <= 5) = 19/924 <= 0.025)
    diffs = [(math.log(p / b), -math.log1p(-0.005 / p) - math.log1p(-0.05 / b)) for p in PLAT for b in BASE]
    assert row["ci_low"] == pytest.approx(1 - math.exp(sorted(d + e for d, e in diffs)[-6]), abs=1e-12)
    assert row["ci_high"] == pytest.approx(1 - math.exp(sorted(d - e for d, e in diffs)[5]), abs=1e-12)
    assert 0.0 < row["ci_low"] < 0.05 < row["ci_high"] < 0.10
    assert row["ci_method"] == "hl-moses" and "achieved confidence 95.9%" in row["note"]
    assert (row["n_platform"], row["n_baseline"]) == (6, 6)
    assert row["platforms"] == "lxc vs native"
    assert row["verdict"] == "holds"


@pytest.mark.parametrize(
    ("kind", "threshold", "verdict"),
    [
        ("overhead_at_most", 0.10, "holds"),  # whole CI below 10 %
        ("overhead_at_most", 0.05, "inconclusive"),  # CI straddles 5 %
        ("overhead_at_most", 0.01, "does not hold"),  # whole CI above 1 %
        ("overhead_at_least", 0.01, "holds"),
        ("overhead_at_least", 0.05, "inconclusive"),
        ("overhead_at_least", 0.10, "does not hold"),
        ("better", 0.0, "does not hold"),  # the platform is worse, not better
    ],
)
def test_verdicts_follow_the_interval(kind, threshold, verdict):
    assert one(kind, platform="lxc", baseline="native", threshold=threshold)["verdict"] == verdict


def test_better_for_a_time_metric():
    # half the time: relative difference (5 - 10) / 10 = -0.5
    data = table(rows("qemu-kvm", "b", "time", "s", spread(10, 0.1)), rows("lxc", "b", "time", "s", scaled(spread(10, 0.1), 0.5)))
    row = claims.evaluate_claim(claim("better", "b", "time", platform="lxc", baseline="qemu", threshold=0.4), data)
    assert row["value"] == pytest.approx(-0.5)
    assert row["platforms"] == "lxc vs qemu-kvm"  # qemu resolved to what the table has
    assert row["verdict"] == "holds"
    row = claims.evaluate_claim(claim("better", "b", "time", platform="lxc", baseline="qemu", threshold=0.6), data)
    assert row["verdict"] == "does not hold"


def test_equivalent_uses_tost():
    same = table(rows("native", "bench", "throughput", "MB/s", BASE), rows("lxc", "bench", "throughput", "MB/s", spread(100, 0.2)))
    assert one("equivalent", same, platform="lxc", baseline="native", threshold=0.05)["verdict"] == "holds"
    # a noisy platform with the same mean: the t-test cannot reject, but equivalence is not shown
    noisy = table(rows("native", "bench", "throughput", "MB/s", BASE), rows("lxc", "bench", "throughput", "MB/s", spread(100, 40)))
    row = one("equivalent", noisy, platform="lxc", baseline="native", threshold=0.05)
    assert row["value"] == pytest.approx(0.0, abs=0.01) and row["verdict"] == "inconclusive"
    far = table(rows("native", "bench", "throughput", "MB/s", BASE), rows("lxc", "bench", "throughput", "MB/s", scaled(BASE, 0.8)))
    assert one("equivalent", far, platform="lxc", baseline="native", threshold=0.05)["verdict"] == "does not hold"


def test_order():
    data = table(
        rows("lxc", "bench", "throughput", "MB/s", BASE),
        rows("podman", "bench", "throughput", "MB/s", scaled(BASE, 0.8)),
        rows("qemu-kvm", "bench", "throughput", "MB/s", scaled(BASE, 0.2)),
    )
    row = one("order", data, platforms=["lxc", "podman", "qemu"])
    assert row["verdict"] == "holds"
    assert row["platforms"] == "lxc > podman > qemu-kvm (best first)"
    # worst adjacent pair: lxc vs podman, (80 - 100) / 80 = -0.25
    assert row["value"] == pytest.approx(-0.25)
    assert one("order", data, platforms=["qemu", "lxc"])["verdict"] == "does not hold"


def test_where_selects_as_text_and_each_variant_must_hold():
    data = table(
        rows("native", "net", "half_round_trip_latency", "us", spread(10, 0.1), test="TCP_RR", size=1),
        rows("lxc", "net", "half_round_trip_latency", "us", scaled(spread(10, 0.1), 1.05), test="TCP_RR", size=1),  # +5 %
        rows("native", "net", "half_round_trip_latency", "us", spread(20, 0.2), test="TCP_RR", size=256),
        rows("lxc", "net", "half_round_trip_latency", "us", scaled(spread(20, 0.2), 1.5), test="TCP_RR", size=256),  # +50 %
    )
    base = dict(benchmark="net", metric="half_round_trip_latency", platform="lxc", baseline="native", threshold=0.10)
    row = claims.evaluate_claim(claim("overhead_at_most", **{**base, "where": {"test": "TCP_RR", "size": 1}}), data)
    assert row["verdict"] == "holds" and row["value"] == pytest.approx(0.05)
    row = claims.evaluate_claim(claim("overhead_at_most", **{**base, "where": {"test": "TCP_RR"}}), data)
    assert row["verdict"] == "does not hold"
    assert row["variant"] == "size=256" and row["value"] == pytest.approx(0.5)
    assert row["note"].startswith("2 comparisons")
    # a list value: each of them; a listed value that was not run keeps a holding claim inconclusive
    row = claims.evaluate_claim(claim("overhead_at_most", **{**base, "where": {"size": [1, 4096]}}), data)
    assert row["verdict"] == "inconclusive" and "size=4096" in row["note"]


def test_aggregate_is_the_geometric_mean_of_the_per_variant_ratios():
    data = table(
        rows("native", "npb", "time", "s", spread(10, 0.1), kernel="cg"),
        rows("lxc", "npb", "time", "s", scaled(spread(10, 0.1), 1.1), kernel="cg"),  # +10 %
        rows("native", "npb", "time", "s", spread(20, 0.2), kernel="ep"),
        rows("lxc", "npb", "time", "s", spread(20, 0.2), kernel="ep"),  # 0 %
    )
    c = claim("overhead_at_most", "npb", "time", platform="lxc", baseline="native", threshold=0.07, aggregate="mean")
    row = claims.evaluate_claim(c, data)
    # ratios 1.1 and 1.0: geometric mean sqrt(1.1) = 1.0488088, not the arithmetic 1.05
    assert row["value"] == pytest.approx(math.sqrt(1.1) - 1)
    # the bootstrap of the two variants' Hodges-Lehmann shifts, each with exponent 1/2, seeded by the row's label
    ref = stats.shift_bootstrap_ci([(scaled(spread(10, 0.1), 1.1), spread(10, 0.1), 0.5), (spread(20, 0.2), spread(20, 0.2), 0.5)],
                                   seed=stats.seed_for(0, "geometric mean over 2 variants"))  # fmt: skip
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((ref.low - 1, ref.high - 1))
    assert row["ci_low"] < row["value"] < row["ci_high"] < 0.07
    assert row["ci_method"] == "bootstrap-hl"
    assert row["verdict"] == "holds" and (row["n_platform"], row["n_baseline"]) == (12, 12)
    del c["check"]["aggregate"]
    assert claims.evaluate_claim(c, data)["verdict"] == "does not hold"  # cg alone is 10 % > 7 %


def test_parallel_speedup():
    data = table(
        rows("native", "npb_omp", "time", "s", spread(10, 0.1), kernel="cg", threads=1),
        rows("native", "npb_omp", "time", "s", scaled(spread(10, 0.1), 0.5), kernel="cg", threads=2),  # speed-up 2
        rows("lxc", "npb_omp", "time", "s", spread(10, 0.1), kernel="cg", threads=1),
        rows("lxc", "npb_omp", "time", "s", scaled(spread(10, 0.1), 0.8), kernel="cg", threads=2),  # speed-up 1.25
    )
    c = claim("order", "npb_omp", "parallel_speedup", platforms=["native", "lxc"], aggregate="mean")
    row = claims.evaluate_claim(c, data)
    # native better than lxc by (1.25 - 2) / 1.25 = -0.6 (higher is better)
    assert row["value"] == pytest.approx(-0.6)
    assert row["verdict"] == "holds"
    c["check"]["platforms"] = ["lxc", "native"]
    assert claims.evaluate_claim(c, data)["verdict"] == "does not hold"


def test_isolation_efficiency():
    # qemu keeps 90 % of its CPU beside a stressing neighbour, lxc only 50 %
    data = table(
        rows("qemu-kvm", "isolation", "events_per_second", "events/s", BASE, resource="cpu", neighbour="none", limits="off"),
        rows("qemu-kvm", "isolation", "events_per_second", "events/s", scaled(BASE, 0.9), resource="cpu", neighbour="stress", limits="off"),
        rows("lxc", "isolation", "events_per_second", "events/s", scaled(BASE, 2), resource="cpu", neighbour="none", limits="off"),
        rows("lxc", "isolation", "events_per_second", "events/s", BASE, resource="cpu", neighbour="stress", limits="off"),
        rows("lxc", "isolation", "bw", "KiB/s", [1, 1, 1], resource="disk", neighbour="none", limits="off"),  # other resource: ignored
    )
    c = claim("order", "isolation", "isolation_efficiency", platforms=["qemu", "lxc"], victim_metric="events_per_second",
              where={"resource": "cpu"})
    assert claims.higher_is_better("isolation_efficiency")
    row = claims.evaluate_claim(c, data)
    # efficiencies 0.9 (qemu) and 0.5 (lxc): qemu better by (0.5 - 0.9) / 0.5 = -0.8
    assert row["value"] == pytest.approx(-0.8)
    assert row["verdict"] == "holds" and "beside a neighbour / alone" in row["variant"]
    assert row["ci_low"] < -0.8 < row["ci_high"] < 0
    c["check"]["platforms"] = ["lxc", "qemu"]
    assert claims.evaluate_claim(c, data)["verdict"] == "does not hold"
    assert row["ci_method"] == "bootstrap-hl"
    # a victim never run alone cannot give an efficiency
    alone_missing = data[~((data["platform"] == "lxc") & (results.view(data, "isolation")["param_neighbour"] == "none"))]
    row = claims.evaluate_claim(c, alone_missing)
    assert row["verdict"] == "not measured" and "alone" in row["note"]


def test_platform_setup_dimension_and_labels_varying_within_a_log():
    # the VM's disk formats against the host's one disk: each format against the whole baseline
    data = table(
        rows("native", "io", "write", "kB/s", BASE, disk="host"),
        rows("qemu-kvm", "io", "write", "kB/s", scaled(BASE, 0.9), disk="raw"),  # 10 % less
        rows("qemu-kvm", "io", "write", "kB/s", scaled(BASE, 0.5), disk="qcow2"),  # 50 % less
    )
    row = claims.evaluate_claim(claim("overhead_at_least", "io", "write", platform="qemu", baseline="native", threshold=0.05), data)
    assert row["verdict"] == "holds" and row["variant"] == "disk=raw" and row["value"] == pytest.approx(0.10)
    # one log with several file sizes: the label is a variant dimension
    logs = []
    for platform, scale in (("native", 1.0), ("lxc", 0.5)):
        for rep in range(6):
            for size, value in ((1024, 100 + rep), (2048, 200 + rep)):
                logs.append(table_row(testbed="t", platform=platform, benchmark="io", variant="v", repetition=rep,
                                      metric="read", unit="kB/s", value=value * (scale if size == 2048 else 1.0),
                                      source_log=f"{platform}/{rep}", file_size_kb=size))  # fmt: skip
    row = claims.evaluate_claim(claim("overhead_at_most", "io", "read", platform="lxc", baseline="native", threshold=0.1), pd.DataFrame(logs))
    assert row["verdict"] == "does not hold" and row["variant"] == "file_size_kb=2048"
    assert row["value"] == pytest.approx(0.5)


def test_not_measured_and_not_testable():
    row = one("overhead_at_most", platform="qemu", baseline="native", threshold=0.1)
    assert row["verdict"] == "not measured" and "qemu" in row["note"]
    row = one("overhead_at_most", platform="lxc", baseline="native", threshold=0.1, where={"size": 8})
    assert row["verdict"] == "not measured" and "size=8" in row["note"]
    row = claims.evaluate_claim(claim("overhead_at_most", benchmark="netperf", platform="lxc", baseline="native", threshold=0.1), THROUGHPUT)
    assert row["verdict"] == "not measured" and "no netperf runs on lxc" in row["note"]
    # a platform the testbed's probe found it cannot run: the note says so, with the probe's reason
    why = "tb/n1: lxc needs root (or passwordless sudo) on the host, and alice has neither"
    row = claims.evaluate_claim(claim("overhead_at_most", benchmark="netperf", platform="lxc", baseline="native",
                                      threshold=0.1), THROUGHPUT, unavailable={"lxc": why, "podman": "other"})
    assert row["verdict"] == "not measured"
    assert row["note"].startswith("no netperf runs on lxc; ")
    assert row["note"].endswith(f"; lxc is unavailable on this testbed: {why}") and "podman" not in row["note"]
    untestable = {"id": "x-u", "paper": "x", "testable": False, "reason": "Xen is not available"}
    row = claims.evaluate_claim(untestable, THROUGHPUT)
    assert row["verdict"] == "not testable here" and row["note"] == "Xen is not available"


@pytest.mark.parametrize("n", [1, 3])
def test_too_few_values_for_any_interval_are_too_few_repetitions(n):
    # at 3 + 3 even [min, max] of the differences has confidence 1 - 2 / 20 = 90 %: no 95 % interval
    data = table(rows("native", "bench", "throughput", "MB/s", BASE[:n]), rows("lxc", "bench", "throughput", "MB/s", scaled(BASE[:n], 0.5)))
    row = one("overhead_at_least", data, platform="lxc", baseline="native", threshold=0.1)
    assert row["value"] == pytest.approx(0.5) and math.isnan(row["ci_low"]) and row["verdict"] == claims.TOO_FEW
    assert row["note"].startswith("too few repetitions for a 95% interval") and row["ci_method"] == "none"
    assert f"{1 - 2 / math.comb(2 * n, n):.1%}" in row["note"]  # the widest interval's confidence


def test_four_values_a_side_decide():
    # 4 + 4: the range of the 16 differences has confidence 1 - 2 / 70 = 97.1 %
    data = table(rows("native", "bench", "throughput", "MB/s", BASE[:4]), rows("lxc", "bench", "throughput", "MB/s", scaled(BASE[:4], 0.5)))
    row = one("overhead_at_least", data, platform="lxc", baseline="native", threshold=0.1)
    assert row["verdict"] == "holds" and "achieved confidence 97.1%" in row["note"]


def test_a_zero_baseline_is_inconclusive_not_an_error():
    # NPB class S prints times below 5 ms as 0.00 s: native's IS time can be 0 in every run
    data = table(
        rows("native", "npb", "time", "s", [0.0] * 6, kernel="is"),
        rows("lxc", "npb", "time", "s", [0.0, 0.01, 0.0, 0.0, 0.0, 0.0], kernel="is"),
        rows("native", "npb", "time", "s", spread(10, 0.1), kernel="cg"),
        rows("lxc", "npb", "time", "s", scaled(spread(10, 0.1), 1.1), kernel="cg"),
    )
    c = claim("overhead_at_most", "npb", "time", platform="lxc", baseline="native", threshold=0.07, aggregate="mean")
    row = claims.evaluate_claim(c, data)
    assert math.isnan(row["value"]) and row["verdict"] == "inconclusive"
    del c["check"]["aggregate"]
    row = claims.evaluate_claim(c, data)  # per variant: cg's 10 % does not hold whatever IS shows
    assert row["verdict"] == "does not hold"


def test_load_claims_refuses_a_bad_kind(tmp_path):
    bad = tmp_path / "claims.yaml"
    bad.write_text("- {id: a, paper: x, testable: true, check: {kind: faster, benchmark: b, metric: m}}\n")
    with pytest.raises(ValueError, match="unknown check kind"):
        claims.load_claims(bad)


def test_every_claim_evaluates_against_the_reference_table():
    listed = claims.load_claims(REPO / "data" / "reference" / "claims.yaml")
    verdicts = claims.evaluate(listed, results.load("reference-vm", REPO / "data"))
    assert len(verdicts) == len(listed) and verdicts["id"].is_unique
    assert set(verdicts["verdict"]) <= set(claims.VERDICTS)
    testable = {c["id"] for c in listed if c["testable"]}
    assert set(verdicts.loc[verdicts["verdict"] == "not testable here", "id"]).isdisjoint(testable)
    measured = verdicts[verdicts["verdict"].map(claims.base_verdict).isin(["holds", "does not hold", "inconclusive"])]
    # reference-vm has sysbench_cpu, iozone, iozone_disk and lifecycle: their claims are measured
    assert len(measured) >= 10
    assert measured["value"].map(np.isfinite).all()
    decided = measured[measured["verdict"].map(claims.base_verdict) != "inconclusive"]
    assert decided[["ci_low", "ci_high"]].notna().all().all()
    assert verdicts.loc[verdicts["verdict"] == "not measured", "note"].str.startswith("no ").all()


def test_a_counterexample_needs_holm_across_the_claims_variants():
    # two run-time variants 10-23 % slower; threshold 10 %. In each, 5 of the 36 ratios platform /
    # baseline are at most 1.1, so the exact Mann-Whitney p-value against 10 % (by enumerating the 924
    # splits here) is 2 P(U <= 5) = 2 * 19 / 924 = 0.041: either alone does not hold; Holm over the two
    # (statsmodels, called here) keeps both >= 0.05.
    base = spread(10, 0.1)
    slow1, slow2 = [11.0, 11.05, 12.0, 12.1, 12.2, 12.3], [11.02, 11.1, 12.05, 12.15, 12.25, 12.35]

    def exact_p(plat):
        below = sum(x <= 1.1 * y for x in plat for y in base)
        splits = list(itertools.combinations(range(12), 6))
        return 2 * sum(sum(p - i for i, p in enumerate(c)) <= below for c in splits) / len(splits)

    p = [exact_p(slow1), exact_p(slow2)]
    assert all(0.025 < q < 0.05 for q in p) and (multipletests(p, method="holm")[1] >= 0.05).all()
    data = table(rows("native", "npb", "time", "s", base, kernel="cg"), rows("lxc", "npb", "time", "s", slow1, kernel="cg"),
                 rows("native", "npb", "time", "s", base, kernel="ft"), rows("lxc", "npb", "time", "s", slow2, kernel="ft"))
    c = claim("overhead_at_most", "npb", "time", platform="lxc", baseline="native", threshold=0.10)
    row = claims.evaluate_claim(c, data)
    assert row["verdict"] == "inconclusive" and "Holm" in row["note"]
    alone = claims.evaluate_claim({**c, "check": {**c["check"], "where": {"kernel": "cg"}}}, data)
    assert alone["verdict"] == "does not hold"


def test_constant_samples_are_as_wide_as_their_printed_resolution():
    # times printed as 0.01 vs 0.02 s: each log value lies within -log(1 - 0.005 / x) of the true one
    # (log 2 at 0.01, log 4/3 at 0.02), so the ratio 2 is known to within a factor 2 * 4/3 either
    # way: [0.75, 5.33]; "overhead at least 50 %" cannot be decided
    data = table(rows("native", "b", "time", "s", [0.01] * 6), rows("lxc", "b", "time", "s", [0.02] * 6))
    row = claims.evaluate_claim(claim("overhead_at_least", "b", "time", platform="lxc", baseline="native", threshold=0.5), data)
    assert row["verdict"] == "inconclusive" and row["value"] == pytest.approx(1.0)
    assert row["ci_low"] == pytest.approx(2 / (2 * 4 / 3) - 1) and row["ci_high"] == pytest.approx(2 * 2 * 4 / 3 - 1)
    assert "printed resolution" in row["note"] and row["ci_method"] == "hl-moses"


def test_adding_a_variant_leaves_the_other_variants_intervals_alone():
    one_variant = table(rows("native", "b", "time", "s", spread(10, 0.1), kernel="cg"), rows("lxc", "b", "time", "s", spread(11, 0.1), kernel="cg"))
    two_variants = pd.concat([one_variant, table(rows("native", "b", "time", "s", spread(5.1, 0.2), kernel="ep"),
                                                 rows("lxc", "b", "time", "s", spread(9.5, 0.5), kernel="ep"))])
    c = claim("overhead_at_most", "b", "time", platform="lxc", baseline="native", threshold=0.5, where={"kernel": "cg"})
    assert claims.evaluate_claim(c, one_variant)["ci_low"] == claims.evaluate_claim(c, two_variants)["ci_low"]


# ------------------------------------------------------------------ ratio_of_overheads, better_in_some


def kernels(platform, benchmark, metric, unit, means, spread=(-1.0, -0.6, -0.2, 0.2, 0.6, 1.0)):
    """Six values a kernel: mean * (1 + d / 100) for d in ``spread``."""
    return [r for kernel, mean in means.items() for r in rows(platform, benchmark, metric, unit,
            [mean * (1 + d / 100) for d in spread], kernel=kernel)]  # fmt: skip


def overhead_claim(metric="time", threshold=0.05, **versus):
    return claim("ratio_of_overheads", metric=metric, platform="lxc", baseline="native", threshold=threshold,
                 where={"kernel": "a"}, versus=versus or {"where": {"kernel": ["b", "c"]}})  # fmt: skip


def test_ratio_of_overheads_by_hand():
    # times: kernel a 10 -> 12 s (x1.2); b 20 -> 21 s (x1.05), c 40 -> 42 s (x1.05): q = 1.2 / 1.05
    data = table(kernels("native", "bench", "time", "s", {"a": 10, "b": 20, "c": 40}),
                 kernels("lxc", "bench", "time", "s", {"a": 12, "b": 21, "c": 42}))
    row = claims.evaluate_claim(overhead_claim(), data)
    assert row["value"] == pytest.approx(1.2 / 1.05 - 1)
    # the interval is stats.shift_bootstrap_ci's of the Hodges-Lehmann shifts: a's ratio over the
    # geometric mean of b's and c's
    pick = {(p, k): np.array([m * (1 + d / 100) for d in (-1.0, -0.6, -0.2, 0.2, 0.6, 1.0)])
            for (p, k), m in {("lxc", "a"): 12, ("native", "a"): 10, ("lxc", "b"): 21, ("native", "b"): 20,
                              ("lxc", "c"): 42, ("native", "c"): 40}.items()}  # fmt: skip
    shifts = [(pick["lxc", "a"], pick["native", "a"], 1.0)] + [(pick["lxc", k], pick["native", k], -0.5) for k in ("b", "c")]
    ci = stats.shift_bootstrap_ci(shifts, 0.95, seed=stats.seed_for(0, "ratio_of_overheads"))
    assert ci.estimate == pytest.approx(1.2 / 1.05)
    assert (row["ci_low"], row["ci_high"]) == (pytest.approx(ci.low - 1), pytest.approx(ci.high - 1))
    assert row["ci_low"] > 0.05 and row["verdict"] == "holds"  # +14 % with +-1 % noise: above 5 %
    assert row["n_platform"] == 18 and row["n_baseline"] == 18 and row["ci_method"] == "bootstrap-hl"
    assert claims.evaluate_claim(overhead_claim(threshold=0.30), data)["verdict"] == "does not hold"
    assert claims.evaluate_claim(overhead_claim(threshold=0.14), data)["verdict"] == "inconclusive"


def test_ratio_of_overheads_reads_each_metric_in_its_worse_direction():
    # throughput: a 100 -> 80 (overhead ratio 100/80 = 1.25), b 100 -> 95 (100/95) on another benchmark
    data = table(kernels("native", "bench", "throughput", "MB/s", {"a": 100}),
                 kernels("lxc", "bench", "throughput", "MB/s", {"a": 80}),
                 kernels("native", "other", "time", "s", {"b": 10}), kernels("lxc", "other", "time", "s", {"b": 10.5}))
    first = claim("ratio_of_overheads", metric="throughput", platform="lxc", baseline="native", threshold=0.0,
                  where={"kernel": "a"}, versus={"benchmark": "other", "metric": "time", "where": {"kernel": "b"}})
    row = claims.evaluate_claim(first, data)
    assert row["value"] == pytest.approx((100 / 80) / (10.5 / 10) - 1)
    assert row["verdict"] == "holds"
    # the other way round: the smaller overhead first
    swapped = claim("ratio_of_overheads", benchmark="other", metric="time", platform="lxc", baseline="native",
                    threshold=0.0, where={"kernel": "b"}, versus={"benchmark": "bench", "metric": "throughput", "where": {"kernel": "a"}})  # fmt: skip
    row = claims.evaluate_claim(swapped, data)
    assert row["value"] == pytest.approx((10.5 / 10) / (100 / 80) - 1) and row["verdict"] == "does not hold"


@pytest.mark.parametrize("paper_platform, check, lacks", [
    ("OpenVZ", "kind: ratio_of_overheads, benchmark: b, metric: time, platform: lxc, baseline: native, threshold: 0",
     "versus"),
    ("KVM", "kind: trend, benchmark: b, metric: time, platform: qemu-kvm, baseline: native, over: procs, direction: flat",
     "threshold"),
])
def test_a_kind_refuses_a_claim_without_the_key_it_needs(tmp_path, paper_platform, check, lacks):
    """ratio_of_overheads needs its versus selection; a flat trend its threshold."""
    bad = tmp_path / "claims.yaml"
    bad.write_text(f"- {{id: a, paper: x, paper_platform: {paper_platform}, testable: true, check: {{{check}}}}}\n")
    with pytest.raises(ValueError, match=f"lacks {lacks}"):
        claims.load_claims(bad)


def test_better_in_some_combines_the_variants_as_stated(monkeypatch):
    """The rule on hand-made p-values: the "holds" p of the best variant times the number of
    variants (Holm's first step), the "does not hold" p the largest of the variants'."""
    def fake(p_holds, p_fails):
        rows_ = [{"label": f"kernel={k}", "value": -0.01 * i, "ci_low": 0.0, "ci_high": 0.0, "n_platform": 3,
                  "n_baseline": 3, "ci_method": "fieller", "ci_note": "", "p_hold": h, "p_fail": f}
                 for i, (k, h, f) in enumerate(zip("abc", p_holds, p_fails))]  # fmt: skip
        monkeypatch.setattr(claims.shapes, "_compare", lambda *a, **k: ([dict(r) for r in rows_], []))

    data = table(kernels("native", "bench", "time", "s", {"a": 10}), kernels("lxc", "bench", "time", "s", {"a": 10}))
    some = claim("better_in_some", metric="time", platform="lxc", baseline="native", threshold=0.0)
    fake([0.03, 0.5, 0.9], [0.9, 0.2, 0.01])  # alone 0.03 < 0.05, but 3 x 0.03 = 0.09: not shown
    assert claims.evaluate_claim(some, data)["verdict"] == "inconclusive"
    fake([0.01, 0.5, 0.9], [0.9, 0.2, 0.01])  # 3 x 0.01 = 0.03 < 0.05
    row = claims.evaluate_claim(some, data)
    assert row["verdict"] == "holds" and row["variant"] == "best of 3 variants: kernel=a"
    fake([0.9, 0.8, 0.7], [0.01, 0.04, 0.02])  # every variant shown not better (largest 0.04)
    assert claims.evaluate_claim(some, data)["verdict"] == "does not hold"
    fake([0.9, 0.8, 0.7], [0.01, 0.06, 0.02])  # one variant not shown either way
    assert claims.evaluate_claim(some, data)["verdict"] == "inconclusive"


def test_better_in_some_on_data():
    # kernel a 5 % faster on lxc (+-1 % noise), b and c 5 % slower
    data = table(kernels("native", "bench", "time", "s", {"a": 10, "b": 10, "c": 10}),
                 kernels("lxc", "bench", "time", "s", {"a": 9.5, "b": 10.5, "c": 10.5}))
    some = claim("better_in_some", metric="time", platform="lxc", baseline="native", threshold=0.0)
    row = claims.evaluate_claim(some, data)
    assert row["verdict"] == "holds" and row["variant"].endswith("kernel=a")
    assert row["value"] == pytest.approx(-0.05)
    assert claims.evaluate_claim(claim("better", metric="time", platform="lxc", baseline="native", threshold=0.0),
                                 data)["verdict"] == "does not hold"  # fmt: skip
    worse = table(kernels("native", "bench", "time", "s", {"a": 10, "b": 10}),
                  kernels("lxc", "bench", "time", "s", {"a": 10.5, "b": 10.5}))
    assert claims.evaluate_claim(some, worse)["verdict"] == "does not hold"
