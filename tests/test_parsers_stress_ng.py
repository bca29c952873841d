"""stress-ng parser on real captured output (tests/data/stress-ng/): values asserted, bad-* rejected."""

from __future__ import annotations

import pytest

from conftest import DATA, bad_fixtures, fixture_text
from virtrepro.parsers import ParseError, ToolReportedError, TruncatedLogError
from virtrepro.parsers.stress_ng import parse_stress_ng, parse_stress_ng_yaml

TOOL = "stress-ng"


def values(records):
    return {(r["stressor"], r["metric"]): r["value"] for r in records}


def test_cpu_matrixprod_two_instances():
    records = parse_stress_ng(fixture_text(TOOL, "cpu2-matrixprod-10s-metrics-brief.log"), "cpu2.log", expected_seconds=10)
    v = values(records)
    assert v[("cpu", "bogo_ops")] == 39970
    assert v[("cpu", "real_time")] == 10.00
    assert v[("cpu", "usr_time")] == 15.09
    assert v[("cpu", "sys_time")] == 0.21
    assert v[("cpu", "bogo_ops_per_second_real")] == 3996.20
    assert v[("cpu", "bogo_ops_per_second_usr_sys")] == 2611.34
    assert v[(None, "run_time")] == 10.00
    units = {r["metric"]: r["unit"] for r in records}
    assert units["bogo_ops_per_second_real"] == "bogo-ops/s" and units["real_time"] == "s"
    assert {r["instances"] for r in records if r["stressor"] == "cpu"} == {2}


def test_split_capture_results_are_on_stderr():
    stderr = fixture_text(TOOL, "cpu2-matrixprod-5s-metrics-brief-split.stderr")
    stdout = fixture_text(TOOL, "cpu2-matrixprod-5s-metrics-brief-split.stdout")
    v = values(parse_stress_ng(stderr, "split.stderr", expected_seconds=5, stdout=stdout))
    assert v[("cpu", "bogo_ops")] == 17053
    assert v[("cpu", "bogo_ops_per_second_real")] == 3409.26
    with pytest.raises(TruncatedLogError, match="on stderr"):
        parse_stress_ng(stdout, "split.stdout")


def test_hdd_miscellaneous_rates():
    records = parse_stress_ng(fixture_text(TOOL, "hdd1-256M-10s-metrics-brief-times.log"), expected_seconds=10)
    v = values(records)
    assert v[("hdd", "bogo_ops")] == 188416
    assert v[("hdd", "bogo_ops_per_second_real")] == 18692.23
    assert v[("hdd", "read_rate")] == 7839.02
    assert v[("hdd", "write_rate")] == 2341.11
    assert v[("hdd", "read_write_combined_rate")] == 3605.45
    misc = [r for r in records if r.get("miscellaneous")]
    assert {r["unit"] for r in misc} == {"MB/s"} and len(misc) == 3


def test_mixed_stressors_with_full_metrics():
    records = parse_stress_ng(fixture_text(TOOL, "mixed-cpu-vm-matrix-10s-metrics-yaml.log"))
    v = values(records)
    assert {r["stressor"] for r in records} == {"cpu", "vm", "matrix", None}
    assert v[("cpu", "bogo_ops")] == 8189
    assert v[("vm", "bogo_ops_per_second_usr_sys")] == 42261.69
    assert v[("cpu", "cpu_used_per_instance")] == 38.31
    assert v[("vm", "rss_max")] == 264064
    assert v[("matrix", "add_matrix_ops_per_second")] == 417018.65
    assert v[("matrix", "prod_matrix_ops_per_second")] == 243.30
    assert len([r for r in records if r.get("miscellaneous")]) == 14
    assert next(r for r in records if r["metric"] == "rss_max")["unit"] == "KB"


