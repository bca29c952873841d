"""The part-consistency check (claims.gates._part_consistency): a verdict decided on pooled data whose
deciding comparison lies on opposite sides of the threshold in the two parts of the run order is
"not comparable here" (platform and time are confounded), with "drift between parts" in its note. Expected estimates are computed by hand: a sample against
itself has a Hodges-Lehmann ratio of exactly 1, a sample against itself times f exactly f."""

from __future__ import annotations

import copy
from pathlib import Path

import pandas as pd
import pytest

from conftest import table_row
from virtrepro.analysis import claims, conditions
from virtrepro.declarations import platform_names

REPO = Path(__file__).resolve().parent.parent
PART_1 = [99.0, 100.0, 101.0]  # 3 values a side in part 1 (A ... A), 9 in part 2, as unbalanced as the reference run
PART_2 = [96.0, 97.0, 98.0, 99.0, 100.0, 101.0, 102.0, 103.0, 104.0]


def records(platform, parts):
    """One record per value, each from its own log; ``parts``: {part: values}."""
    out, i = [], 0
    for part, values in parts.items():
        for v in values:
            out.append(table_row({}, testbed="t", platform=platform, benchmark="bench", repetition=i, part=part,
                                 metric="throughput", unit="MB/s", value=float(v), source_log=f"t/{platform}/bench/rep-{i}.log"))
            i += 1
    return out


def scaled(values, factor):
    return [round(v * factor, 6) for v in values]


def verdict(lxc_parts, without_part=False):
    rows = records("native", {1: PART_1, 2: PART_2}) + records("lxc", lxc_parts)
    table = pd.DataFrame(rows)
    if without_part:
        table["part"] = None
    claim = {"id": "x-drift", "paper": "x", "source": "Sec. 1", "published": "p", "testable": True,
             "check": {"kind": "overhead_at_most", "benchmark": "bench", "metric": "throughput", "platform": "lxc",
                       "baseline": "native", "threshold": 0.10}}  # fmt: skip
    return claims.evaluate_claim(claim, table)


def test_every_verdict_is_listed_once_and_every_inconclusive_has_its_reason():
    assert len(set(claims.VERDICTS)) == len(claims.VERDICTS)
    # an inconclusive claim is one whose interval straddles its threshold, one with too few repetitions
    # for any interval, or one the faster-than-native guard holds back: drift is not comparable
    assert [v for v in claims.VERDICTS if v.startswith("inconclusive")] == [
        "inconclusive", claims.TOO_FEW, claims.UNEXPLAINED_FASTER]


def test_parts_on_opposite_sides_of_the_threshold_are_drift():
    # part 1: lxc equals native (overhead 0 %), part 2: lxc is 0.8 times native (20 %); pooled, 9 of the
    # 12 lxc values lie near 80, so the pooled interval lies above 10 %: "does not hold"
    pooled = verdict({1: PART_1, 2: scaled(PART_2, 0.8)}, without_part=True)
    assert pooled["verdict"] == "does not hold" and pooled["ci_low"] > 0.10
    row = verdict({1: PART_1, 2: scaled(PART_2, 0.8)})
    assert row["verdict"] == conditions.NOT_COMPARABLE and "drift between parts" in row["note"]
    assert "part 1 +0.0%, part 2 +20.0%" in row["note"] and "+10.0%" in row["note"]
    assert row["value"] == pytest.approx(pooled["value"])  # the pooled estimate is still shown


def test_parts_that_agree_decide_as_before():
    lxc = {1: scaled(PART_1, 0.78), 2: scaled(PART_2, 0.8)}  # 22 % and 20 %: both above 10 %
    row, pooled = verdict(lxc), verdict(lxc, without_part=True)
    assert row["verdict"] == pooled["verdict"] == "does not hold"
    assert (row["value"], row["ci_low"], row["ci_high"]) == (pooled["value"], pooled["ci_low"], pooled["ci_high"])
    assert "drift" not in row["note"]


def test_a_part_with_fewer_than_two_values_on_a_side_is_not_judged():
    row = verdict({1: PART_1[:1], 2: scaled(PART_2, 0.8)})
    assert row["verdict"] == "does not hold"


