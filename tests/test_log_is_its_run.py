"""A raw log is the run it claims to be: log, sidecar and folder agree, one log holds one run, a broken
sidecar or log stops the table with the file named, and a commit pairs each log with its own sidecar."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import threading
from pathlib import Path

import pytest

from conftest import DATA, REPO
from virtrepro.rawdata import rawlog
from virtrepro import results
from virtrepro.benchmarks import BENCHMARKS
from virtrepro.planning.config import VariantPlan
from virtrepro.measurement.job import MeasurementError, measure, measure_variant
from virtrepro.parsers import ParseError, parse_sysbench

REFERENCE = REPO / "data" / "raw" / "reference-vm"
CPU = "native/sysbench_cpu"
ONE = "threads-1_prime-20000_seconds-5"
ALL = "threads-all_prime-20000_seconds-5"


def reference_copy(tmp_path: Path, *benchmarks: str) -> Path:
    """A data directory holding copies of some of the committed reference data."""
    for benchmark in benchmarks:
        shutil.copytree(REFERENCE / benchmark, tmp_path / "raw" / "reference-vm" / benchmark)
    return tmp_path


def copy_rep(data: Path, source: str, target: str) -> Path:
    """Copy a repetition's log and sidecar (paths under raw/) to another place, as a person might."""
    src, dst = data / "raw" / f"{source}.log", data / "raw" / f"{target}.log"
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, dst)
    shutil.copy(rawlog.sidecar_path(src), rawlog.sidecar_path(dst))
    return dst


def refused(data: Path, error=ParseError) -> str:
    with pytest.raises(error) as caught:
        results.build_table(data, "reference-vm")
    message = str(caught.value)
    assert "\n" not in message, message
    return message


# ------------------------------------------------------------ log, sidecar and folder agree

def test_the_copied_reference_data_builds(tmp_path):
    data = reference_copy(tmp_path, CPU)
    frame = results.build_table(data, "reference-vm")
    assert set(frame["variant"]) == {ONE, ALL}
    assert len(frame[frame["metric"] == "events_per_second"]) == 10


def test_a_repetition_copied_into_another_variant_is_refused(tmp_path):
    data = reference_copy(tmp_path, CPU)
    copy_rep(data, f"reference-vm/{CPU}/{ONE}/rep-0", f"reference-vm/{CPU}/{ALL}/rep-5")
    message = refused(data)
    assert f"{ALL}/rep-5.log" in message and ONE in message


def test_a_sidecar_edited_to_the_folder_variant_still_has_the_other_parameters(tmp_path):
    data = reference_copy(tmp_path, CPU)
    log = copy_rep(data, f"reference-vm/{CPU}/{ONE}/rep-0", f"reference-vm/{CPU}/{ALL}/rep-5")
    sidecar = rawlog.read_sidecar(log)
    sidecar.update(variant=ALL, repetition=5, log="rep-5.log")
    rawlog.sidecar_path(log).write_text(json.dumps(sidecar))
    message = refused(data)
    assert f"{ALL}/rep-5.log" in message and "parameters" in message


@pytest.mark.parametrize("target, wrong", [
    (f"reference-vm/{CPU}/{ONE}/rep-7", "repetition"),
    (f"reference-vm/native/sysbench_memory/{ONE}/rep-0", "benchmark"),
    (f"reference-vm/lxc/sysbench_cpu/{ONE}/rep-0", "platform"),
    (f"other-tb/{CPU}/{ONE}/rep-0", "testbed"),
])
def test_a_repetition_in_another_place_is_refused(tmp_path, target, wrong):
    data = reference_copy(tmp_path, CPU)
    copy_rep(data, f"reference-vm/{CPU}/{ONE}/rep-0", target)
    testbed = target.split("/")[0]
    with pytest.raises(ParseError) as caught:
        results.build_table(data, testbed)
    assert target.split("/", 1)[1] + ".log" in str(caught.value) and wrong in str(caught.value)


# ------------------------------------------------------------ sysbench: the log echoes its parameters

