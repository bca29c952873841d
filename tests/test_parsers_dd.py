"""dd parser on real captured output (tests/data/dd/): values asserted, bad-* rejected."""

from __future__ import annotations

import pytest

from conftest import bad_fixtures, fixture_text
from virtrepro.benchmarks import BENCHMARKS
from virtrepro.parsers import ParseError, ToolReportedError, TruncatedLogError, parse_dd

TOOL = "dd"
MIB = 1024 * 1024
# what each bad run asked for (bs x count), where the command gave a size
ASKED = {
    "bad-interrupted-sigint-count100000.log": 100000 * MIB,
    "bad-killed-sigterm-count100000.log": 100000 * MIB,
    "bad-no-space-left-tmpfs-2m.log": 8 * MIB,
}


def test_write_with_fdatasync():
    (record,) = parse_dd(fixture_text(TOOL, "write-bs1M-count256-fdatasync.log"), "w.log", expected_bytes=256 * MIB)
    assert record["metric"] == "throughput" and record["unit"] == "MB/s"
    assert record["bytes"] == 268435456 and record["seconds"] == 1.19578
    assert record["value"] == pytest.approx(268435456 / 1.19578 / 1e6)
    assert record["value"] == pytest.approx(224, rel=0.005)  # dd's own rounded rate: 224 MB/s
    assert record["reported_rate"] == "224 MB/s"
    assert (record["records_in"], record["records_out"], record["copy"]) == ("256+0", "256+0", 0)


def test_reads_direct_and_cached_in_other_units():
    (direct,) = parse_dd(fixture_text(TOOL, "read-bs1M-count256-direct.log"))
    assert direct["seconds"] == 0.29374 and direct["value"] == pytest.approx(914, rel=0.005)
    (cached,) = parse_dd(fixture_text(TOOL, "read-bs1M-count256-cached.log"))
    assert cached["reported_rate"] == "4.8 GB/s" and cached["value"] == pytest.approx(4775.1, rel=1e-4)
    (small,) = parse_dd(fixture_text(TOOL, "write-bs1k-count3-fdatasync.log"), expected_bytes=3072)
    assert small["reported_rate"] == "372 kB/s" and small["value"] == pytest.approx(0.372, rel=0.005)


def test_benchmark_log_write_then_read():
    text = fixture_text(TOOL, "benchmark-write-fdatasync-read-direct-32MiB.log")
    write, read = parse_dd(text, expected_bytes=[32 * MIB, 32 * MIB])
    assert (write["copy"], read["copy"]) == (0, 1)
    assert write["seconds"] == 0.0862368 and read["seconds"] == 0.0354966
    assert write["value"] == pytest.approx(389.1, rel=1e-3) and read["value"] == pytest.approx(945.3, rel=1e-3)
    records = BENCHMARKS["dd"].parse(text, "run.log", {"bs": "1M", "count": 32})
    assert [(r["op"], r.get("read_cache")) for r in records] == [("write", None), ("read", "direct")]
    with pytest.raises(TruncatedLogError, match="33554432 bytes, 67108864 were asked for"):
        BENCHMARKS["dd"].parse(text, "run.log", {"bs": "1M", "count": 64})
    with pytest.raises(TruncatedLogError, match="1 completed copies, 2 were run"):
        BENCHMARKS["dd"].parse(text.split("virtrepro:")[0], "run.log", {"bs": "1M", "count": 32})


@pytest.mark.parametrize("path", bad_fixtures(TOOL), ids=lambda p: p.name)
def test_bad_logs_are_rejected_with_the_file_named(path):
    with pytest.raises(ParseError) as error:
        parse_dd(path.read_text(), str(path), expected_bytes=ASKED.get(path.name))
    assert str(path) in str(error.value)


def test_error_kinds():
    with pytest.raises(ToolReportedError, match="No space left on device"):
        parse_dd(fixture_text(TOOL, "bad-no-space-left-tmpfs-2m.log"))
    with pytest.raises(ToolReportedError, match="invalid conversion: 'bogus'"):
        parse_dd(fixture_text(TOOL, "bad-invalid-conversion.log"))
    with pytest.raises(ToolReportedError, match="unrecognized option"):
        parse_dd(fixture_text(TOOL, "bad-unrecognized-option.log"))
    with pytest.raises(ToolReportedError, match="failed to open"):
        parse_dd(fixture_text(TOOL, "bad-missing-input.log"))
    with pytest.raises(TruncatedLogError, match="copied nothing"):
        parse_dd(fixture_text(TOOL, "bad-nothing-copied-0+0-records.log"))
    with pytest.raises(TruncatedLogError, match="empty"):
        parse_dd(fixture_text(TOOL, "bad-killed-sigterm-count100000.log"))


def test_sigint_looks_complete_without_the_size_asked_for():
    text = fixture_text(TOOL, "bad-interrupted-sigint-count100000.log")
    (record,) = parse_dd(text)  # nothing in dd's statistics shows the interruption ...
    assert record["bytes"] == 562036736
    with pytest.raises(TruncatedLogError, match="interrupted"):  # ... only the byte count asked for does
        parse_dd(text, expected_bytes=100000 * MIB)


def test_cut_logs():
    lines = fixture_text(TOOL, "write-bs1M-count256-fdatasync.log").splitlines()
    with pytest.raises(TruncatedLogError, match="without the 'bytes ... copied' line"):
        parse_dd("\n".join(lines[:2]), "cut.log")
    with pytest.raises(ParseError, match="without 'records in/out'"):
        parse_dd(lines[2], "cut.log")
    with pytest.raises(ParseError, match="not dd output"):
        parse_dd("hello\n", "other.log")
