"""ioping parser on real captured output (tests/data/ioping/): text, raw (-B/-p), JSON; bad-* rejected."""

from __future__ import annotations

import pytest

from conftest import DATA, bad_fixtures, fixture_text
from virtrepro.parsers import ParseError, ToolReportedError, TruncatedLogError
from virtrepro.parsers.ioping import parse_ioping

TOOL = "ioping"

# What the caller asked for, where only that shows a run was cut short. The SIGINT capture has
# 15 of the 20 requests of the c20-i200ms runs it was made alongside (its own command is not
# recorded in the fixtures); ioping prints a full summary on SIGINT, so without the count it passes.
CALLER = {"bad-truncated-sigint.log": {"expected_requests": 20}}


def by_metric(records):
    return {r["metric"]: r for r in records}


def test_text_summary_read():
    r = by_metric(parse_ioping(fixture_text(TOOL, "dir-c20-i200ms.log"), "dir.log", expected_requests=20))
    assert r["requests"]["value"] == 19  # warm-up excluded
    assert r["total_time"]["value"] == pytest.approx(5080)  # '5.08 ms' -> us
    assert r["iops"]["value"] == pytest.approx(3740)  # '3.74 k iops'
    assert r["bandwidth"]["value"] == pytest.approx(14.6 * 1024)  # MiB/s -> KiB/s
    assert r["bandwidth"]["unit"] == "KiB/s"
    assert r["latency_min"]["value"] == 177.4
    assert r["latency_avg"]["value"] == 267.3
    assert r["latency_max"]["value"] == 574.3
    assert r["latency_mdev"]["value"] == 79.0
    assert r["latency_avg"]["unit"] == "us"
    assert r["generated_iops"]["value"] == 5
    assert r["generated_bandwidth"]["value"] == 21.0
    assert r["iops"]["operation"] == "read" and r["iops"]["request_size_kib"] == 4.0


def test_text_summary_write_with_ms_latencies_and_mib_rate():
    r = by_metric(parse_ioping(fixture_text(TOOL, "write-direct-1M-c10.log")))
    assert r["iops"]["operation"] == "write"
    assert r["iops"]["request_size_kib"] == 1024.0
    assert r["latency_min"]["value"] == 836.7
    assert r["latency_avg"]["value"] == pytest.approx(1060)  # '1.06 ms'
    assert r["latency_max"]["value"] == pytest.approx(1540)
    assert r["latency_mdev"]["value"] == 210.3
    assert r["iops"]["value"] == 943
    assert r["bandwidth"]["value"] == pytest.approx(943.5 * 1024)
    assert r["generated_bandwidth"]["value"] == pytest.approx(5.55 * 1024)


def test_split_stdout_with_us_total_time():
    r = by_metric(parse_ioping(fixture_text(TOOL, "c3-i100ms-split.stdout"), stderr=fixture_text(TOOL, "c3-i100ms-split.stderr")))
    assert r["total_time"]["value"] == pytest.approx(403.3)
    assert r["latency_mdev"]["value"] == 7.61
    assert r["iops"]["value"] == pytest.approx(4960)


def test_raw_batch_line():
    r = by_metric(parse_ioping(fixture_text(TOOL, "batch-B-c20-i100ms.log"), expected_requests=20))
    assert r["requests"]["value"] == 19
    assert r["total_time"]["value"] == pytest.approx(3412.573)  # ns -> us
    assert r["iops"]["value"] == 5568
    assert r["bandwidth"]["value"] == pytest.approx(22805080 / 1024)
    assert r["latency_min"]["value"] == pytest.approx(99.173)
    assert r["latency_avg"]["value"] == pytest.approx(179.609)
    assert r["latency_mdev"]["value"] == pytest.approx(99.344)
    assert r["iops"]["format"] == "raw"


def test_raw_periodic_lines():
    records = parse_ioping(fixture_text(TOOL, "quiet-p5-c20-i100ms.log"), expected_requests=20)
    assert sorted({r["line"] for r in records}) == [0, 1, 2]
    max_latency = [r["value"] for r in records if r["metric"] == "latency_max"]
    assert max_latency == [pytest.approx(151.256), pytest.approx(180.283), pytest.approx(146.763)]
    with pytest.raises(TruncatedLogError):
        parse_ioping(fixture_text(TOOL, "quiet-p5-c20-i100ms.log"), expected_requests=40)


def test_json():
    r = by_metric(parse_ioping(fixture_text(TOOL, "json-c5-i100ms.log"), expected_requests=5))
    assert r["requests"]["value"] == 4
    assert r["iops"]["value"] == pytest.approx(3108.486167)
    assert r["latency_avg"]["value"] == pytest.approx(321.7)
    assert r["latency_max"]["value"] == pytest.approx(368.656)
    assert r["bandwidth"]["value"] == pytest.approx(12732359 / 1024)
    assert r["generated_iops"]["value"] == pytest.approx(12.485657)
    assert r["iops"]["format"] == "json" and r["iops"]["operation"] == "read"


@pytest.mark.parametrize("path", bad_fixtures(TOOL), ids=lambda p: p.name)
def test_bad_logs_are_rejected_with_the_file_named(path):
    with pytest.raises(ParseError) as error:
        parse_ioping(path.read_text(), str(path), **CALLER.get(path.name, {}))
    assert str(path) in str(error.value)


def test_error_kinds():
    with pytest.raises(TruncatedLogError, match="15 request rows but no statistics"):
        parse_ioping(fixture_text(TOOL, "bad-truncated-sigterm.log"))
    with pytest.raises(TruncatedLogError, match="not closed"):
        parse_ioping(fixture_text(TOOL, "bad-json-truncated-sigterm.log"))
    with pytest.raises(ToolReportedError, match="No such file or directory"):
        parse_ioping(fixture_text(TOOL, "bad-nonexistent-path.log"))
    with pytest.raises(ToolReportedError, match="unrecognized option"):
        parse_ioping(fixture_text(TOOL, "bad-invalid-option.log"))


def test_sigint_summary_is_only_rejected_against_the_requested_count():
    text = fixture_text(TOOL, "bad-truncated-sigint.log")
    assert by_metric(parse_ioping(text))["requests"]["value"] == 14  # indistinguishable from a run without -c
    with pytest.raises(TruncatedLogError, match="generated 15 requests but 20 were requested"):
        parse_ioping(text, "sigint.log", expected_requests=20)
    with pytest.raises(TruncatedLogError):
        parse_ioping(fixture_text(TOOL, "dir-c20-i200ms.log"), expected_requests=21)


GOOD = [
    "batch-B-c20-i100ms.log",
    "c3-i100ms-split.stdout",
    "dir-c20-i200ms.log",
    "dir-direct-c20-i200ms.log",
    "json-c5-i100ms.log",
    "quiet-p5-c20-i100ms.log",
    "write-direct-1M-c10.log",
]


def test_every_good_capture_parses_to_finite_non_negative_numbers():
    names = {p.name for p in (DATA / TOOL).iterdir() if not p.name.startswith("bad-")}
    assert names - set(GOOD) == {"c3-i100ms-split.stderr"}  # empty stderr of a good split run
    for name in GOOD:
        records = parse_ioping(fixture_text(TOOL, name), name)
        assert records and all(r["value"] >= 0 and r["value"] == r["value"] for r in records), name