def sysbench_log(name: str) -> str:
    """A capture in tests/data/sysbench, or a log of the reference data (a path with folders)."""
    return (REFERENCE / name if "/" in name else DATA / "sysbench" / name).read_text()


# (benchmark, capture, the parameters it was run with, parameters it was not run with)
ECHO_CASES = [
    ("sysbench_cpu", "cpu-1thread-10s.log", {"threads": 1, "prime": 20000, "seconds": 10},
     [{"threads": 2}, {"prime": 10000}, {"seconds": 5}, {"seconds": 20}]),
    ("sysbench_cpu", "cpu-histogram-p99-interval.log", {"threads": 2, "prime": 10000, "seconds": 6},
     [{"threads": 1}, {"prime": 20000}]),
    ("cpu_scaling", "cpu-1thread-10s.log", {"vcpus": 1, "prime": 20000, "seconds": 10},
     [{"vcpus": 2}, {"prime": 10000}, {"seconds": 2}]),
    ("isolation", "cpu-histogram-p99-interval.log", {"resource": "cpu", "prime": 10000, "seconds": 6},
     [{"prime": 20000}, {"seconds": 2}]),
    ("sysbench_memory", "memory-write-seq-1k.log",
     {"oper": "write", "block": "1K", "total": "10G", "threads": 2, "seconds": 5},
     [{"oper": "read"}, {"block": "1M"}, {"total": "100G"}, {"threads": 1}, {"seconds": 2}]),
    ("sysbench_memory", "memory-read-rnd-1M.log",
     {"oper": "read", "block": "1M", "total": "100G", "threads": 1, "seconds": 10},
     [{"oper": "write"}, {"block": "1K"}, {"total": "10G"}, {"seconds": 20}]),
    ("memory_scaling", "memory-write-seq-1k.log",
     {"oper": "write", "block": "1K", "total": "10G", "threads": 2, "seconds": 5, "mem": "host"},
     [{"block": "1M"}, {"total": "100G"}, {"threads": 1}]),
    # the captures above ran fileio with 16 files; the benchmark runs it with 4, as in the reference data
    ("sysbench_fileio", "native/sysbench_fileio/mode-seqrd_size-1G_seconds-10/rep-0.log",
     {"mode": "seqrd", "size": "1G", "seconds": 10}, [{"mode": "rndrw"}, {"mode": "seqwr"}, {"size": "256M"}, {"seconds": 5}]),
    ("sysbench_fileio", "lxc/sysbench_fileio/mode-seqwr_size-1G_seconds-10/rep-1.log",
     {"mode": "seqwr", "size": "1G", "seconds": 10}, [{"mode": "seqrd"}, {"size": "256K"}, {"seconds": 2}]),
    ("sysbench_fileio", "qemu-tcg/sysbench_fileio/mode-rndrw_size-1G_seconds-10/rep-2.log",
     {"mode": "rndrw", "size": "1G", "seconds": 10}, [{"mode": "rndrd"}, {"size": "512M"}]),
]


@pytest.mark.parametrize("benchmark, capture, good, bad", ECHO_CASES, ids=lambda v: v if isinstance(v, str) else "")
def test_sysbench_log_is_checked_against_the_run_parameters(benchmark, capture, good, bad):
    text = sysbench_log(capture)
    assert BENCHMARKS[benchmark].parse(text, capture, good)
    for change in bad:
        with pytest.raises(ParseError, match=capture.rsplit("/", 1)[-1]):
            BENCHMARKS[benchmark].parse(text, capture, {**good, **change})


def test_fileio_log_of_another_thread_count_is_refused():
    # the benchmark runs sysbench fileio with its default single thread; this capture used two
    with pytest.raises(ParseError, match="thread"):
        BENCHMARKS["sysbench_fileio"].parse(sysbench_log("fileio-rndrw-1G-20s.log"), "x",
                                                {"mode": "rndrw", "size": "1G", "seconds": 20})


