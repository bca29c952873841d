"""Raw logs are kept, never replaced; the tidy table comes from them and only from them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from conftest import DATA
from virtrepro import rawlog, results
from virtrepro.parsers import ParseError, TruncatedLogError

IOZONE_DIR = "raw/tb/native/iozone/record-1m_sizes-1m-64m_tests-write+read"
SYSBENCH_DIR = "raw/tb/native/sysbench_cpu/threads-1_prime-20000_seconds-10"
SYSBENCH_2_DIR = "raw/tb/native/sysbench_cpu/threads-2_prime-10000_seconds-6"


def place(data: Path, directory: str, rep: int, fixture: Path, status: str = "complete") -> Path:
    """Put a capture at ``directory``/rep-<rep>.log with a sidecar that describes that place."""
    target = data / directory / f"rep-{rep}.log"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(fixture, target)
    _, testbed, platform, benchmark, variant = Path(directory).parts
    parameters = dict(part.split("-", 1) for part in variant.split("_"))
    rawlog.sidecar_path(target).write_text(json.dumps({
        "status": status, "command": "captured", "testbed": testbed, "platform": {"name": platform},
        "benchmark": benchmark, "variant": variant, "parameters": parameters, "repetition": rep, "log": target.name,
    }))
    return target


@pytest.fixture
def data(tmp_path):
    place(tmp_path, IOZONE_DIR, 0, DATA / "iozone" / "auto-r1m-n1m-g64m-i0-i1.log")
    place(tmp_path, SYSBENCH_DIR, 0, DATA / "sysbench" / "cpu-1thread-10s.log")
    place(tmp_path, SYSBENCH_DIR, 1, DATA / "sysbench" / "cpu-1thread-10s.log")
    return tmp_path


def test_commit_gives_the_final_name_and_never_replaces(tmp_path):
    log = tmp_path / "rep-0.log"
    partial = rawlog.temporary_path(log)
    partial.write_text("first")
    rawlog.commit(partial, log, {"command": "x"})
    assert log.read_text() == "first" and not partial.exists()
    assert rawlog.is_complete(log)
    assert json.loads(rawlog.sidecar_path(log).read_text())["status"] == "complete"
    again = rawlog.temporary_path(log)
    again.write_text("second")
    with pytest.raises(rawlog.RawLogExists):
        rawlog.commit(again, log, {"command": "x"})
    assert log.read_text() == "first"


def test_failed_run_is_kept_under_another_name(tmp_path):
    log = tmp_path / "rep-3.log"
    partial = rawlog.temporary_path(log)
    partial.write_text("half a run")
    failed = rawlog.keep_failed(partial, log, {"error": "boom"}, "20261122T000000Z")
    assert failed.name == "rep-3.failed-20261122T000000Z.log" and failed.read_text() == "half a run"
    assert json.loads(failed.with_suffix(".json").read_text())["status"] == "failed"
    assert not log.exists() and not rawlog.is_complete(log)
    assert results.raw_logs(tmp_path.parent, tmp_path.name) == []


def test_table_has_the_documented_columns_and_real_values(data):
    frame = results.build_table(data, "tb")
    assert list(frame.columns[: len(results.COLUMNS)]) == results.COLUMNS
    cpu = frame[(frame["benchmark"] == "sysbench_cpu") & (frame["metric"] == "events_per_second")]
    assert sorted(cpu["repetition"]) == [0, 1]
    assert set(cpu["value"]) == {1141.43}
    io = frame[(frame["benchmark"] == "iozone") & (frame["metric"] == "read") & (frame["file_size_kb"] == 32768)]
    assert io["value"].tolist() == [7811336]
    assert io["source_log"].tolist() == [f"{IOZONE_DIR}/rep-0.log"]
    assert set(frame["testbed"]) == {"tb"} and set(frame["platform"]) == {"native"}


def test_truncated_log_stops_the_table_naming_the_file(data):
    bad = place(data, IOZONE_DIR, 1, DATA / "iozone" / "bad-truncated-sigterm.log")
    with pytest.raises(TruncatedLogError) as error:
        results.build_table(data, "tb")
    assert str(bad.relative_to(data)) in str(error.value)


def test_log_without_complete_sidecar_is_refused(data):
    log = place(data, SYSBENCH_DIR, 2, DATA / "sysbench" / "cpu-1thread-10s.log")
    rawlog.sidecar_path(log).unlink()
    with pytest.raises(results.IncompleteLogError, match="rep-2.log"):
        results.build_table(data, "tb")
    place(data, SYSBENCH_DIR, 2, DATA / "sysbench" / "cpu-1thread-10s.log", status="running")
    with pytest.raises(ParseError, match="not 'complete'"):
        results.build_table(data, "tb")


def test_load_caches_and_rebuilds_when_a_log_changes(data):
    first = results.load("tb", data)
    paths = results.table_paths(data, "tb")
    assert paths["parquet"].exists() and paths["csv"].exists() and paths["manifest"].exists()
    stamp = paths["parquet"].stat().st_mtime_ns
    second = results.load("tb", data)
    assert paths["parquet"].stat().st_mtime_ns == stamp  # cache hit: not rewritten
    pd.testing.assert_frame_equal(first, second, check_dtype=False)
    place(data, SYSBENCH_2_DIR, 0, DATA / "sysbench" / "cpu-histogram-p99-interval.log")
    third = results.load("tb", data)
    assert len(third) > len(first)
    assert 4565.97 in set(third["value"])
    csv = pd.read_csv(paths["csv"])
    assert len(csv) == len(third)


def test_load_rebuild_false_never_parses(data):
    with pytest.raises(FileNotFoundError):
        results.load("tb", data, rebuild=False)


def test_a_record_label_named_like_a_column_never_replaces_it():
    from virtrepro.results import _labels

    record = {"metric": "time", "unit": "s", "value": 1.5, "benchmark": "EP", "class": "S"}
    assert _labels(record) == {"metric": "time", "unit": "s", "value": 1.5, "label_benchmark": "EP", "class": "S"}
