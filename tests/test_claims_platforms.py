"""What may stand for a paper's platform (QEMU TCG is not KVM), the faster-than-native guard, and the
verdicts as a table (data/tables/<testbed>.claims.csv)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from virtrepro.declarations import regimes, platform_names
from virtrepro.analysis import claims
from virtrepro import results
from test_claims import rows, scaled, spread, table

REPO = Path(__file__).resolve().parent.parent
NO_KVM = "no working KVM on this testbed (qemu-tcg is binary translation)"
# the papers' hypervisors that nothing on a TCG-only testbed may stand for
HYPERVISORS = ("KVM", "Xen", "Palacios")


def claim(paper_platform, kind="overhead_at_least", metric="throughput", **check):
    return {"id": "x-c", "paper": "x", "source": "s", "published": "p", "testable": True, "paper_platform": paper_platform,
            "check": {"kind": kind, "benchmark": "bench", "metric": metric, **check}}  # fmt: skip


NATIVE = rows("native", "bench", "throughput", "MB/s", spread(100, 1))
TCG = rows("qemu-tcg", "bench", "throughput", "MB/s", scaled(spread(100, 1), 0.1))  # 90 % less than native
KVM = rows("qemu-kvm", "bench", "throughput", "MB/s", scaled(spread(100, 1), 0.5))  # 50 % less


def test_a_kvm_claim_is_not_measured_from_tcg():
    data = table(NATIVE, TCG)
    for name in ("qemu-kvm", "qemu"):
        row = claims.evaluate_claim(claim("KVM", platform=name, baseline="native", threshold=0.3), data, guard=[])
        assert row["verdict"] == "not measured" and row["note"] == NO_KVM
        assert row["platforms"] == "qemu-kvm vs native" or name == "qemu"


def test_a_kvm_claim_gets_a_verdict_where_kvm_ran():
    data = table(NATIVE, TCG, KVM)
    for name in ("qemu-kvm", "qemu"):
        row = claims.evaluate_claim(claim("KVM", platform=name, baseline="native", threshold=0.3), data, guard=[])
        assert row["platforms"] == "qemu-kvm vs native"
        assert row["verdict"] == "holds" and row["value"] == pytest.approx(0.5)  # (100 - 50) / 100
        assert row["stand_in"] == "same"
    row = claims.evaluate_claim(claim("KVM", platform="qemu-kvm", baseline="native", threshold=0.6), data, guard=[])
    assert row["verdict"] == "does not hold"


def test_a_hand_made_claim_pairing_tcg_with_kvm_is_not_measured():
    # evaluate_claim without load_claims' check: the rule still refuses the stand-in
    row = claims.evaluate_claim(claim("KVM", platform="qemu-tcg", baseline="native", threshold=0.3), table(NATIVE, TCG), guard=[])
    assert row["verdict"] == "not measured" and row["note"] == NO_KVM
    for paper in ("Xen", "Palacios"):
        row = claims.evaluate_claim(claim(paper, platform="qemu-tcg", baseline="native", threshold=0.3), table(NATIVE, TCG), guard=[])
        assert row["verdict"] == "not measured" and paper in row["note"]


# the analogue table lets TCG stand for VMware Server on a network metric, one way: TCG is at worst
# slower (tests/test_claims_analogues.py)
NET = {"benchmark": "netperf"}
NET_NATIVE = rows("native", "netperf", "throughput", "Mbit/s", spread(100, 1))
NET_TCG = rows("qemu-tcg", "netperf", "throughput", "Mbit/s", scaled(spread(100, 1), 0.1))


def test_vmware_server_from_tcg_is_an_analogue_and_says_so():
    data = table(NET_NATIVE, NET_TCG)
    row = claims.evaluate_claim(claim("VMware Server", platform="qemu-tcg", baseline="native", threshold=0.5, **NET), data, guard=[])
    assert row["value"] == pytest.approx(0.9)
    # "VMware Server at least 50 % slower" holding with TCG is what TCG's slowness alone would give
    assert row["verdict"] == "not informative (analogue's bias)"
    assert "analogue" in row["note"] and "QEMU TCG (binary translation, no KVM)" in row["note"]
    row = claims.evaluate_claim(claim("VMware Server", platform="qemu-tcg", baseline="native", threshold=0.95, **NET), data, guard=[])
    assert row["verdict"] == "does not hold (analogue)"  # slower than VMware Server, and still not 95 % slower: counts
    row = claims.evaluate_claim(claim("VMware Server", "overhead_at_most", platform="qemu-tcg", baseline="native", threshold=0.95,
                                      **NET), data, guard=[])  # fmt: skip
    assert row["verdict"] == "holds (analogue)" and claims.base_verdict(row["verdict"]) == "holds"
    # on a metric the analogue table has no rule for, TCG does not stand in at all
    row = claims.evaluate_claim(claim("VMware Server", platform="qemu-tcg", baseline="native", threshold=0.5), table(NATIVE, TCG), guard=[])
    assert row["verdict"] == "not measured" and "has no rule for" in row["note"]


def test_order_claims_check_every_platform():
    data = table(rows("lxc", "bench", "throughput", "MB/s", spread(100, 1)), TCG)
    row = claims.evaluate_claim(claim(["LXC", "KVM"], kind="order", platforms=["lxc", "qemu"]), data, guard=[])
    assert row["verdict"] == "not measured" and row["note"] == NO_KVM
    data = table(rows("lxc", "netperf", "throughput", "Mbit/s", spread(100, 1)), NET_TCG)
    row = claims.evaluate_claim(claim(["OpenVZ", "VMware Server"], kind="order", platforms=["lxc", "qemu-tcg"], **NET), data, guard=[])
    # "OpenVZ beats VMware Server" holding with TCG for VMware Server: TCG's slowness could produce it
    assert row["verdict"] == "not informative (analogue's bias)" and row["paper_platform"] == "OpenVZ > VMware Server"


def write(tmp_path, entries):
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump(entries))
    return path


def test_load_claims_refuses_a_wrong_stand_in(tmp_path):
    ok = claim("KVM", platform="qemu-kvm", baseline="native", threshold=0.3)
    assert claims.load_claims(write(tmp_path, [ok]))
    for paper_platform, platform, message in (
        ("KVM", "qemu-tcg", "qemu-tcg may not stand for KVM"),
        ("Xen", "qemu-tcg", "qemu-tcg may not stand for Xen"),
        ("VMware Server", "qemu-kvm", "qemu-kvm may not stand for VMware Server"),
        ("Hyper-V", "qemu-kvm", "unknown paper platform"),
        (None, "qemu-kvm", "paper_platform missing"),
        (["KVM", "native", "LXC"], "qemu-kvm", "names 3 platforms"),
    ):
        bad = claim(paper_platform, platform=platform, baseline="native", threshold=0.3)
        with pytest.raises(ValueError, match=message):
            claims.load_claims(write(tmp_path, [bad]))


def test_the_claims_file_pairs_no_hypervisor_with_tcg():
    listed = claims.load_claims(REPO / "data" / "reference" / "claims.yaml")
    for c in listed:
        papers = claims.paper_platforms(c)
        assert all(p in platform_names.STAND_INS for p in papers), c["id"]
        if c["testable"]:
            pairs = dict(zip(claims.loading._check_platforms(c["check"]), papers))
            assert not any(p in HYPERVISORS and n == "qemu-tcg" for n, p in pairs.items()), c["id"]


def decided_from_tcg(frame: pd.DataFrame, verdict: str, platforms: str, paper: str, reason: str) -> pd.DataFrame:
    """Rows whose verdict is holds / does not hold, measured on qemu-tcg, for a KVM/Xen/Palacios claim,
    other than those the analogue table allows: TCG for KVM, against TCG's bias (tests/test_claims_analogues.py)."""
    base = frame[verdict].map(claims.base_verdict)
    measured_tcg = frame[platforms].fillna("").str.contains("qemu-tcg")
    hypervisor = frame[paper].fillna("").str.contains("|".join(HYPERVISORS))
    allowed = frame[reason].fillna("").str.contains("analogue rule tcg-for-hardware-vm") & frame[reason].fillna("").str.contains(
        "against the analogue's bias") & ~frame[paper].fillna("").str.contains("Xen|Palacios")
    return frame[base.isin(["holds", "does not hold"]) & measured_tcg & hypervisor & ~allowed]