def test_yaml_agrees_with_the_log_of_the_same_run():
    yaml_records = parse_stress_ng_yaml(fixture_text(TOOL, "mixed-cpu-vm-matrix-10s-metrics.yaml"), "m.yaml", expected_seconds=10)
    y = values(yaml_records)
    assert y[("vm", "bogo_ops_per_second_real")] == pytest.approx(16826.324314)
    assert y[("matrix", "real_time")] == pytest.approx(10.001672)
    log = values(parse_stress_ng(fixture_text(TOOL, "mixed-cpu-vm-matrix-10s-metrics-yaml.log")))
    assert set(y) == set(log) - {(None, "run_time")}
    for key, value in y.items():
        assert value == pytest.approx(log[key], abs=0.006), key  # the log rounds to 2 decimals
    with pytest.raises(TruncatedLogError, match="caller requested 60s"):
        parse_stress_ng_yaml(fixture_text(TOOL, "mixed-cpu-vm-matrix-10s-metrics.yaml"), "m.yaml", expected_seconds=60)


@pytest.mark.parametrize("path", bad_fixtures(TOOL), ids=lambda p: p.name)
def test_bad_logs_are_rejected_with_the_file_named(path):
    with pytest.raises(ParseError) as error:
        parse_stress_ng(path.read_text(), str(path))
    assert str(path) in str(error.value)


@pytest.mark.parametrize("name", ["bad-truncated-sigterm.log", "bad-truncated-sigint.log"])
def test_signal_ends_with_success_and_metrics_but_is_truncated(name):
    text = fixture_text(TOOL, name)
    assert "successful run completed in 4.00s" in text
    with pytest.raises(TruncatedLogError, match="completed in 4s but stress-ng announced 60s"):
        parse_stress_ng(text, name)
    # if the announcement is missing, only the caller's timeout shows it
    without = "\n".join(line for line in text.splitlines() if "setting to a" not in line)
    assert parse_stress_ng(without, name)
    with pytest.raises(TruncatedLogError, match="caller requested 60s"):
        parse_stress_ng(without, name, expected_seconds=60)


def test_error_kinds():
    with pytest.raises(ToolReportedError, match="fail:"):
        parse_stress_ng(fixture_text(TOOL, "bad-temp-path-readonly-proc.log"))
    with pytest.raises(ToolReportedError, match="aborting: temp-path"):
        parse_stress_ng(fixture_text(TOOL, "bad-hdd-temp-path-missing.log"))
    with pytest.raises(ToolReportedError, match="cpu-method must be one of"):
        parse_stress_ng(fixture_text(TOOL, "bad-unknown-cpu-method.log"))
    with pytest.raises(ToolReportedError, match="unrecognized option"):
        parse_stress_ng(fixture_text(TOOL, "bad-invalid-option.log"))


def test_timeout_other_than_requested_is_rejected():
    with pytest.raises(ParseError, match="ran with a 10s timeout"):
        parse_stress_ng(fixture_text(TOOL, "cpu2-matrixprod-10s-metrics-brief.log"), "cpu2.log", expected_seconds=60)


def test_stream_without_memory_rate_is_rejected():
    # ran 17.3 s for a 10 s timeout, bogo ops 1, and says it could not measure the memory rate
    with pytest.raises(ToolReportedError, match="too short to determine memory rate"):
        parse_stress_ng(fixture_text(TOOL, "stream1-10s-metrics-brief.log"))


def test_stream_memory_rate_line_is_read():
    text = fixture_text(TOOL, "stream1-10s-metrics-brief.log").replace(
        "stream: run duration too short to determine memory rate",
        "stream: memory rate: 9671.84 MB read/sec, 6447.89 MB write/sec, 845.14 Mflop/sec",
    )
    v = values(parse_stress_ng(text, "edited.log"))
    assert v[("stream", "memory_read_rate")] == 9671.84
    assert v[("stream", "memory_write_rate")] == 6447.89
    assert v[("stream", "mflops")] == 845.14


def test_cut_before_completion_line_is_truncated():
    text = fixture_text(TOOL, "cpu2-matrixprod-10s-metrics-brief.log")
    with pytest.raises(TruncatedLogError, match="successful run completed"):
        parse_stress_ng(text[: text.index("stress-ng: info:  [27717] successful")], "cut.log")