def test_one_steady_counterexample_keeps_does_not_hold():
    deciding = [{"verdict": "does not hold", "test": ("overhead_at_most", 0.1), "label": "a", "value": 0.2,
                 "by_part": lambda: {1: 0.0, 2: 0.2}},
                {"verdict": "does not hold", "test": ("overhead_at_most", 0.1), "label": "b", "value": 0.3,
                 "by_part": lambda: {1: 0.3, 2: 0.3}}]  # fmt: skip
    assert claims.gates._part_consistency("does not hold", deciding) == ("does not hold", None)
    assert claims.gates._part_consistency("does not hold", deciding[:1])[0] == conditions.NOT_COMPARABLE
    held = [dict(r, verdict="holds") for r in deciding]
    assert claims.gates._part_consistency("holds", held)[0] == conditions.NOT_COMPARABLE  # any deciding comparison that drifts


@pytest.fixture(scope="module")
def reference():
    table = pd.read_parquet(REPO / "data" / "tables" / "reference-vm.parquet")
    found = {c["id"]: c for c in claims.load_claims(REPO / "data" / "reference" / "claims.yaml")}
    return table, found["kumar2013-isolation-memory-containers-worse-than-kvm"]


def test_kumar_memory_isolation_drifts_between_parts(reference):
    # TCG / lxc isolation efficiency within each part (the statistician's re-computation): 1.24 in
    # part 1 and 0.81 in part 2, i.e. TCG 24 % better, then 19 % worse: the sign flips
    table, claim = reference
    as_itself = copy.deepcopy(claim)
    as_itself.pop("paper_platform")
    as_itself["check"]["platforms"] = ["qemu-tcg", "lxc"]  # TCG as itself: no analogue rule applies
    row = claims.evaluate_claim(as_itself, table)
    assert row["verdict"] == conditions.NOT_COMPARABLE and "drift between parts" in row["note"]
    assert "part 1 -24.0%, part 2 +19.1%" in row["note"]
    # as the paper's claim (TCG for KVM) the analogue table forbids memory isolation outright
    assert claims.evaluate_claim(claim, table)["verdict"] == conditions.NOT_COMPARABLE


@pytest.mark.parametrize("resource, use, bias", [("cpu", "no", "none"), ("memory", "no", "none"),
                                                  ("disk", "one-way", "better"), ("network", "one-way", "better")])
def test_isolation_rules_per_resource(resource, use, bias):
    check = {"kind": "order", "benchmark": "isolation", "metric": "isolation_efficiency", "where": {"resource": resource}}
    key = conditions.rule_subsystem(check)
    assert key == f"isolation.{resource}"
    rule = platform_names.analogue_rule("KVM", "qemu-tcg", key)
    assert (rule["use"], rule["bias"]) == (use, bias)
    assert not any(ch.isdigit() for ch in rule["why"])  # an a-priori argument, no numbers from the data


def test_vmware_server_rules_are_one_way_worse_on_disk_and_network():
    for subsystem in ("disk", "network"):
        rule = platform_names.analogue_rule("VMware Server", "qemu-tcg", subsystem)
        assert (rule["use"], rule["bias"]) == ("one-way", "worse")
    assert platform_names.stand_in("VMware Server", "qemu-tcg") == platform_names.ANALOGUE


# ------------------------------------------------------------------ every kind is re-estimated within each part

BASE_6 = [99.0, 99.4, 99.8, 100.2, 100.6, 101.0]


def part_rows(platform, parts, benchmark="bench", metric="time", unit="s", **params):
    """``parts``: {part: values}, each record its own log, the variant ``params``."""
    out, i = [], 0
    name = "_".join(f"{k}-{v}" for k, v in params.items()) or "default"
    for part, values in parts.items():
        for v in values:
            out.append(table_row(params, testbed="t", platform=platform, benchmark=benchmark, repetition=i, part=part,
                                 metric=metric, unit=unit, value=float(v), source_log=f"t/{platform}/{benchmark}/{name}/rep-{i}.log"))
            i += 1
    return out


def both_parts(values, factor_1, factor_2, n_1=3):
    """``values`` times ``factor_1`` in part 1 (its first ``n_1``), all of them times ``factor_2`` in part 2."""
    return {1: scaled(values[:n_1], factor_1), 2: scaled(values, factor_2) + scaled(values, factor_2)}


