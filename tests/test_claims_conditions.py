"""Claims judged under the conditions they were made in (virtrepro.analysis.conditions): records outside a
claim's conditions are left out, and a claim with none left (or too few process counts for a
scalability statement) is "not comparable here" with the reason, never holds or does not hold."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import table_row
from virtrepro.analysis import claims, conditions
from virtrepro import results

REPO = Path(__file__).resolve().parent.parent
# eight runs a side, far from every threshold used below: about 100 and about 101 (+1 %)
NATIVE = [99.0, 99.5, 100.0, 100.5, 101.0, 99.2, 100.8, 100.1]
CLOSE = [v * 1.01 for v in NATIVE]
SLOW = [v * 1.5 for v in NATIVE]  # +50 %


def runs(platform, benchmark, values, metric="time", unit="s", regime=None, labels=None, **params):
    """One record per value, each its own log, of the variant ``params`` (labels: the log's own fields)."""
    key = "_".join(f"{k}-{v}" for k, v in params.items()) or "default"
    return [table_row(params, testbed="t", platform=platform, benchmark=benchmark, repetition=i, metric=metric, unit=unit,
                      value=float(v), regime=regime, source_log=f"t/{platform}/{benchmark}/{key}/rep-{i}.log",
                      **(labels or {}))
            for i, v in enumerate(values)]  # fmt: skip


def frame(*groups) -> pd.DataFrame:
    return pd.DataFrame([r for g in groups for r in g])


def claim(given, kind="overhead_at_most", benchmark="npb_serial", metric="time", **check):
    c = {"id": "x-c", "paper": "x", "source": "Section 3", "published": "p", "testable": True, "paper_platform": "OpenVZ",
         "check": {"kind": kind, "benchmark": benchmark, "metric": metric, "platform": "lxc", "baseline": "native", **check}}
    if given is not None:
        c["conditions"] = given
    return c


def verdict(c, data):
    return claims.evaluate_claim(c, data, guard=[])


def test_a_claim_outside_its_npb_class_is_not_comparable():
    data = frame(runs("native", "npb_serial", NATIVE, kernel="cg", **{"class": "A"}),
                 runs("lxc", "npb_serial", CLOSE, kernel="cg", **{"class": "A"}))
    judged = verdict(claim(None, threshold=0.10), data)
    assert judged["verdict"] == "holds"  # the same records, no conditions: judged
    row = verdict(claim({"npb_class": ["B", "C"]}, threshold=0.10), data)
    assert row["verdict"] == "not comparable here"
    assert row["note"].startswith("outside the claim's conditions: lxc, native: NPB class A (the statement: class B, C)")
    assert row["value"] == pytest.approx(0.01)  # what was measured is still shown


def test_records_outside_the_conditions_are_left_out_of_the_comparison():
    # class A: +50 %, class C: +1 %; "at most 10 %" does not hold on both, holds on class C alone
    data = frame(runs("native", "npb_serial", NATIVE, kernel="cg", **{"class": "A"}),
                 runs("lxc", "npb_serial", SLOW, kernel="cg", **{"class": "A"}),
                 runs("native", "npb_serial", NATIVE, kernel="cg", **{"class": "C"}),
                 runs("lxc", "npb_serial", CLOSE, kernel="cg", **{"class": "C"}))
    assert verdict(claim(None, threshold=0.10), data)["verdict"] == "does not hold"
    row = verdict(claim({"npb_class": ["B", "C"]}, threshold=0.10), data)
    assert row["verdict"] == "holds" and row["variant"] in ("", "class=C, kernel=cg", "class=C")
    assert "16 of 32 records outside the claim's conditions left out (NPB class A" in row["note"]
    assert row["n_platform"] == 8 and row["n_baseline"] == 8


def test_min_processes_counts_what_the_log_says_ran():
    # the parser's threads label decides; the variant's parameter only where the log has none
    data = frame(runs("native", "npb_omp", NATIVE, kernel="cg", threads=2, labels={"threads": 2}, **{"class": "C"}),
                 runs("lxc", "npb_omp", CLOSE, kernel="cg", threads=2, labels={"threads": 2}, **{"class": "C"}))
    c = claim({"npb_class": ["C"], "min_processes": 8}, benchmark="npb_omp", threshold=0.10)
    row = verdict(c, data)
    assert row["verdict"] == "not comparable here" and "2 processes or threads (the statement: 8 or more)" in row["note"]
    c["conditions"]["min_processes"] = 2
    assert verdict(c, data)["verdict"] == "holds"


def test_a_network_claim_between_machines_is_not_comparable_on_one_host():
    # netperf's two instances share one host (benchmarks.network: instances on one host, no `across`)
    data = frame(runs("native", "netperf", NATIVE, metric="half_round_trip_latency", unit="us", test="TCP_RR", size=1),
                 runs("lxc", "netperf", CLOSE, metric="half_round_trip_latency", unit="us", test="TCP_RR", size=1))
    c = claim({"between_machines": True}, benchmark="netperf", metric="half_round_trip_latency", threshold=0.10)
    row = verdict(c, data)
    assert row["verdict"] == "not comparable here"
    assert "both ends on one machine, a virtual network path with no wire between them" in row["note"]
    del c["conditions"]
    assert verdict(c, data)["verdict"] == "holds"


def test_nodes_follow_the_benchmarks_own_declaration_of_the_hosts_a_run_held():
    # npb_mpi nodes=2 is two instances on one host unless the variant runs across hosts
    one_host = dict(kernel="ep", procs=2, nodes=2, **{"class": "C"})
    two_hosts = dict(one_host, across="hosts")
    c = claim({"nodes": 2}, benchmark="npb_mpi", threshold=0.10)
    data = frame(runs("native", "npb_mpi", NATIVE, **one_host), runs("lxc", "npb_mpi", CLOSE, **one_host))
    row = verdict(c, data)
    assert row["verdict"] == "not comparable here" and "runs on 1 machine(s) (the statement: 2 or more)" in row["note"]
    data = frame(runs("native", "npb_mpi", NATIVE, **two_hosts), runs("lxc", "npb_mpi", CLOSE, **two_hosts))
    assert verdict(c, data)["verdict"] == "holds"


def test_a_memory_claim_beyond_the_caches_is_not_comparable_on_cache_resident_records():
    def hpcc(platform, values, regime):
        return runs(platform, "hpcc", values, metric="single_stream_triad", unit="GB/s", regime=regime, n=1000)

    c = claim({"beyond_caches": True}, benchmark="hpcc", metric="single_stream_triad", threshold=0.10)
    row = verdict(c, frame(hpcc("native", NATIVE, "cpu-cache"), hpcc("lxc", NATIVE, "cpu-cache")))
    assert row["verdict"] == "not comparable here"
    assert "measured in the CPU caches (the statement: beyond the caches, on disk or in memory)" in row["note"]
    assert verdict(c, frame(hpcc("native", NATIVE, "memory"), hpcc("lxc", NATIVE, "memory")))["verdict"] == "holds"


def scaling_data(counts):
    """npb_mpi time per process count: native halves per doubling, lxc's overhead grows 5 % a step."""
    groups = []
    for step, procs in enumerate(counts):
        params = dict(kernel="cg", procs=procs, nodes=1, **{"class": "C"})
        base = [v / procs for v in NATIVE]
        groups += [runs("native", "npb_mpi", base, labels={"processes": procs}, **params),
                   runs("lxc", "npb_mpi", [v * (1 + 0.05 * step) for v in base], labels={"processes": procs}, **params)]
    return frame(*groups)


SCALES = claim({"scaling": {"counts": 3, "span": 4}}, kind="trend", benchmark="npb_mpi", over="procs", direction="worsens")


def test_a_scalability_claim_needs_three_process_counts_spanning_4x():
    row = verdict(SCALES, scaling_data([1, 2]))
    assert row["verdict"] == "not comparable here"
    assert "lxc, native: 2 process count(s) (1, 2) spanning 2x (a scalability statement needs 3 or more spanning 4x" in row["note"]
    # three counts spanning only 2x are not enough either
    assert verdict(SCALES, scaling_data([2, 3, 4]))["verdict"] == "not comparable here"
    # three spanning 4x: judged
    row = verdict(SCALES, scaling_data([1, 2, 4]))
    assert row["verdict"] == "holds" and "outside the claim's conditions" not in (row["note"] or "")


@pytest.mark.parametrize("given, message", [
    ({"npb_klass": ["C"]}, "unknown condition 'npb_klass'"),
    ({"npb_class": ["X"]}, "condition npb_class must be an NPB class"),
    ({"min_processes": 0}, "condition min_processes must be a whole number >= 1"),
    ({"between_machines": "yes"}, "condition between_machines must be true"),
    ({"scaling": {"counts": 3}}, "condition scaling must be {counts: >= 2, span: >= 1}"),
    ([], "conditions must be a mapping"),
])  # fmt: skip
def test_load_claims_refuses_unknown_or_malformed_conditions(tmp_path, given, message):
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump([claim(given, threshold=0.1)]))
    with pytest.raises(ValueError, match=message.replace("{", r"\{").replace("(", r"\(")):
        claims.load_claims(path)
    untestable = {"id": "x-u", "paper": "x", "paper_platform": "Xen", "testable": False, "reason": "r",
                  "conditions": {"nodes": 2}}
    path.write_text(yaml.safe_dump([untestable]))
    with pytest.raises(ValueError, match="conditions on an untestable claim"):
        claims.load_claims(path)


