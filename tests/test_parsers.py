"""Parsers on real captured output: values asserted, every bad-* capture rejected."""

from __future__ import annotations

import pytest

from conftest import DATA, bad_fixtures, fixture_text
from virtrepro.parsers import ParseError, ToolReportedError, TruncatedLogError, parse_iozone, parse_sysbench


def by_metric(records):
    return {r["metric"]: r for r in records}


# --- sysbench -------------------------------------------------------------------------------

def test_sysbench_cpu_one_thread():
    records = by_metric(parse_sysbench(fixture_text("sysbench", "cpu-1thread-10s.log"), "cpu-1thread-10s.log"))
    assert records["events_per_second"]["value"] == 1141.43
    assert records["events_per_second"]["unit"] == "events/s"
    assert records["events_per_second"]["threads"] == 1
    assert records["events_per_second"]["cpu_max_prime"] == 20000
    assert records["total_time"]["value"] == 10.0003
    assert records["total_events"]["value"] == 11416
    assert records["latency_avg"]["value"] == 0.88
    assert records["latency_p95"]["value"] == 0.92


def test_sysbench_cpu_with_intervals_histogram_and_p99():
    records = by_metric(parse_sysbench(fixture_text("sysbench", "cpu-histogram-p99-interval.log")))
    assert records["events_per_second"]["threads"] == 2
    assert records["events_per_second"]["cpu_max_prime"] == 10000
    # the interval lines ('eps: 5535.42') are not the summary
    assert records["events_per_second"]["value"] == 4565.97
    assert "latency_p99" in records and "latency_p95" not in records


def test_sysbench_memory():
    records = by_metric(parse_sysbench(fixture_text("sysbench", "memory-read-rnd-1M.log")))
    assert records["throughput"]["value"] == 3689.07
    assert records["throughput"]["unit"] == "MiB/s"
    assert records["operations_per_second"]["value"] == 3689.07
    assert records["throughput"]["block_size_kib"] == 1024
    assert records["throughput"]["operation"] == "read"


def test_sysbench_fileio():
    records = by_metric(parse_sysbench(fixture_text("sysbench", "fileio-rndrw-1G-20s.log")))
    assert records["reads_per_second"]["value"] == 8263.63
    assert records["writes_per_second"]["value"] == 5509.17
    assert records["fsyncs_per_second"]["value"] == 2205.05
    assert records["read_throughput"]["value"] == 129.12
    assert records["write_throughput"]["value"] == 86.08
    assert records["total_time"]["value"] == 20.0020


@pytest.mark.parametrize("name", ["fileio-prepare-1G.log", "fileio-cleanup.log"])
def test_sysbench_prepare_and_cleanup_are_not_measurements(name):
    with pytest.raises(ParseError, match=name):
        parse_sysbench(fixture_text("sysbench", name), name)


@pytest.mark.parametrize("path", bad_fixtures("sysbench"), ids=lambda p: p.name)
def test_sysbench_bad_logs_are_rejected_with_the_file_named(path):
    with pytest.raises(ParseError) as error:
        parse_sysbench(path.read_text(), str(path))
    assert str(path) in str(error.value)


def test_sysbench_truncated_is_a_truncation_and_fatal_is_a_tool_error():
    with pytest.raises(TruncatedLogError):
        parse_sysbench(fixture_text("sysbench", "bad-truncated-sigterm-cpu.log"))
    with pytest.raises(ToolReportedError, match="Cannot open file 'test_file.0'"):
        parse_sysbench(fixture_text("sysbench", "bad-fileio-run-without-prepare.log"))
    with pytest.raises(ToolReportedError, match="invalid option: --no-such-option=1"):
        parse_sysbench(fixture_text("sysbench", "bad-invalid-option.log"))


def test_sysbench_cut_after_the_rate_line_is_truncated():
    text = fixture_text("sysbench", "cpu-1thread-10s.log")
    cut = text[: text.index("General statistics:")]
    with pytest.raises(TruncatedLogError):
        parse_sysbench(cut, "cut.log")


# --- iozone ---------------------------------------------------------------------------------

def test_iozone_auto_mode_sweep():
    records = parse_iozone(fixture_text("iozone", "auto-r1m-n1m-g64m-i0-i1.log"), "auto.log")
    sizes = sorted({r["file_size_kb"] for r in records})
    assert sizes == [1024, 2048, 4096, 8192, 16384, 32768, 65536]
    assert {r["record_kb"] for r in records} == {1024}
    assert {r["metric"] for r in records} == {"write", "rewrite", "read", "reread"}
    assert len(records) == 7 * 4
    value = {(r["file_size_kb"], r["metric"]): r["value"] for r in records}
    assert value[(1024, "write")] == 4339202
    assert value[(1024, "read")] == 24430194  # eight digits overflow their column by one
    assert value[(32768, "read")] == 7811336
    assert value[(65536, "reread")] == 7795344
    assert all(r["unit"] == "kB/s" and r["o_direct"] is False for r in records)


def test_iozone_single_size_with_random_tests_direct_and_fsync():
    records = parse_iozone(fixture_text("iozone", "s64m-r1m-i012-direct-fsync.log"))
    value = {r["metric"]: r["value"] for r in records}
    assert value == {
        "write": 1500230,
        "rewrite": 1570140,
        "read": 982005,
        "reread": 1092741,
        "random_read": 1100080,
        "random_write": 1786118,
    }
    assert all(r["o_direct"] and r["fsync_in_timing"] and r["file_size_kb"] == 65536 for r in records)


@pytest.mark.parametrize("path", bad_fixtures("iozone"), ids=lambda p: p.name)
def test_iozone_bad_logs_are_rejected_with_the_file_named(path):
    with pytest.raises(ParseError) as error:
        parse_iozone(path.read_text(), str(path))
    assert str(path) in str(error.value)


def test_iozone_sigterm_is_truncation_even_though_rows_look_complete():
    with pytest.raises(TruncatedLogError, match="interrupted"):
        parse_iozone(fixture_text("iozone", "bad-truncated-sigterm.log"))


def test_iozone_cut_before_completion_is_truncated():
    text = fixture_text("iozone", "auto-r1m-n1m-g64m-i0-i1.log")
    cut = text[: text.index("iozone test complete.")]
    with pytest.raises(TruncatedLogError, match="without 'iozone test complete.'"):
        parse_iozone(cut, "cut.log")


def test_iozone_missing_directory_is_a_tool_error():
    with pytest.raises(ToolReportedError, match="Can not open temp file"):
        parse_iozone(fixture_text("iozone", "bad-nonexistent-dir.log"))


def test_parsers_refuse_each_others_logs():
    with pytest.raises(ParseError):
        parse_iozone(fixture_text("sysbench", "cpu-1thread-10s.log"))
    with pytest.raises(ParseError):
        parse_sysbench(fixture_text("iozone", "auto-r1m-n1m-g64m-i0-i1.log"))


NOT_RUNS = {"fileio-prepare-1G.log", "fileio-cleanup.log"}


@pytest.mark.parametrize("tool, parse", [("sysbench", parse_sysbench), ("iozone", parse_iozone)])
def test_every_good_capture_parses_to_positive_finite_numbers(tool, parse):
    good = [p for p in sorted((DATA / tool).iterdir()) if not p.name.startswith("bad-") and p.name not in NOT_RUNS]
    assert good
    for path in good:
        records = parse(path.read_text(), str(path))
        assert records, path
        assert all(r["value"] >= 0 and r["value"] == r["value"] for r in records), path