def test_ratio_of_overheads_drifts_between_parts():
    # kernel a: lxc x1.0 native in part 1, x1.38 in part 2; kernels b and c x1.05 in both: the quotient
    # q = (a's ratio) / (b's and c's) is 1 / 1.05 in part 1 (-4.8 %) and 1.38 / 1.05 in part 2 (+31.4 %)
    data = []
    for kernel, mean, f_1, f_2 in (("a", 10.0, 1.0, 1.38), ("b", 20.0, 1.05, 1.05), ("c", 40.0, 1.05, 1.05)):
        base = scaled(BASE_6, mean / 100.0)
        data += part_rows("native", both_parts(base, 1.0, 1.0), kernel=kernel)
        data += part_rows("lxc", both_parts(base, f_1, f_2), kernel=kernel)
    check = {"kind": "ratio_of_overheads", "benchmark": "bench", "metric": "time", "platform": "lxc", "baseline": "native",
             "threshold": 0.05, "where": {"kernel": "a"}, "versus": {"where": {"kernel": ["b", "c"]}}}  # fmt: skip
    claim = {"id": "x-q", "paper": "x", "source": "s", "published": "p", "testable": True, "check": check}
    table = pd.DataFrame(data)
    pooled = claims.evaluate_claim(claim, table.assign(part=None))
    assert pooled["verdict"] == "holds"
    row = claims.evaluate_claim(claim, table)
    assert row["verdict"] == conditions.NOT_COMPARABLE
    assert "part 1 -4.8%, part 2 +31.4%" in row["note"] and "opposite sides of +5.0%" in row["note"]


def test_trend_drifts_between_parts():
    # lxc / native per process-count step: x0.9 a step in part 1 (improves 10 %), x1.2 in part 2 (worsens 20 %)
    data = []
    for i, procs in enumerate((1, 2, 4, 8)):
        data += part_rows("native", both_parts(BASE_6, 1.0, 1.0), procs=procs)
        data += part_rows("lxc", both_parts(BASE_6, 0.9**i, 1.2**i), procs=procs)
    check = {"kind": "trend", "benchmark": "bench", "metric": "time", "platform": "lxc", "baseline": "native",
             "over": "procs", "direction": "worsens"}
    claim = {"id": "x-t", "paper": "x", "source": "s", "published": "p", "testable": True, "check": check}
    table = pd.DataFrame(data)
    assert claims.evaluate_claim(claim, table.assign(part=None))["verdict"] == "holds"
    row = claims.evaluate_claim(claim, table)
    assert row["verdict"] == conditions.NOT_COMPARABLE and "part 1 -10.0%, part 2 +20.0%" in row["note"]


def test_saturation_drifts_between_parts():
    # throughput over message sizes: flat from 256 in part 1, from 1024 in part 2
    means = {1: (100.0, 400.0, 405.0, 408.0, 410.0), 2: (100.0, 400.0, 900.0, 905.0, 910.0)}
    data = []
    for j, size in enumerate((64, 256, 1024, 4096, 16384)):
        data += part_rows("lxc", {1: scaled(BASE_6[:3], means[1][j] / 100), 2: scaled(BASE_6 * 2, means[2][j] / 100)},
                          benchmark="netperf", metric="throughput", unit="Mbit/s", size=size)
    check = {"kind": "saturation", "benchmark": "netperf", "metric": "throughput", "platform": "lxc", "over": "size",
             "between": [512, 8192], "gain": 0.05}
    claim = {"id": "x-s", "paper": "x", "source": "s", "published": "p", "testable": True, "check": check,
             "paper_platform": "OpenVZ"}
    table = pd.DataFrame(data)
    pooled = claims.evaluate_claim(claim, table.assign(part=None))
    assert pooled["verdict"] == "holds" and pooled["value"] == 1024
    row = claims.evaluate_claim(claim, table)
    assert row["verdict"] == conditions.NOT_COMPARABLE and "part 1 256, part 2 1024" in row["note"]


def test_spread_drifts_between_parts():
    # lxc scatters less than native in part 1 (+-0.2 % against +-1 %), more in part 2 (+-5 %)
    native = part_rows("native", {1: BASE_6[:3] + BASE_6[3:], 2: BASE_6 * 2})
    tight = [100.0 + 0.2 * d for d in (-1, -0.6, -0.2, 0.2, 0.6, 1)]
    wide = [100.0 + 5.0 * d for d in (-1, -0.6, -0.2, 0.2, 0.6, 1)] * 2
    check = {"kind": "spread", "benchmark": "bench", "metric": "time", "platform": "lxc", "baseline": "native",
             "direction": "larger"}
    claim = {"id": "x-v", "paper": "x", "source": "s", "published": "p", "testable": True, "check": check}
    table = pd.DataFrame(native + part_rows("lxc", {1: tight, 2: wide}))
    assert claims.evaluate_claim(claim, table.assign(part=None))["verdict"] == "holds"
    row = claims.evaluate_claim(claim, table)
    assert row["verdict"] == conditions.NOT_COMPARABLE and "drift between parts" in row["note"]