def check_the_vocabulary_is_the_one_the_claims_file_uses():
    listed = claims.load_claims(REPO / "data" / "reference" / "claims.yaml")
    used = {name for c in listed for name in (c.get("conditions") or {})}
    assert used <= set(conditions.CONDITIONS)
    assert {"npb_class", "min_processes", "scaling", "between_machines", "beyond_caches", "nodes"} <= set(conditions.CONDITIONS)
    # every scalability claim (a trend over process counts) states at least 3 counts spanning 4x
    for c in listed:
        if c.get("testable") and c["check"]["kind"] == "trend" and c["check"]["over"] == "procs":
            wanted = c["conditions"]["scaling"]
            assert wanted["counts"] >= 3 and wanted["span"] >= 4, c["id"]


def test_on_the_committed_reference_table_mpi_claims_on_one_host_are_not_comparable():
    """Walters' EP near native on up to 64 nodes: the reference run has class W on one host (1-2
    processes). Before conditions this claim held; now it is not comparable, with the reason."""
    check_the_vocabulary_is_the_one_the_claims_file_uses()
    listed = {c["id"]: c for c in claims.load_claims(REPO / "data" / "reference" / "claims.yaml")}
    data = results.load("reference-vm", REPO / "data")
    row = claims.evaluate_claim(listed["walters2008-npb-mpi-ep-near-native-openvz"], data, guard=[])
    assert row["verdict"] == "not comparable here"
    assert "NPB class W (the statement: class B, C)" in row["note"] and "runs on 1 machine(s)" in row["note"]
    committed = pd.read_csv(REPO / "data" / "tables" / "reference-vm.claims.csv").set_index("claim_id")
    assert committed.loc["walters2008-npb-mpi-ep-near-native-openvz", "verdict"] == "not comparable here"
    # no claim of the committed table that states conditions is decided outside them
    outside = committed["reason"].fillna("").str.startswith("outside the claim's conditions")
    assert (committed.loc[outside, "verdict"] == "not comparable here").all() and outside.sum() >= 30
