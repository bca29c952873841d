"""fio parser on real captured output (tests/data/fio/): normal, json, json+, terse; bad-* rejected."""

from __future__ import annotations

import json

import pytest

from conftest import DATA, bad_fixtures, fixture_text
from virtrepro.parsers import ParseError, ToolReportedError, TruncatedLogError
from virtrepro.parsers.fio import parse_fio

TOOL = "fio"


def pick(records, metric, **labels):
    found = [r for r in records if r["metric"] == metric and all(r.get(k) == v for k, v in labels.items())]
    assert len(found) == 1, (metric, labels, found)
    return found[0]["value"]


def test_normal_randread_units_are_normalised():
    records = parse_fio(fixture_text(TOOL, "randread-4k-libaio-qd32-normal.log"), "normal.log")
    assert {r["format"] for r in records} == {"normal"}
    assert pick(records, "bw", direction="read") == 457 * 1024  # 'BW=457MiB/s' -> KiB/s
    assert pick(records, "iops", direction="read") == 117_000  # 'IOPS=117k'
    assert pick(records, "runtime") == 15001
    assert pick(records, "io") == 6861 * 1024
    assert pick(records, "slat_max") == pytest.approx(5597.9)  # 'max=5597.9k' nsec -> us
    assert pick(records, "slat_mean") == pytest.approx(2.18543)  # nsec -> us
    assert pick(records, "clat_mean") == pytest.approx(270.90)
    assert pick(records, "clat_stdev") == pytest.approx(242.30)
    assert pick(records, "lat_max") == 9377
    assert pick(records, "clat_percentile", percentile=1.0) == 192
    assert pick(records, "clat_percentile", percentile=99.0) == 914
    assert pick(records, "clat_percentile", percentile=99.99) == 5932
    assert len([r for r in records if r["metric"] == "clat_percentile"]) == 17
    assert pick(records, "group_bw", groupid=0, direction="read") == 457 * 1024
    assert {r["unit"] for r in records if r["metric"].startswith(("clat", "slat", "lat"))} == {"us"}
    assert pick(records, "bw", direction="read", job="randread", jobs=1) == 467968


def test_normal_job_file_three_groups_gib_nsec_and_fsync_block():
    records = parse_fio(fixture_text(TOOL, "jobfile-three-groups-normal.log"), "three.log")
    assert {(r["job"], r["groupid"]) for r in records if "job" in r} == {
        ("seqread-128k", 0),
        ("randwrite-4k-fsync", 1),
        ("null-engine", 2),
    }
    assert pick(records, "bw", job="seqread-128k") == 1303 * 1024
    assert pick(records, "iops", job="seqread-128k") == 10_400  # '10.4k'
    assert pick(records, "slat_mean", job="seqread-128k") == pytest.approx(3.10)  # 'avg= 3.10'
    assert {r["jobs"] for r in records if r.get("job") == "seqread-128k"} == {2}  # group_reporting
    assert pick(records, "bw", job="randwrite-4k-fsync", direction="write") == pytest.approx(12.4 * 1024)
    assert pick(records, "iops", job="randwrite-4k-fsync") == 3164
    # the fsync 'sync percentiles' block is not taken for the write clat percentiles
    assert pick(records, "clat_percentile", job="randwrite-4k-fsync", percentile=99.0) == 206
    assert len([r for r in records if r["metric"] == "clat_percentile" and r["job"] == "randwrite-4k-fsync"]) == 17
    assert pick(records, "bw", job="null-engine") == pytest.approx(21.3 * 1024 * 1024)  # GiB/s
    assert pick(records, "iops", job="null-engine") == 5_581_000
    assert pick(records, "clat_mean", job="null-engine") == pytest.approx(0.02096)  # nsec -> us
    assert pick(records, "clat_percentile", job="null-engine", percentile=99.99) == pytest.approx(3.408)
    assert pick(records, "group_bw", groupid=1, direction="write") == pytest.approx(12.4 * 1024)
    assert pick(records, "group_bw", groupid=2, direction="read") == pytest.approx(21.3 * 1024 * 1024)