@pytest.mark.parametrize("first, second", [
    ("cpu-1thread-10s.log", "cpu-1thread-10s.log"),
    ("cpu-1thread-10s.log", "cpu-histogram-p99-interval.log"),
    ("memory-write-seq-1k.log", "memory-read-rnd-1M.log"),
    ("fileio-seqrd-1G-interval.log", "fileio-seqwr-1G-fsync.log"),
    ("fileio-seqrd-1G-interval.log", "fileio-seqrd-1G-interval.log"),
    ("cpu-1thread-10s.log", "bad-truncated-sigterm-cpu.log"),
])
def test_a_log_of_two_runs_is_refused(first, second):
    with pytest.raises(ParseError, match="one run"):
        parse_sysbench(sysbench_log(first) + sysbench_log(second), "two.log")


def test_a_reference_log_of_two_runs_is_refused_by_the_table(tmp_path):
    data = reference_copy(tmp_path, CPU)
    log = data / "raw" / "reference-vm" / CPU / ONE / "rep-1.log"
    other = data / "raw" / "reference-vm" / CPU / ONE / "rep-2.log"
    log.write_text(other.read_text() + log.read_text())
    with pytest.raises(rawlog.LogDigestError, match="rep-1.log"):  # not the bytes its sidecar recorded
        results.build_table(data, "reference-vm")
    sidecar = rawlog.read_sidecar(log)  # and with the sidecar made to fit, the parser still refuses it
    rawlog.sidecar_path(log).write_text(json.dumps({**sidecar, **rawlog.digest_record(log.read_bytes(), "by hand")}))
    message = refused(data)
    assert "rep-1.log" in message and "one run" in message


# ------------------------------------------------------------ a broken sidecar or log is named

@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '"complete"', "", "\x00\xff"])
def test_a_sidecar_that_is_not_a_json_object_is_named(tmp_path, content):
    data = reference_copy(tmp_path, CPU)
    log = data / "raw" / "reference-vm" / CPU / ONE / "rep-3.log"
    rawlog.sidecar_path(log).write_bytes(content.encode("latin-1"))
    message = refused(data, rawlog.RawLogError)
    assert f"{ONE}/rep-3.json" in message
    with pytest.raises(rawlog.RawLogError, match="rep-3.json"):
        rawlog.is_complete(log)


def test_an_unreadable_log_is_named(tmp_path):
    data = reference_copy(tmp_path, CPU)
    log = data / "raw" / "reference-vm" / CPU / ONE / "rep-3.log"
    log.unlink()
    log.mkdir()  # a log that cannot be read (this runs as root, so a mode of 000 would not stop it)
    message = refused(data, rawlog.RawLogError)
    assert f"{ONE}/rep-3.log" in message


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_a_log_without_read_permission_is_named(tmp_path):
    data = reference_copy(tmp_path, CPU)
    log = data / "raw" / "reference-vm" / CPU / ONE / "rep-3.log"
    log.chmod(0)
    assert f"{ONE}/rep-3.log" in refused(data, rawlog.RawLogError)


# ------------------------------------------------------------ one commit, one pair

def _commit_as(log: Path, run: int, barrier) -> str:
    partial = log.with_name(f".{log.name}.{os.getpid()}.{threading.get_ident()}.partial")
    partial.write_text(f"output of run {run}\n" * 50)
    barrier.wait()
    try:
        rawlog.commit(partial, log, {"run": run})
        return "committed"
    except rawlog.RawLogExists:
        partial.unlink()
        return "refused"


def _assert_one_pair(directory: Path, outcomes: list[str]) -> None:
    assert sorted(outcomes) == ["committed"] + ["refused"] * (len(outcomes) - 1), outcomes
    log = directory / "rep-0.log"
    run = rawlog.read_sidecar(log)["run"]
    assert log.read_text() == f"output of run {run}\n" * 50
    assert rawlog.is_complete(log)
    assert sorted(p.name for p in directory.iterdir()) == ["rep-0.json", "rep-0.log"]