@pytest.fixture(scope="module")
def reference_verdicts():
    listed = claims.load_claims(REPO / "data" / "reference" / "claims.yaml")
    return claims.evaluate(listed, results.load("reference-vm", REPO / "data"))


def test_no_hypervisor_claim_is_decided_from_tcg_on_the_reference_table(reference_verdicts):
    v = reference_verdicts
    assert decided_from_tcg(v, "verdict", "platforms", "paper_platform", "note").empty
    kvm = v[v["paper_platform"].str.contains("KVM") & (v["verdict"] != "not testable here")]
    # TCG stands in for KVM only by the analogue table's rule, which each such verdict names
    by_tcg = kvm["platforms"].fillna("").str.contains("qemu-tcg")
    judged = kvm[kvm["verdict"] != "not measured"]
    assert len(kvm) >= 20 and by_tcg.all() and judged["note"].str.contains("analogue rule tcg-for-hardware-vm").all()
    vmware = v[v["paper_platform"].str.contains("VMware Server") & v["platforms"].fillna("").str.contains("qemu-tcg")]
    decided = vmware[vmware["verdict"].map(claims.base_verdict).isin(["holds", "does not hold"])]
    assert decided["verdict"].str.endswith("(analogue)").all()
    # its CPU and MPI claims are not comparable by the analogue table's rule, its network ones by their conditions
    assert len(vmware) >= 8 and (vmware["verdict"] == "not comparable here").sum() >= 8
    on_cpu = vmware[vmware["benchmark"].isin(["npb_serial", "npb_omp", "npb_mpi"])]
    assert len(on_cpu) >= 6 and on_cpu["note"].str.contains(r"analogue rule tcg-for-vmware-server \((?:cpu|hpc): may not stand in\)").all()


