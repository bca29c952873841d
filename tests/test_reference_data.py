"""The published reference data (data/reference/*.csv) and the claims table (claims.yaml).

The papers themselves are not part of the repository, so these tests check the files' shape and
the values the papers are known to state; that every quote occurs in its paper was checked once
against the paper texts when the files were written.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest
import yaml

REFERENCE = Path(__file__).resolve().parent.parent / "data" / "reference"
PAPERS = ("walters2008", "regola2010", "youseff2006", "kudryavtsev2012", "kumar2013")
CSV_FILES = ("walters2008", "regola2010_text", "youseff2006", "kudryavtsev2012", "kumar2013")
COLUMNS = ["paper", "source", "platform_in_paper", "benchmark", "metric", "unit", "parameters", "value", "available", "quote", "note"]

# Our benchmarks and the metrics their parsers emit (the ones claims may name).
METRICS = {
    "sysbench_cpu": {"events_per_second", "total_time", "total_events", "latency_avg", "latency_max"},
    "sysbench_memory": {"operations_per_second", "throughput", "total_time", "latency_avg"},
    "sysbench_fileio": {"reads_per_second", "writes_per_second", "fsyncs_per_second", "read_throughput", "write_throughput"},
    "mbw": {"copy_bandwidth_avg", "elapsed_avg", "copy_bandwidth", "elapsed"},
    "ioping": {"iops", "bandwidth", "latency_min", "latency_avg", "latency_max", "latency_mdev"},
    "iozone": {"write", "rewrite", "read", "reread", "random_read", "random_write"},
    "iozone_disk": {"write", "rewrite", "read", "reread", "random_read", "random_write"},
    "netperf": {"transaction_rate", "round_trip_latency", "half_round_trip_latency", "throughput"},
    "iperf3": {"throughput", "cpu_utilization_host"},
    "lifecycle": {"provision", "boot", "reboot", "clone", "destroy"},
    "bonnie": {"putc", "put_block", "rewrite", "getc", "get_block", "seeks"},
    "hpcc": {
        "hpl_tflops", "hpl_gflops", "hpl_time", "star_random_access", "single_random_access", "mpi_random_access",
        "star_stream_copy", "star_stream_triad", "single_stream_copy", "single_stream_triad",
        "min_ping_pong_latency", "avg_ping_pong_latency", "max_ping_pong_bandwidth",
    },
    "npb_serial": {"time", "mops_total"},
    "npb_omp": {"time", "mops_total", "mops_per_thread"},
    "npb_mpi": {"time", "mops_total", "mops_per_process"},
    "stress_ng": {"bogo_ops", "bogo_ops_per_second_real", "bogo_ops_per_second_usr_sys", "memory_read_rate", "memory_write_rate"},
    "fio": {"bw", "iops", "runtime", "io"},
    "dd": {"throughput"},
    "isolation": {"events_per_second", "throughput", "bw"},  # the victim's metric (victim_metric)
}
DERIVED = {"parallel_speedup", "isolation_efficiency"}  # computed from other records; the claim must say how (`derived`)
PLATFORMS = {"native", "lxc", "podman", "qemu", "qemu-kvm", "qemu-tcg"}
PAIR_KINDS = {"overhead_at_most", "overhead_at_least", "equivalent", "better", "better_in_some", "ratio_of_overheads"}
SHAPE_KINDS = {"trend", "spread", "saturation"}
KINDS = PAIR_KINDS | {"order"} | SHAPE_KINDS


def load_csv(name: str) -> tuple[list[str], list[dict]]:
    with (REFERENCE / f"{name}.csv").open(newline="") as f:
        reader = csv.DictReader(f)
        return reader.fieldnames, list(reader)


@pytest.fixture(scope="module")
def claims() -> list[dict]:
    data = yaml.safe_load((REFERENCE / "claims.yaml").read_text())
    assert isinstance(data, list) and data, "claims.yaml must be a non-empty YAML list"
    return data


def rows(name: str) -> list[dict]:
    return load_csv(name)[1]


def find(name: str, **match) -> list[dict]:
    return [r for r in rows(name) if all(r[k] == v for k, v in match.items())]


# ------------------------------------------------------------------ CSV files

@pytest.mark.parametrize("name", CSV_FILES)
def test_csv_has_exactly_the_columns(name):
    header, data = load_csv(name)
    assert header == COLUMNS
    assert data, f"{name}.csv has no rows"
    for row in data:
        assert None not in row and all(v is not None for v in row.values()), f"{name}.csv: row with a wrong field count: {row}"


@pytest.mark.parametrize("name", CSV_FILES)
def test_csv_rows_are_consistent(name):
    paper = name.removesuffix("_text")
    for row in rows(name):
        where = f"{name}.csv {row['source']} {row['platform_in_paper']} {row['metric']}"
        assert row["paper"] == paper, where
        assert row["available"] in ("true", "false"), where
        assert row["source"].strip() and row["benchmark"].strip() and row["metric"].strip(), where
        assert row["quote"].strip(), f"{where}: empty quote"
        if row["available"] == "true":
            value = float(row["value"])  # raises on a non-number
            assert math.isfinite(value), where
        else:
            assert row["value"] == "", f"{where}: an unavailable row must have no value"
        if row["parameters"]:
            for pair in row["parameters"].split(";"):
                key, sep, value = pair.partition("=")
                assert sep and key and value, f"{where}: parameter {pair!r} is not key=value"


def test_regola_tables_file_is_unchanged_in_shape():
    header, data = load_csv("regola2010")
    assert header == ["paper", "source", "platform_in_paper", "disk_format", "cache", "benchmark", "metric", "unit", "value", "quote", "note"]
    assert len(data) == 52  # Table I (2 rows x 4 columns) + Table II (11 rows x 4 columns)


def test_every_paper_has_reference_rows():
    for name in CSV_FILES:
        assert rows(name)
    for name in ("walters2008", "regola2010_text", "youseff2006", "kudryavtsev2012"):
        assert any(r["available"] == "true" for r in rows(name)), name


def test_kumar_rows_are_figures_and_tables_without_values():
    data = rows("kumar2013")
    assert data and all(r["available"] == "false" and r["value"] == "" for r in data)
    sources = {r["source"] for r in data}
    assert {"Table 5.1", "Table 5.2", "Table 5.3", "Fig. 4.1", "Fig. 4.11"} <= sources


# ------------------------------------------------------------------ the issue's examples, exact values

@pytest.mark.parametrize(
    "platform, value",
    [("native", "80.0"), ("OpenVZ", "84.62"), ("Xen", "159.89")],
)
def test_walters_one_byte_latency(platform, value):
    hits = find("walters2008", platform_in_paper=platform, benchmark="netperf", metric="half_round_trip_latency", unit="us")
    assert [r["value"] for r in hits] == [value]
    assert "size=1" in hits[0]["parameters"].split(";") and "test=TCP_RR" in hits[0]["parameters"].split(";")
    assert value in hits[0]["quote"]


@pytest.mark.parametrize(
    "platform, value",
    [("Xen", "94.5"), ("OpenVZ", "35.3"), ("VMWare Server", "25.9")],
)
def test_walters_bandwidth_share_of_native(platform, value):
    hits = find("walters2008", platform_in_paper=platform, benchmark="netperf", metric="throughput", unit="%")
    assert [r["value"] for r in hits] == [value]
    assert "relative=of_baseline" in hits[0]["parameters"]


def test_walters_latency_difference():
    hits = find("walters2008", platform_in_paper="OpenVZ", metric="half_round_trip_latency", unit="%")
    assert [r["value"] for r in hits] == ["5.8"]


@pytest.mark.parametrize(
    "platform, value",
    [("native", "6.35"), ("OpenVZ", "5.38"), ("KVM", "4.33"), ("Xen", "4.43"), ("EC2", "4.74")],
)
def test_regola_openmp_speedups(platform, value):
    hits = find("regola2010_text", platform_in_paper=platform, benchmark="npb_omp", metric="parallel_speedup")
    assert [r["value"] for r in hits] == [value]


def test_youseff_stream_and_bonnie_ranges():
    stream = find("youseff2006", platform_in_paper="Xen", metric="single_stream", unit="%")
    assert sorted(float(r["value"]) for r in stream) == [1.0, 2.0]
    bonnie = find("youseff2006", platform_in_paper="Xen", benchmark="bonnie", metric="get_block", unit="%")
    assert sorted(float(r["value"]) for r in bonnie) == [11.0, 17.0]
    assert {p for r in bonnie for p in r["parameters"].split(";") if p.startswith("bound=")} == {"bound=range_low", "bound=range_high"}


def test_kudryavtsev_numa_ranges():
    hits = find("kudryavtsev2012", benchmark="hpcc_npb", platform_in_paper="KVM and Palacios")
    by_numa = {}
    for r in hits:
        numa = next(p for p in r["parameters"].split(";") if p.startswith("numa="))
        by_numa.setdefault(numa, set()).add(float(r["value"]))
    assert by_numa == {"numa=false": {10.0, 60.0}, "numa=true": {1.0, 5.0}}


def test_regola_network_numbers():
    data = rows("regola2010_text")
    values = {(r["platform_in_paper"], r["metric"], r["unit"], r["value"]) for r in data}
    for expected in [
        ("KVM (virtio)", "performance", "%", "8.3"),
        ("OpenVZ", "performance", "%", "89.2"),
        ("KVM", "throughput", "%", "55"),
        ("OpenVZ", "throughput", "%", "99.99"),
        ("OpenVZ", "throughput", "Mbit/s", "941"),
    ]:
        assert expected in values


ALL_CSV = (*CSV_FILES, "regola2010")


@pytest.mark.parametrize("name", ALL_CSV)
def test_every_csv_ends_with_a_note_column(name):
    header, _ = load_csv(name)
    assert header[-1] == "note"


@pytest.mark.parametrize("name", ALL_CSV)
def test_values_are_read_as_the_text_in_the_file(name):
    """A value is the printed text (``80.0``, ``11.40``), not a float: read with ``dtype=str`` (as
    code that needs the printed text must read them), every value equals the text of its field in the
    file (the csv module's reading of each line)."""
    import pandas as pd

    frame = pd.read_csv(REFERENCE / f"{name}.csv", dtype=str, keep_default_na=False)
    lines = (REFERENCE / f"{name}.csv").read_text().splitlines()[1:]
    assert len(frame) == len(lines)
    position = frame.columns.get_loc("value")
    for value, line in zip(frame["value"], lines):
        assert isinstance(value, str)
        assert next(csv.reader([line]))[position] == value, line[:120]


@pytest.mark.parametrize("name", ALL_CSV)
def test_every_value_is_printed_in_its_quote_or_noted(name):
    """Numbers as printed: each value occurs verbatim in its quote, or the row's note says why not
    (a number printed as words, ...)."""
    for row in rows(name):
        if row["value"] and row["value"] not in row["quote"]:
            assert row["note"].strip(), f"{name}.csv {row['source']} {row['platform_in_paper']}: {row['value']!r} not in the quote, no note"


def test_inferred_and_contradicted_numbers_carry_a_note():
    kud = rows("kudryavtsev2012")
    for row in kud:
        if "procs=" in row["parameters"] or "apps=pop2" in row["parameters"]:
            assert "inferred" in row["note"] or "other three tests" in row["note"], row
    assert "43" in find("kudryavtsev2012", source="Section 5 (Conclusion)", benchmark="spec_mpi2007", value="45")[0]["note"]
    assert "100" in find("regola2010_text", value="99.99", unit="%")[0]["note"]
    assert "99.99" in find("regola2010_text", source="Section VI", value="100")[0]["note"]
    assert all("vmrk" in r["note"] for r in find("regola2010", disk_format="vmdk"))


def test_regola_latency_shares_are_shares_of_performance():
    """"KVM ... 8.3 % of native performance, OpenVZ ... 89.2 %" is a share of performance
    (higher is better): as an overhead, OpenVZ is 10.8 % worse than native, not 10.8 % faster."""
    from virtrepro.analysis.claims import higher_is_better

    for platform, value, overhead in (("OpenVZ", "89.2", 10.8), ("KVM (virtio)", "8.3", 91.7)):
        (row,) = find("regola2010_text", platform_in_paper=platform, value=value)
        params = dict(p.split("=", 1) for p in row["parameters"].split(";"))
        assert params["relative"] == "of_baseline" and params["baseline"] == "native"
        assert higher_is_better(row["metric"], row["unit"]) is True
        # a share of a higher-is-better quantity: overhead = 100 - share (positive = worse)
        assert 100 - float(row["value"]) == pytest.approx(overhead)


@pytest.mark.parametrize("name", CSV_FILES)
def test_shares_of_performance_are_on_higher_is_better_metrics(name):
    """A "% of native performance" row names a metric where more is better: a share of a latency
    or a time read as a share of performance would flip its sign."""
    from virtrepro.analysis.claims import higher_is_better

    for row in rows(name):
        if "relative=of_baseline" in row["parameters"] and "of native performance" in row["quote"] and row["available"] == "true":
            assert higher_is_better(row["metric"], row["unit"]), f"{name}.csv {row['platform_in_paper']} {row['metric']}"


# ------------------------------------------------------------------ claims.yaml

REQUIRED = ("id", "paper", "source", "quote", "published", "testable")


def test_claims_have_the_required_fields(claims):
    for claim in claims:
        missing = [k for k in REQUIRED if k not in claim]
        assert not missing, f"{claim.get('id')}: missing {missing}"
        assert claim["paper"] in PAPERS, claim["id"]
        assert isinstance(claim["testable"], bool), claim["id"]
        for key in ("source", "quote", "published"):
            assert isinstance(claim[key], str) and claim[key].strip(), f"{claim['id']}: empty {key}"


def test_claim_ids_are_unique_and_start_with_their_paper(claims):
    ids = [c["id"] for c in claims]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    for claim in claims:
        assert claim["id"].startswith(claim["paper"] + "-"), claim["id"]
        assert claim["id"] == claim["id"].lower() and " " not in claim["id"], claim["id"]


def test_each_paper_has_claims(claims):
    for paper in PAPERS:
        assert any(c["paper"] == paper for c in claims), paper
    # Walters, Regola, Kudryavtsev and Kumar compare platforms we run.
    for paper in ("walters2008", "regola2010", "kudryavtsev2012", "kumar2013"):
        assert any(c["paper"] == paper and c["testable"] for c in claims), paper


def test_untestable_claims_give_a_reason(claims):
    for claim in claims:
        if not claim["testable"]:
            reason = claim.get("reason")
            assert isinstance(reason, str) and reason.strip(), f"{claim['id']}: no reason"
            assert "\n" not in reason.strip(), f"{claim['id']}: reason must be one line"
            assert "check" not in claim, f"{claim['id']}: an untestable claim has no check"


def test_testable_claims_have_a_complete_check(claims):
    for claim in claims:
        if not claim["testable"]:
            continue
        cid = claim["id"]
        check = claim.get("check")
        assert isinstance(check, dict), f"{cid}: no check"
        assert check.get("kind") in KINDS, f"{cid}: unknown kind {check.get('kind')!r}"
        benchmark, metric = check.get("benchmark"), check.get("metric")
        assert benchmark in METRICS, f"{cid}: unknown benchmark {benchmark!r}"
        if metric in DERIVED:
            assert isinstance(check.get("derived"), str) and check["derived"].strip(), f"{cid}: derived metric without 'derived'"
            if metric == "isolation_efficiency":
                assert check.get("victim_metric") in METRICS[benchmark], f"{cid}: victim_metric {check.get('victim_metric')!r}"
        else:
            assert metric in METRICS[benchmark], f"{cid}: {benchmark} has no metric {metric!r}"
        if "where" in check:
            assert isinstance(check["where"], dict) and check["where"], f"{cid}: where must be a non-empty mapping"
        if "aggregate" in check:
            assert check["aggregate"] == "mean", f"{cid}: unknown aggregate {check['aggregate']!r}"
        if check["kind"] == "order":
            platforms = check.get("platforms")
            assert isinstance(platforms, list) and len(platforms) >= 2, f"{cid}: order needs platforms"
            assert set(platforms) <= PLATFORMS and len(set(platforms)) == len(platforms), cid
            assert "platform" not in check and "baseline" not in check, cid
        elif check["kind"] in SHAPE_KINDS:
            assert check.get("platform") in PLATFORMS, f"{cid}: platform {check.get('platform')!r}"
            assert check.get("baseline", "native") in PLATFORMS and check.get("baseline") != check["platform"], cid
            if check["kind"] == "trend":
                assert check.get("over") and check.get("direction") in ("worsens", "improves", "flat"), cid
                assert (check["direction"] == "flat") == ("threshold" in check), f"{cid}: a flat trend, and only it, has a threshold"
            if check["kind"] == "spread":
                assert check.get("baseline") and check.get("direction") in ("larger", "smaller"), cid
            if check["kind"] == "saturation":
                low, high = check["between"]
                assert check.get("over") and 0 < low < high and 0 < check["gain"] < 1 and "baseline" not in check, cid
        else:
            assert check.get("platform") in PLATFORMS, f"{cid}: platform {check.get('platform')!r}"
            assert check.get("baseline") in PLATFORMS, f"{cid}: baseline {check.get('baseline')!r}"
            assert check["platform"] != check["baseline"], cid
            threshold = check.get("threshold")
            assert isinstance(threshold, (int, float)) and not isinstance(threshold, bool), f"{cid}: threshold"
            assert threshold >= 0, cid
            if check["kind"] in ("overhead_at_most", "equivalent"):
                assert threshold > 0, f"{cid}: {check['kind']} needs a positive threshold"
            if check["kind"] == "ratio_of_overheads":
                versus = check.get("versus")
                assert isinstance(versus, dict) and set(versus) <= {"benchmark", "metric", "where"}, f"{cid}: versus"
                other = {**check, **versus}
                assert other["metric"] in METRICS[other["benchmark"]], f"{cid}: versus metric"
                first, second = check.get("where") or {}, versus.get("where") or {}
                assert other["benchmark"] != benchmark or any(  # the two selections share no records
                    set(map(str, first[k] if isinstance(first[k], list) else [first[k]]))
                    .isdisjoint(map(str, second[k] if isinstance(second[k], list) else [second[k]]))
                    for k in set(first) & set(second)), f"{cid}: the two selections overlap"  # fmt: skip


def test_untestable_platforms_are_never_checked(claims):
    """Xen, Palacios, EC2 and InfiniBand have no stand-in: no check may name them."""
    for claim in claims:
        check = claim.get("check", {})
        names = {check.get("platform"), check.get("baseline"), *check.get("platforms", [])} - {None}
        assert names <= PLATFORMS, claim["id"]


def test_claims_named_in_the_issue_are_present(claims):
    by_id = {c["id"]: c for c in claims}
    latency = by_id["walters2008-netperf-latency-openvz-close-to-native"]
    assert latency["testable"] and latency["check"]["kind"] == "overhead_at_most"
    assert latency["check"]["platform"] == "lxc" and latency["check"]["baseline"] == "native"
    assert latency["check"]["where"] == {"test": "TCP_RR", "size": 1}
    assert "84.62" in latency["quote"] and "80.0" in latency["quote"]
    assert by_id["walters2008-netperf-latency-xen-twice-native"]["testable"] is False
    boot = by_id["kumar2013-lifecycle-containers-boot-several-times-faster"]
    assert boot["check"]["kind"] == "better" and boot["check"]["baseline"] == "qemu-kvm"
    assert by_id["kumar2013-memory-kvm-least-overhead"]["check"]["platforms"] == ["qemu-kvm", "lxc"]
    assert any(c["paper"] == "kudryavtsev2012" and c["testable"] and c["check"]["benchmark"] in ("npb_mpi", "hpcc") for c in claims)


def test_abstract_and_conclusion_claims_are_present(claims):
    """Each paper's abstract and conclusion are in claims.yaml, claim by claim (the ones the issue
    names, and at least one claim from each paper's abstract or conclusion)."""
    by_id = {c["id"]: c for c in claims}
    for paper in PAPERS:
        assert any(c["paper"] == paper and ("Abstract" in c["source"] or "Conclusion" in c["source"] or c["source"] in ("Section VII", "Section 7"))
                   for c in claims), paper  # fmt: skip
    assert by_id["regola2010-abstract-kvm-io-suboptimal"]["testable"]
    assert "cause" in by_id["walters2008-conclusion-latency-limits-mpi-scalability"]["reason"]
    assert by_id["kudryavtsev2012-vm-run-times-more-scattered"]["check"]["kind"] == "spread"


def test_claims_are_no_stronger_than_the_paper(claims):
    by_id = {c["id"]: c for c in claims}
    # "largely follows": the geometric mean, not every kernel and process count
    assert by_id["walters2008-npb-mpi-openvz-follows-native"]["check"].get("aggregate") == "mean"
    # an anomaly the paper puts down to "unaccounted factors" is not a claim about KVM
    anomaly = by_id["kudryavtsev2012-kvm-numa-faster-than-native-cg-mg"]
    assert anomaly["testable"] is False and "unaccounted factors" in anomaly["reason"]
    # the NUMA gains were STREAM and RandomAccess, not HPL
    assert "kudryavtsev2012-numa-kvm-overhead-1-5pct-hpl" not in by_id
    assert {by_id[f"kudryavtsev2012-numa-kvm-overhead-1-5pct-{m}"]["check"]["metric"] for m in ("stream", "randomaccess")} == {
        "single_stream_triad", "single_random_access"}


def test_claims_that_name_xen_in_the_reason_are_untestable(claims):
    for claim in claims:
        if "Xen is not available" in claim.get("reason", ""):
            assert claim["testable"] is False


# ------------------------------------------------------------------ how many comparative statements

# Entries that compare no platforms: a summary of other claims, a cause, a recommendation, a prediction.
NOT_COMPARISONS = {
    "walters2008-conclusion-none-match-native",  # a summary over every benchmark (its parts are claims)
    "walters2008-conclusion-latency-limits-mpi-scalability",  # a cause
    "kumar2013-no-single-best-platform",  # a summary of the other conclusions
    "kumar2013-containers-for-dynamic-infrastructure",  # a recommendation
    "kudryavtsev2012-conclusion-virtualization-noise-crucial",  # a prediction
    "youseff2006-gcm-xen-chaos-difference-from-disk-io",  # a cause
}


def comparative_statements(claims) -> dict:
    """The comparative statements of claims.yaml (data/reference/README.md, "Counting the statements"):
    one per entry, entries that differ only in the check's stand-in platform (the podman copies)
    counted once, the entries of NOT_COMPARISONS not at all. Key -> the first such entry."""
    out = {}
    for claim in claims:
        if claim["id"] in NOT_COMPARISONS:
            continue
        check = {k: v for k, v in (claim.get("check") or {}).items() if k not in ("platform", "platforms")}
        out.setdefault(json.dumps([claim["paper"], claim["quote"], claim["paper_platform"], check], sort_keys=True), claim)
    return out


def test_claims_hold_at_least_110_comparative_statements(claims):
    ids = {c["id"] for c in claims}
    assert NOT_COMPARISONS <= ids, NOT_COMPARISONS - ids
    statements = comparative_statements(claims)
    sentences = {(c["paper"], c["quote"]) for c in statements.values()}
    assert len(statements) >= 110 and len(sentences) >= 110, (len(statements), len(sentences))
    # a podman copy is not a second statement; the two halves of one sentence are two
    keys = [k for k, c in statements.items() if c["id"].startswith("kumar2013-lifecycle-containers-boot")]
    assert len(keys) == 1
    halves = [c for c in statements.values() if c["quote"].startswith("Closer inspection reveals that OpenVZ")]
    assert len(halves) >= 2
    every_paper = {c["paper"] for c in statements.values()}
    assert every_paper == set(PAPERS)


def test_counting_by_hand():
    base = {"paper": "p", "quote": "q", "paper_platform": "OpenVZ", "testable": True}
    lxc = {**base, "id": "p-a", "check": {"kind": "better", "metric": "m", "platform": "lxc"}}
    podman = {**base, "id": "p-b", "check": {"kind": "better", "metric": "m", "platform": "podman"}}
    other_metric = {**base, "id": "p-c", "check": {"kind": "better", "metric": "n", "platform": "lxc"}}
    untestable = {**base, "id": "p-d", "paper_platform": "Xen", "testable": False}
    summary = {**base, "id": "kumar2013-no-single-best-platform", "paper_platform": "Xen", "testable": False}
    assert len(comparative_statements([lxc, podman, other_metric, untestable, summary])) == 3