def test_normal_two_jobs_without_group_reporting_read_and_write():
    records = parse_fio(fixture_text(TOOL, "randrw70-4k-2jobs-normal.log"))
    reads = [r["value"] for r in records if r["metric"] == "bw" and r["direction"] == "read"]
    writes = [r["value"] for r in records if r["metric"] == "bw" and r["direction"] == "write"]
    assert reads == [pytest.approx(94.9 * 1024), pytest.approx(96.2 * 1024)]
    assert writes == [pytest.approx(40.8 * 1024), pytest.approx(41.4 * 1024)]
    write_p9999 = [r["value"] for r in records if r["metric"] == "clat_percentile" and r["direction"] == "write" and r["percentile"] == 99.99]
    assert write_p9999 == [21103, 16712]
    assert pick(records, "group_bw", direction="read") == 191 * 1024
    assert pick(records, "group_bw", direction="write") == pytest.approx(82.3 * 1024)


def test_normal_with_eta_progress_lines_and_split_stdout():
    records = parse_fio(fixture_text(TOOL, "randread-4k-eta-always.log"))
    assert pick(records, "bw") == 396 * 1024
    assert pick(records, "iops") == 101_000
    assert pick(records, "clat_percentile", percentile=50.0) == 258
    null = parse_fio(fixture_text(TOOL, "null-engine-normal-split.stdout"), stderr=fixture_text(TOOL, "null-engine-normal-split.stderr"))
    assert pick(null, "bw") == pytest.approx(23.7 * 1024 * 1024)
    assert pick(null, "iops") == 6_205_000


def test_json_randread():
    records = parse_fio(fixture_text(TOOL, "randread-4k-libaio-qd32-json.log"), "json.log")
    assert {r["format"] for r in records} == {"json"}
    assert {r["direction"] for r in records} == {"read"}  # write/trim did no I/O
    assert pick(records, "bw") == 478495
    assert pick(records, "iops") == pytest.approx(119623.958403)
    assert pick(records, "runtime") == 15001
    assert pick(records, "io") == 7177916
    assert pick(records, "clat_mean") == pytest.approx(265.272148653)  # ns -> us
    assert pick(records, "clat_percentile", percentile=99.0) == pytest.approx(1105.92)
    assert pick(records, "clat_percentile", percentile=1.0) == pytest.approx(185.344)


def test_json_job_file_jsonplus_group_reporting_and_created_directory():
    three = parse_fio(fixture_text(TOOL, "jobfile-three-groups.json"))
    assert pick(three, "bw", job="seqread-128k") == 1701974
    assert pick(three, "iops", job="randwrite-4k-fsync", direction="write") == pytest.approx(5108.486439)
    assert pick(three, "bw", job="null-engine") == 22770212
    assert {r["groupid"] for r in three} == {0, 1, 2}
    plus = parse_fio(fixture_text(TOOL, "seqwrite-1m-psync-2jobs-group-jsonplus.log"))
    assert {(r["job"], r["direction"]) for r in plus} == {("seqwrite", "write")}  # one reported job for 2
    assert pick(plus, "bw") == 2158721
    assert pick(plus, "iops") == pytest.approx(2108.126125)
    assert pick(plus, "clat_mean") == pytest.approx(910.885457817)
    assert not [r for r in plus if r["metric"].startswith("slat")]  # psync: no submission latency
    quirk = parse_fio(fixture_text(TOOL, "quirk-json-filename-in-missing-dir-is-created.log"))
    assert pick(quirk, "bw") == 303407 and pick(quirk, "runtime") == 54


def test_terse_v3():
    records = parse_fio(fixture_text(TOOL, "randread-4k-terse.log"), "terse.log")
    assert {r["format"] for r in records} == {"terse"}
    assert {r["direction"] for r in records} == {"read"}
    assert pick(records, "bw") == 363956
    assert pick(records, "iops") == 90989
    assert pick(records, "runtime") == 10001
    assert pick(records, "io") == 3639932
    assert pick(records, "slat_max") == 5046
    assert pick(records, "clat_mean") == pytest.approx(349.024951)
    assert pick(records, "lat_mean") == pytest.approx(351.468139)
    assert pick(records, "clat_percentile", percentile=99.0) == 823
    assert pick(records, "clat_percentile", percentile=99.99) == 6062
    assert len([r for r in records if r["metric"] == "clat_percentile"]) == 17  # '0%=0' padding dropped