def test_the_reference_table_with_kvm_decides_kvm_claims():
    """On a host where KVM works the same claims get verdicts: the reference runs relabelled qemu-kvm."""
    data = results.load("reference-vm", REPO / "data")
    data = data.assign(platform=data["platform"].replace({"qemu-tcg": "qemu-kvm"}))
    listed = [c for c in claims.load_claims(REPO / "data" / "reference" / "claims.yaml") if c["paper"] == "kudryavtsev2012"]
    v = claims.evaluate(listed, data)
    stream = v.set_index("id").loc["kudryavtsev2012-numa-kvm-overhead-1-5pct-stream"]
    # decided on the data (the committed sidecars lack cache sizes, so the cache rule may still withhold it),
    # never "not measured" as it is from qemu-tcg
    assert stream["platforms"] == "qemu-kvm vs native"
    assert stream["verdict"] in ("holds", "does not hold", "inconclusive", "not comparable here")


def test_the_committed_claims_csv():
    frame = pd.read_csv(REPO / "data" / "tables" / "reference-vm.claims.csv")
    assert list(frame.columns) == claims.TABLE_COLUMNS
    listed = claims.load_claims(REPO / "data" / "reference" / "claims.yaml")
    assert list(frame["claim_id"]) == [c["id"] for c in listed]
    assert decided_from_tcg(frame, "verdict", "platform_measured", "paper_platform", "reason").empty
    assert frame.loc[frame["verdict"] == "not measured", "platform_measured"].isna().all()
    unexplained = frame[frame["verdict"] == claims.UNEXPLAINED_FASTER]
    assert unexplained["suspect_faster_than_native"].all()
    # a decision has an interval, and says which method made it; "too few repetitions" where none
    # exists at the n (3 + 3 at 95 %), or below 5 a side for a trend or spread
    decided = frame[frame["verdict"].map(claims.base_verdict).isin(["holds", "does not hold"])]
    assert decided[["ci_low", "ci_high"]].notna().all().all() and decided["ci_method"].notna().all()
    assert not decided["ci_method"].isin(["none", "fieller", "delta-log", "bca"]).any()
    relative = frame["ci_method"].isin(["hl-moses", "bootstrap-hl"])
    assert ~frame.loc[relative, "reason"].str.contains("Shapiro").any()  # normality decides nothing
    too_few = frame.loc[frame["verdict"] == claims.TOO_FEW, "reason"]
    assert too_few.str.contains(r"too few repetitions for a 95% interval|\d+ repetitions on a side, fewer than 5").all()


# ------------------------------------------------------------------ the guard

LATENCY_NATIVE = rows("native", "net", "half_round_trip_latency", "us", spread(100, 1), size=1)


def latency(platform, values):
    return rows(platform, "net", "half_round_trip_latency", "us", values, size=1)


