"""Analogues by rule (data/reference/analogues.yaml, virtrepro.declarations.platform_names / conditions): QEMU TCG
stands in for VMware Server on network and disk but not on CPU, and for KVM only one way: a verdict
counts only where TCG's bias (slower than KVM; disturbed less by a neighbour) works against it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import table_row
from virtrepro.analysis import claims, conditions
from virtrepro.declarations import platform_names

REPO = Path(__file__).resolve().parent.parent
RULE_KVM, RULE_VMWARE = "tcg-for-hardware-vm", "tcg-for-vmware-server"
BASE = [99.0, 99.5, 100.0, 100.5, 101.0, 99.2, 100.8, 100.1]  # eight runs about 100


def runs(platform, benchmark, metric, unit, factor, **params):
    key = "_".join(f"{k}-{v}" for k, v in params.items()) or "default"
    return [table_row(params, testbed="t", platform=platform, benchmark=benchmark, repetition=i, metric=metric, unit=unit,
                      value=v * factor, source_log=f"t/{platform}/{benchmark}/{key}/rep-{i}.log")
            for i, v in enumerate(BASE)]  # fmt: skip


def frame(*groups) -> pd.DataFrame:
    return pd.DataFrame([r for g in groups for r in g])


def claim(paper_platform, kind, benchmark, metric, **check):
    return {"id": "x-c", "paper": "x", "source": "s", "published": "p", "testable": True, "paper_platform": paper_platform,
            "check": {"kind": kind, "benchmark": benchmark, "metric": metric, **check}}  # fmt: skip


def verdict(c, data):
    return claims.evaluate_claim(c, data, guard=[])


def memory(platform, factor):  # sysbench memory throughput (subsystem memory), higher is better
    return runs(platform, "sysbench_memory", "throughput", "MiB/s", factor, oper="write")


def cpu(platform, factor):  # sysbench cpu events per second (subsystem cpu), higher is better
    return runs(platform, "sysbench_cpu", "events_per_second", "events/s", factor, threads=1)


def test_tcg_holding_a_vm_beats_containers_claim_holds():
    """TCG is slower than KVM at memory: if even TCG beats the container, KVM would."""
    data = frame(memory("qemu-tcg", 2.0), memory("lxc", 1.0))
    row = verdict(claim(["KVM", "LXC"], "order", "sysbench_memory", "throughput", platforms=["qemu-kvm", "lxc"]), data)
    assert row["platforms"] == "qemu-tcg > lxc (best first)" and row["stand_in"] == "analogue, same"
    assert row["verdict"] == "holds (analogue)"
    assert f"analogue rule {RULE_KVM} (memory: one way, it does worse than KVM)" in row["note"]
    assert "'holds' against the analogue's bias (worse than KVM): it counts" in row["note"]
    where_kvm_ran_tcg_stands_in_for_nothing()


def test_tcg_failing_a_vm_beats_containers_claim_is_not_informative():
    data = frame(memory("qemu-tcg", 0.2), memory("lxc", 1.0))
    row = verdict(claim(["KVM", "LXC"], "order", "sysbench_memory", "throughput", platforms=["qemu-kvm", "lxc"]), data)
    assert row["verdict"] == conditions.NOT_INFORMATIVE == "not informative (analogue's bias)"
    assert "'does not hold' is what the analogue's bias (worse than KVM) could produce" in row["note"]


def test_tcg_holding_a_containers_beat_the_vm_claim_is_not_informative():
    data = frame(cpu("lxc", 1.0), cpu("qemu-tcg", 0.1))
    row = verdict(claim(["LXC", "KVM"], "order", "sysbench_cpu", "events_per_second", platforms=["lxc", "qemu-kvm"]), data)
    assert row["verdict"] == "not informative (analogue's bias)"
    assert RULE_KVM in row["note"] and "says nothing about KVM" in row["note"]
    # the same with the alias qemu (KVM if it ran, else what the analogue table allows)
    row = verdict(claim(["LXC", "KVM"], "order", "sysbench_cpu", "events_per_second", platforms=["lxc", "qemu"]), data)
    assert row["verdict"] == "not informative (analogue's bias)"


def test_a_vm_is_slow_claim_counts_only_when_even_tcg_is_not_slow():
    c = claim("KVM", "overhead_at_least", "sysbench_cpu", "events_per_second", platform="qemu-kvm", baseline="native",
              threshold=0.10)
    assert verdict(c, frame(cpu("native", 1.0), cpu("qemu-tcg", 0.1)))["verdict"] == "not informative (analogue's bias)"
    row = verdict(c, frame(cpu("native", 1.0), cpu("qemu-tcg", 1.0)))  # TCG no slower: KVM would not be either
    assert row["verdict"] == "does not hold (analogue)" and "'does not hold' against the analogue's bias" in row["note"]


def where_kvm_ran_tcg_stands_in_for_nothing():
    data = frame(cpu("native", 1.0), cpu("qemu-kvm", 0.95), cpu("qemu-tcg", 0.1))
    c = claim("KVM", "overhead_at_most", "sysbench_cpu", "events_per_second", platform="qemu-kvm", baseline="native",
              threshold=0.10)
    row = verdict(c, data)
    assert row["platforms"] == "qemu-kvm vs native" and row["stand_in"] == "same" and row["verdict"] == "holds"
    assert "analogue" not in row["note"]


def test_isolation_bias_runs_the_other_way():
    """A translated victim is disturbed less by a neighbour: 'the VM isolates better' holding with TCG
    is not informative, its failing is (isolation_efficiency: beside a neighbour / alone)."""
    def isolation(platform, alone, stressed):
        return [*runs(platform, "isolation", "bw", "KiB/s", alone, resource="disk", neighbour="none"),
                *runs(platform, "isolation", "bw", "KiB/s", stressed, resource="disk", neighbour="stress")]

    c = claim(["KVM", "LXC"], "order", "isolation", "isolation_efficiency", victim_metric="bw", platforms=["qemu-kvm", "lxc"],
              where={"resource": "disk"})
    row = verdict(c, frame(isolation("qemu-tcg", 0.4, 0.32), isolation("lxc", 1.0, 0.4)))  # 0.8 against 0.4
    assert row["verdict"] == "not informative (analogue's bias)" and "(isolation.disk: one way, it does better than KVM)" in row["note"]
    row = verdict(c, frame(isolation("qemu-tcg", 0.4, 0.12), isolation("lxc", 1.0, 0.8)))  # 0.3 against 0.8
    assert row["verdict"] == "does not hold (analogue)"


def test_a_shape_claim_is_not_informed_by_a_one_way_analogue():
    # TCG's overhead grows 50 % a step: "worsens" holds on TCG, whose slowness says nothing of KVM's slope
    groups = [runs(p, "npb_mpi", "time", "s", f * (1 + 0.5 * step if p == "qemu-tcg" else 1) / procs, kernel="cg", procs=procs)
              for step, procs in enumerate((1, 2, 4)) for p, f in (("native", 1.0), ("qemu-tcg", 10.0))]
    c = claim("KVM", "trend", "npb_mpi", "time", platform="qemu-kvm", baseline="native", over="procs", direction="worsens")
    row = verdict(c, frame(*groups))
    assert row["verdict"] == "not informative (analogue's bias)" and "'holds' is what the analogue's bias" in row["note"]


def test_tcg_for_vmware_server_is_not_comparable_on_cpu():
    c = claim("VMware Server", "overhead_at_most", "sysbench_cpu", "events_per_second", platform="qemu-tcg",
              baseline="native", threshold=0.10)
    row = verdict(c, frame(cpu("native", 1.0), cpu("qemu-tcg", 0.1)))
    assert row["verdict"] == "not comparable here"
    assert f"analogue rule {RULE_VMWARE} (cpu: may not stand in): VMware Server ran guest user code directly" in row["note"]
    assert row["value"] == pytest.approx(0.9)  # what TCG measured, shown, deciding nothing


def test_tcg_for_vmware_server_is_one_way_worse_on_network():
    def bandwidth(platform, factor):
        return runs(platform, "netperf", "throughput", "Mbit/s", factor, test="TCP_STREAM", size=65536)

    c = claim("VMware Server", "overhead_at_least", "netperf", "throughput", platform="qemu-tcg", baseline="native",
              threshold=0.50)
    row = verdict(c, frame(bandwidth("native", 1.0), bandwidth("qemu-tcg", 0.26)))
    # "VMware Server at least 50 % slower" holding with TCG, which is at worst slower: not informative
    assert row["verdict"] == "not informative (analogue's bias)"
    assert f"analogue rule {RULE_VMWARE} (network: one way, it does worse than VMware Server)" in row["note"]
    row = verdict({**c, "check": {**c["check"], "threshold": 0.9}}, frame(bandwidth("native", 1.0), bandwidth("qemu-tcg", 0.26)))
    assert row["verdict"] == "does not hold (analogue)"


def test_the_table_is_read_and_checked(tmp_path):
    assert platform_names.analogue_rule("KVM", "qemu-tcg", "memory") == {
        "rule": RULE_KVM, "subsystem": "memory", "use": "one-way", "bias": "worse",
        "why": "every guest memory access goes through TCG's software MMU"}
    assert platform_names.analogue_rule("VMware Server", "qemu-tcg", "cpu")["use"] == "no"
    assert platform_names.analogue_rule("Xen", "qemu-tcg", "cpu") is None
    # a two-way rule makes an analogue stand-in (figures may draw the paper beside it); one-way ones do not
    assert platform_names.stand_in("VMware Server", "qemu-tcg") == platform_names.ANALOGUE
    assert platform_names.stand_in("KVM", "qemu-tcg") is None
    good = {"paper_platform": "KVM", "stand_in": "qemu-tcg", "rule": "r", "why": "w",
            "subsystems": {"cpu": {"use": "one-way", "bias": "worse", "why": "w"}}}
    path = tmp_path / "analogues.yaml"
    for change, message in (({"stand_in": "qemu-xen"}, "not a declared platform"),
                            ({"stand_in": "qemu-kvm"}, "declared the same as KVM"),
                            ({"subsystems": {"gpu": {"use": "no", "why": "w"}}}, "not a subsystem"),
                            ({"subsystems": {"cpu": {"use": "one-way", "why": "w"}}}, "needs bias worse or better"),
                            ({"subsystems": {"cpu": {"use": "maybe", "why": "w"}}}, "needs use"),
                            ({"rule": ""}, "lacks rule")):
        path.write_text(yaml.safe_dump([{**good, **change}]))
        with pytest.raises(platform_names.AnalogueTableError, match=message):
            platform_names.load_analogues(path)
    path.write_text(yaml.safe_dump([good]))
    assert platform_names.load_analogues(path)[("KVM", "qemu-tcg")]["rule"] == "r"


def test_the_committed_claims_table_names_the_rules():
    committed = pd.read_csv(REPO / "data" / "tables" / "reference-vm.claims.csv").set_index("claim_id")
    boot = committed.loc["kumar2013-lifecycle-containers-boot-several-times-faster"]
    assert boot["platform_measured"] == "lxc vs qemu-tcg" and boot["verdict"] == "not informative (analogue's bias)"
    assert RULE_KVM in boot["reason"]
    assert committed.loc["walters2008-npb-serial-vmware-is-over-10pct", "verdict"] == "not comparable here"
    # every verdict from TCG standing in for KVM names its rule; a decided one says it went against the bias
    kvm_by_tcg = committed[committed["paper_platform"].str.contains("KVM")
                           & committed["platform_measured"].fillna("").str.contains("qemu-tcg")]
    assert len(kvm_by_tcg) >= 10 and kvm_by_tcg["reason"].str.contains(RULE_KVM).all()
    decided = kvm_by_tcg[kvm_by_tcg["verdict"].map(claims.base_verdict).isin(["holds", "does not hold"])]
    assert decided["reason"].str.contains("against the analogue's bias").all()