def test_stream_miscellaneous_metrics_are_the_mean_of_the_instances_not_new_records():
    """Real run (stress-ng --stream 1 -t 10 --metrics-brief): the 'memory rate' info line and the three
    miscellaneous metrics say the same; they were reported twice, the second time with unit ''."""
    name = "stream1-10s-metrics-brief-memory-rate.log"
    records = parse_stress_ng(fixture_text(TOOL, name), name, expected_seconds=10)
    stream = [r for r in records if r["stressor"] == "stream" and r["metric"] not in (
        "bogo_ops", "real_time", "usr_time", "sys_time", "bogo_ops_per_second_real", "bogo_ops_per_second_usr_sys")]
    assert sorted((r["metric"], r["unit"], r["value"]) for r in stream) == [
        ("memory_read_rate", "MB/s", 5781.10), ("memory_write_rate", "MB/s", 3854.06), ("mflops", "Mflop/s", 505.16)]
    assert all(r["unit"] for r in records)
    # the mean line and the instance line must agree: a value damaged in either is refused
    edited = fixture_text(TOOL, name).replace("5781.10 memory read rate", "5871.10 memory read rate")
    with pytest.raises(ParseError, match="memory_read_rate"):
        parse_stress_ng(edited, "edited.log")


GOOD = [
    "stream1-10s-metrics-brief-memory-rate.log",
    "cpu1-verify-perf-5s.log",
    "cpu2-matrixprod-10s-metrics-brief.log",
    "cpu2-matrixprod-5s-metrics-brief-split.stderr",
    "hdd1-256M-10s-metrics-brief-times.log",
    "mixed-cpu-vm-matrix-10s-metrics-yaml.log",
    "cpu2-matrixprod-5s-container-late-start.log",
    "vm2-256M-1s-tcg-late-start.log",
]


def test_every_good_capture_parses_to_finite_non_negative_numbers():
    names = {p.name for p in (DATA / TOOL).iterdir() if not p.name.startswith("bad-")}
    assert names - set(GOOD) == {
        "cpu2-matrixprod-5s-metrics-brief-split.stdout",  # empty: stress-ng writes to stderr
        "mixed-cpu-vm-matrix-10s-metrics.yaml",  # parse_stress_ng_yaml, tested above
        "stream1-10s-metrics-brief.log",  # rejected on purpose, tested above
    }
    for name in GOOD:
        records = parse_stress_ng(fixture_text(TOOL, name), name)
        assert records and all(r["value"] >= 0 and r["value"] == r["value"] for r in records), name


def test_a_stressor_that_started_late_in_a_container_is_still_a_complete_run():
    """Real output from a podman container: the cpu stressor's mean real time (4.75 s) is below the
    5 s timeout because its instances started one after another, but the run completed its 5 s."""
    records = parse_stress_ng(fixture_text("stress-ng", "cpu2-matrixprod-5s-container-late-start.log"), "x", expected_seconds=5)
    rate = next(r for r in records if r["metric"] == "bogo_ops_per_second_real")
    assert rate["value"] == 1635.14 and rate["instances"] == 2


def test_vm_workers_that_started_late_in_a_tcg_guest_are_still_a_complete_run():
    """Real output from the quick scale in a QEMU TCG guest: the vm stressor's instances, mapping
    256 MB each, ran 0.81 s on average of a run that completed its 1 s (1.09 s)."""
    records = parse_stress_ng(fixture_text("stress-ng", "vm2-256M-1s-tcg-late-start.log"), "x", expected_seconds=1)
    values = {r["metric"]: r["value"] for r in records}
    assert values["real_time"] == 0.81 and values["bogo_ops_per_second_real"] == 438.92 and values["run_time"] == 1.09
    # the whole run cut short is still refused
    cut = fixture_text("stress-ng", "vm2-256M-1s-tcg-late-start.log").replace("completed in 1.09s", "completed in 0.81s")
    with pytest.raises(TruncatedLogError, match="completed in 0.81s but stress-ng announced 1s"):
        parse_stress_ng(cut, "cut", expected_seconds=1)