def test_the_guard_marks_a_guest_faster_than_native_beyond_its_interval():
    data = table(LATENCY_NATIVE, latency("lxc", scaled(spread(100, 1), 0.5)), latency("podman", scaled(spread(100, 1), 0.95)),
                 latency("qemu-kvm", spread(80, 40)))
    listed = claims.faster_than_native(data, causes=[])
    # lxc: (50 - 100) / 100 = -0.5, far beyond -10 %; podman -5 %: within; qemu-kvm: -20 % but its interval reaches past -10 %
    assert list(listed["platform"]) == ["lxc"]
    assert listed["estimate"].iloc[0] == pytest.approx(-0.5) and listed["ci_high"].iloc[0] < -0.1
    assert listed["variant"].iloc[0] == "size=1" and listed["cause"].iloc[0] == "unexplained"


def test_a_claim_on_marked_records_is_inconclusive_unless_explained():
    data = table(LATENCY_NATIVE, latency("lxc", scaled(spread(100, 1), 0.5)))
    c = claim("OpenVZ", kind="overhead_at_most", metric="half_round_trip_latency", platform="lxc", baseline="native", threshold=0.1)
    c["check"]["benchmark"] = "net"
    row = claims.evaluate(claims_list := [c], data, causes=[]).iloc[0]
    assert row["verdict"] == claims.UNEXPLAINED_FASTER and row["suspect_faster_than_native"]
    assert "unexplained" in row["note"]
    cause = {"platform": "lxc", "benchmark": "net", "where": {"size": 1}, "cause": "client and server on one CPU"}
    row = claims.evaluate(claims_list, data, causes=[cause]).iloc[0]
    assert row["verdict"] == "holds" and "client and server on one CPU" in row["note"] and row["suspect_faster_than_native"]
    for metrics, explained in (("half_round_trip_latency", True), (["throughput", "half_round_trip_latency"], True),
                               ("throughput", False), (["throughput"], False)):  # a metric, or a list of them
        verdict = claims.evaluate(claims_list, data, causes=[dict(cause, metric=metrics)]).iloc[0]["verdict"]
        assert (verdict == "holds") is explained and (verdict == claims.UNEXPLAINED_FASTER) is not explained
    other = dict(cause, where={"size": 2})  # a cause for another variant explains nothing here
    assert claims.evaluate(claims_list, data, causes=[other]).iloc[0]["verdict"] == claims.UNEXPLAINED_FASTER
    drift = dict(cause, cause="the host's disk drifted between the platforms' runs", confounded=True)
    row = claims.evaluate(claims_list, data, causes=[drift]).iloc[0]  # a confounded comparison decides nothing
    assert row["verdict"] == "inconclusive" and "drifted" in row["note"] and row["suspect_faster_than_native"]


def test_load_causes(tmp_path):
    assert claims.load_causes(REPO / "data" / "reference" / "faster_than_native.yaml") == [] or all(
        e["cause"] for e in claims.load_causes(REPO / "data" / "reference" / "faster_than_native.yaml"))
    bad = tmp_path / "causes.yaml"
    bad.write_text("- {platform: lxc, benchmark: netperf}\n")
    with pytest.raises(ValueError, match="cause"):
        claims.load_causes(bad)
    bad.write_text("- {platform: lxc, benchmark: netperf, cause: drift, confounded: 'no'}\n")
    with pytest.raises(ValueError, match="confounded"):
        claims.load_causes(bad)


def test_labels_name_tcg_for_what_it_is():
    assert platform_names.label("qemu-tcg") == "QEMU TCG (binary translation, no KVM)"
    assert platform_names.label("lxc") == "lxc"
    assert platform_names.paper_label("KVM") == "KVM (paper)"


def test_saved_figures_name_tcg_as_tcg(tmp_path):
    from virtrepro.report import plotting

    fig, ax = plotting.plt.subplots()
    ax.bar([0, 1], [1, 2], label="qemu-tcg")
    ax.plot([0, 1], [1, 1], label="qemu-tcg, 2 instances")
    ax.plot([0, 1], [2, 2], label="KVM (paper)")
    ax.set_xticks([0, 1], labels=["native", "qemu-tcg"])
    ax.legend()
    plotting.save(fig, tmp_path, "p", "f")
    tcg = "QEMU TCG (binary translation, no KVM)"
    assert sorted(t.get_text() for t in ax.get_legend().get_texts()) == sorted([tcg, f"{tcg}, 2 instances", "KVM (paper)"])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["native", "QEMU TCG\n(binary translation, no KVM)"]
    assert (tmp_path / "p" / "f.png").exists()
