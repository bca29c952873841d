"""mbw parser on real captured output (tests/data/mbw/): values asserted, bad-* rejected."""

from __future__ import annotations

import pytest

from conftest import DATA, bad_fixtures, fixture_text
from virtrepro.parsers import ParseError, ToolReportedError, TruncatedLogError
from virtrepro.parsers.mbw import parse_mbw

TOOL = "mbw"


def averages(records):
    return {r["method"]: r["value"] for r in records if r["metric"] == "copy_bandwidth_avg"}


def test_all_tests_ten_runs():
    records = parse_mbw(fixture_text(TOOL, "all-tests-n10-256MiB.log"), "all.log")
    assert averages(records) == {"MEMCPY": 5421.581, "DUMB": 11018.146, "MCBLOCK": 9719.169}
    assert {r["unit"] for r in records if "bandwidth" in r["metric"]} == {"MiB/s"}
    assert {r["runs"] for r in records if r["metric"] == "copy_bandwidth_avg"} == {10}
    per_run = {(r["method"], r["run"]): r["value"] for r in records if r["metric"] == "copy_bandwidth"}
    assert len(per_run) == 30
    assert per_run[("MEMCPY", 0)] == 5357.890
    assert per_run[("MEMCPY", 9)] == 5510.116
    assert per_run[("MCBLOCK", 0)] == 9495.549
    elapsed = {r["method"]: r["value"] for r in records if r["metric"] == "elapsed_avg"}
    assert elapsed["DUMB"] == 0.02323 and next(r for r in records if r["metric"] == "elapsed_avg")["unit"] == "s"
    assert all(r["array_mib"] == 256.0 for r in records)
    assert {r.get("block_bytes") for r in records if r["method"] == "MCBLOCK"} == {262144}
    assert {r.get("block_bytes") for r in records if r["method"] != "MCBLOCK"} == {None}


def test_quiet_all_tests():
    records = parse_mbw(fixture_text(TOOL, "quiet-all-tests-n5-512MiB.log"), expected_runs=5)
    assert averages(records) == {"MEMCPY": 5445.986, "DUMB": 11023.554, "MCBLOCK": 9628.947}
    assert all(r["array_mib"] == 512.0 for r in records)


def test_memcpy_only_with_and_without_avg_rows():
    split = parse_mbw(fixture_text(TOOL, "memcpy-n3-64MiB-split.stdout"), stderr=fixture_text(TOOL, "memcpy-n3-64MiB-split.stderr"))
    assert averages(split) == {"MEMCPY": 5190.873}
    assert [r["value"] for r in split if r["metric"] == "copy_bandwidth"] == [5121.639, 5227.904, 5224.490]
    no_avg = parse_mbw(fixture_text(TOOL, "memcpy-only-no-avg-n5-128MiB.log"))
    assert averages(no_avg) == {}
    assert [r["value"] for r in no_avg if r["metric"] == "copy_bandwidth"] == [5407.918, 5474.296, 5467.515, 5423.039, 5528.441]


@pytest.mark.parametrize("path", bad_fixtures(TOOL), ids=lambda p: p.name)
def test_bad_logs_are_rejected_with_the_file_named(path):
    with pytest.raises(ParseError) as error:
        parse_mbw(path.read_text(), str(path))
    assert str(path) in str(error.value)


def test_error_kinds():
    with pytest.raises(TruncatedLogError, match="81 MEMCPY runs, 100 were requested"):
        parse_mbw(fixture_text(TOOL, "bad-truncated-sigterm-linebuffered.log"))
    with pytest.raises(TruncatedLogError, match="empty"):
        parse_mbw(fixture_text(TOOL, "bad-truncated-sigterm.log"))
    with pytest.raises(ToolReportedError, match="Cannot allocate memory"):
        parse_mbw(fixture_text(TOOL, "bad-size-too-large-for-ram.log"))
    with pytest.raises(ToolReportedError, match="Cannot allocate memory"):
        parse_mbw(
            fixture_text(TOOL, "bad-size-too-large-for-ram-split.stdout"),
            "split",
            stderr=fixture_text(TOOL, "bad-size-too-large-for-ram-split.stderr"),
        )
    with pytest.raises(ToolReportedError, match="no array size given"):
        parse_mbw(fixture_text(TOOL, "bad-no-size-argument.log"))


def test_quiet_logs_cut_short_are_caught_when_possible():
    lines = fixture_text(TOOL, "quiet-all-tests-n5-512MiB.log").splitlines()
    without_last_avg = "\n".join(lines[:-1])
    with pytest.raises(TruncatedLogError, match="AVG row of MCBLOCK"):
        parse_mbw(without_last_avg, "cut.log")
    two_methods = "\n".join(lines[:12])  # ends right after the DUMB AVG row
    assert set(averages(parse_mbw(two_methods))) == {"MEMCPY", "DUMB"}  # nothing in the log shows the cut
    with pytest.raises(TruncatedLogError, match="expected"):
        parse_mbw(two_methods, "cut.log", expected_methods=["MEMCPY", "DUMB", "MCBLOCK"])
    with pytest.raises(TruncatedLogError, match="5 MEMCPY runs, 10 were requested"):
        parse_mbw("\n".join(lines), "q.log", expected_runs=10)
    # with the header, a log stopping after MEMCPY is caught: the MCBLOCK block-size line was printed
    header = fixture_text(TOOL, "all-tests-n10-256MiB.log").splitlines()
    with pytest.raises(TruncatedLogError, match="MCBLOCK"):
        parse_mbw("\n".join(header[:14]), "cut.log")


def test_garbage_row_is_a_parse_error():
    text = fixture_text(TOOL, "memcpy-n3-64MiB-split.stdout").replace("Copy: 5227.904", "Copy: x")
    with pytest.raises(ParseError, match="line 4"):
        parse_mbw(text, "edited.log")


GOOD = ["all-tests-n10-256MiB.log", "memcpy-n3-64MiB-split.stdout", "memcpy-only-no-avg-n5-128MiB.log", "quiet-all-tests-n5-512MiB.log"]


def test_every_good_capture_parses_to_finite_non_negative_numbers():
    names = {p.name for p in (DATA / TOOL).iterdir() if not p.name.startswith("bad-")}
    assert names - set(GOOD) == {"memcpy-n3-64MiB-split.stderr"}  # empty stderr of a good split run
    for name in GOOD:
        records = parse_mbw(fixture_text(TOOL, name), name)
        assert records and all(r["value"] >= 0 and r["value"] == r["value"] for r in records), name