def test_concurrent_commits_of_one_repetition_pair_each_log_with_its_sidecar_threads(tmp_path):
    workers = 6
    for attempt in range(150):
        directory = tmp_path / f"attempt-{attempt}"
        directory.mkdir()
        barrier = threading.Barrier(workers)
        outcomes: list[str] = []

        def one(run: int) -> None:
            try:
                outcomes.append(_commit_as(directory / "rep-0.log", run, barrier))
            except Exception as error:  # noqa: BLE001 - any other failure is what the test looks for
                outcomes.append(f"{type(error).__name__}: {error}")

        threads = [threading.Thread(target=one, args=(run,)) for run in range(workers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        _assert_one_pair(directory, outcomes)


def _process_commit(args) -> str:
    log, run, barrier = args
    try:
        return _commit_as(Path(log), run, barrier)
    except Exception as error:  # noqa: BLE001
        return f"{type(error).__name__}: {error}"


def test_concurrent_commits_of_one_repetition_pair_each_log_with_its_sidecar_processes(tmp_path):
    workers = 4
    context = multiprocessing.get_context("fork")
    with context.Manager() as manager, context.Pool(workers) as pool:
        for attempt in range(40):
            directory = tmp_path / f"attempt-{attempt}"
            directory.mkdir()
            barrier = manager.Barrier(workers)
            outcomes = pool.map(_process_commit, [(str(directory / "rep-0.log"), run, barrier) for run in range(workers)])
            _assert_one_pair(directory, outcomes)


def test_an_interrupted_commit_leaves_no_pair_and_the_next_commit_succeeds(tmp_path):
    # a commit killed after writing the sidecar and before linking the log leaves a sidecar alone
    log = tmp_path / "rep-0.log"
    rawlog.write_json(rawlog.sidecar_path(log), {"run": "killed", "status": "complete", "log": log.name})
    assert not rawlog.is_complete(log)
    partial = rawlog.temporary_path(log)
    partial.write_text("the new run")
    rawlog.commit(partial, log, {"run": "new"})
    assert log.read_text() == "the new run" and rawlog.read_sidecar(log)["run"] == "new"


# ------------------------------------------------------------ a complete log without its sidecar

def orphan(tmp_path: Path) -> tuple[VariantPlan, Path, str]:
    data = reference_copy(tmp_path, CPU)
    variant = next(v for v in BENCHMARKS["sysbench_cpu"].variants({"threads": [1], "cpu_max_prime": 20000, "seconds": 5}))
    plan = VariantPlan("reference-vm", "native", variant, 5)
    log = plan.runs()[2].log_path(data)
    rawlog.sidecar_path(log).unlink()
    return plan, log, log.read_text()


def test_a_log_without_its_sidecar_is_named_before_anything_runs(tmp_path):
    plan, log, text = orphan(tmp_path)
    with pytest.raises(rawlog.IncompleteLogError, match="rep-2.json"):
        rawlog.is_complete(log)
    # no testbed in the configuration: reaching for one to run the benchmark would fail differently
    with pytest.raises(MeasurementError) as caught:
        measure_variant(plan, {}, tmp_path)
    message = str(caught.value)
    assert "rep-2.json" in message and "missing" in message and "rep-2.log" in message
    assert "move" in message or "restore" in message  # says what to do
    with pytest.raises(MeasurementError, match="rep-2.json"):
        measure(plan.runs()[2], {}, tmp_path)
    assert log.read_text() == text
    assert not rawlog.sidecar_path(log).exists()
    assert not [p for p in log.parent.iterdir() if "partial" in p.name or "failed" in p.name]


@pytest.mark.parametrize("benchmark, log", [
    ("iozone", "native/iozone/record-1m_sizes-1m-512m_tests-write+read/rep-0.log"),
    ("iozone_disk", "qemu-tcg/iozone_disk/disk-qcow2_cache-none_size-1g_record-1m_mem-512_direct-True/rep-0.log"),
    ("fio", "lxc/fio/mode-randread_bs-4k_size-1g_seconds-10_direct-True/rep-0.log"),
    ("ioping", "native/ioping/count-50_interval-100ms_direct-True/rep-0.log"),
])
def test_other_logs_of_two_runs_are_refused(benchmark, log):
    path = REFERENCE / log
    params = rawlog.read_sidecar(path)["parameters"]
    assert BENCHMARKS[benchmark].parse(path.read_text(), log, params)
    with pytest.raises(ParseError, match="one run"):
        BENCHMARKS[benchmark].parse(path.read_text() * 2, log, params)