@pytest.mark.parametrize("path", bad_fixtures(TOOL), ids=lambda p: p.name)
def test_bad_logs_are_rejected_with_the_file_named(path):
    with pytest.raises(ParseError) as error:
        parse_fio(path.read_text(), str(path))
    assert str(path) in str(error.value)


def test_sigterm_results_look_complete_but_are_truncated():
    with pytest.raises(TruncatedLogError, match="terminating on signal 15"):
        parse_fio(fixture_text(TOOL, "bad-truncated-sigterm-normal.log"))
    with pytest.raises(TruncatedLogError, match="terminating on signal 15"):
        parse_fio(fixture_text(TOOL, "bad-truncated-sigterm-json.stdout"))
    with pytest.raises(TruncatedLogError):
        parse_fio(fixture_text(TOOL, "bad-killed-sigkill-normal.log"))


def test_errors_before_json_and_in_job_headers_are_tool_errors():
    with pytest.raises(ToolReportedError, match="err=20"):
        parse_fio(fixture_text(TOOL, "bad-json-enotdir-output-file.json"))
    with pytest.raises(ToolReportedError, match="err=22"):
        parse_fio(fixture_text(TOOL, "bad-normal-einval-unaligned-direct-io.log"))
    with pytest.raises(ToolReportedError, match="unrecognized option"):
        parse_fio(fixture_text(TOOL, "bad-invalid-option.log"))
    with pytest.raises(ToolReportedError, match="io_u error"):
        parse_fio("", "split", stderr=fixture_text(TOOL, "bad-json-einval-unaligned-direct-io-split.stderr"))


def test_json_error_field_alone_rejects_and_leading_noise_is_skipped():
    good = fixture_text(TOOL, "jobfile-three-groups.json")
    assert parse_fio("note: some line before the JSON\n" + good)
    data = json.loads(good)
    data["jobs"][1]["error"] = 5
    with pytest.raises(ToolReportedError, match="randwrite-4k-fsync"):
        parse_fio(json.dumps(data, indent=2), "edited.json")
    with pytest.raises(TruncatedLogError, match="JSON is cut"):
        parse_fio(good[: len(good) // 2], "half.json")


def test_normal_cut_before_run_status_is_truncated():
    text = fixture_text(TOOL, "randread-4k-libaio-qd32-normal.log")
    with pytest.raises(TruncatedLogError, match="Run status group"):
        parse_fio(text[: text.index("Run status group")], "cut.log")
    with pytest.raises(TruncatedLogError):
        parse_fio(text[: text.index("randread: (groupid")], "header-only.log")


def test_empty_stdout_of_an_output_file_run_is_not_a_result():
    with pytest.raises(TruncatedLogError, match="empty"):
        parse_fio(fixture_text(TOOL, "jobfile-three-groups-json-stdout.log"))


GOOD = [
    "jobfile-three-groups-normal.log",
    "jobfile-three-groups.json",
    "null-engine-normal-split.stdout",
    "quirk-json-filename-in-missing-dir-is-created.log",
    "randread-4k-eta-always.log",
    "randread-4k-libaio-qd32-json.log",
    "randread-4k-libaio-qd32-normal.log",
    "randread-4k-terse.log",
    "randrw70-4k-2jobs-normal.log",
    "seqwrite-1m-psync-2jobs-group-jsonplus.log",
]


def test_every_good_capture_parses_to_finite_non_negative_numbers():
    names = {p.name for p in (DATA / TOOL).iterdir() if not p.name.startswith("bad-")}
    # not results: the job file, the empty stdout of the --output run, the empty stderr of a split run
    assert names - set(GOOD) == {"two-groups.fio", "jobfile-three-groups-json-stdout.log", "null-engine-normal-split.stderr"}
    for name in GOOD:
        records = parse_fio(fixture_text(TOOL, name), name)
        assert records and all(r["value"] >= 0 and r["value"] == r["value"] for r in records), name
