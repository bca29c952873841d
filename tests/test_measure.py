"""One real measurement over real SSH on the local testbed: kept, never replaced, failures kept aside."""

from __future__ import annotations

import copy
import dataclasses
import json
import time
from pathlib import Path

import pytest
import yaml

from conftest import REPO, require_tools
from virtrepro.rawdata import rawlog
from virtrepro.benchmarks import BENCHMARKS
from virtrepro.planning.config import plan, validate_config
from virtrepro.measurement.job import MeasurementError, measure
from virtrepro.testbed.kinds import LocalTestbed

pytestmark = pytest.mark.integration


@pytest.fixture
def config(tmp_path, monkeypatch):
    require_tools("/usr/sbin/sshd", "sysbench", "iozone", "mbw", "ioping")
    monkeypatch.setenv("VIRTREPRO_STATE", str(tmp_path / "state"))
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    cfg["testbed"] = "pytest-local"
    cfg["testbeds"]["pytest-local"] = {"kind": "local"}
    cfg["repetitions"] = 1
    cfg["platforms"] = ["native"]
    cfg["scales"]["quick"]["sysbench_cpu"].update(threads=[1], seconds=1)
    cfg["scales"]["quick"]["iozone"].update(min_file_size="1m", max_file_size="4m")
    cfg["scales"]["quick"]["sysbench_memory"].update(operations=["read"], block_sizes=["1M"], seconds=1)
    cfg["scales"]["quick"]["sysbench_fileio"].update(modes=["rndrw"], total_size="16M", seconds=1)
    cfg["scales"]["quick"]["mbw"].update(runs=2, array_mib=16)
    cfg["scales"]["quick"]["ioping"].update(count=3)
    cfg["benchmarks"] = ["sysbench_cpu", "sysbench_memory", "sysbench_fileio", "mbw", "ioping", "iozone", "iozone_disk"]
    validate_config(cfg)
    yield cfg
    LocalTestbed("pytest-local", tmp_path / "state").down()


def run_of(config, benchmark):
    return next(r for r in plan(config) if r.benchmark == benchmark)


MAIN_METRIC = {
    "sysbench_cpu": "events_per_second",
    "sysbench_memory": "throughput",
    "sysbench_fileio": "read_throughput",
    "mbw": "copy_bandwidth_avg",
    "ioping": "iops",
    "iozone": "read",
    "iozone_disk": "random_write",
}


@pytest.mark.parametrize("benchmark", sorted(MAIN_METRIC))
def test_real_run_writes_log_and_provenance(config, tmp_path, benchmark):
    run = run_of(config, benchmark)
    log = measure(run, config, tmp_path / "data")
    assert rawlog.is_complete(log)
    records = BENCHMARKS[benchmark].parse(log.read_text(), str(log), run.variant.param_dict)
    main = [r for r in records if r["metric"] == MAIN_METRIC[benchmark]]
    assert main and all(r["value"] > 0 for r in main)
    meta = json.loads(rawlog.sidecar_path(log).read_text())
    assert meta["exit_status"] == 0 and meta["status"] == "complete"
    template = BENCHMARKS[benchmark].run(run.variant)
    if "@SCRATCH@" in template:
        # a scratch directory of its own, removed after the run
        assert meta["command"] == template.replace("@SCRATCH@", meta["scratch"])
        assert meta["scratch"].startswith("/var/tmp/virtrepro/") and not Path(meta["scratch"]).exists()
    else:
        assert meta["command"] == template and meta["scratch"] is None
    assert meta["started_utc"] < meta["ended_utc"]
    for fact in ("kernel", "cpu_model", "cores", "mem_total_kb", "os"):
        assert meta["host"][fact], fact
    assert meta["tool_version"] != "unknown"
    assert meta["platform"]["name"] == "native" and meta["endpoint"]["hostname"] == "127.0.0.1"
    assert "BEGIN OPENSSH " + "PRIVATE KEY" not in log.read_text() + json.dumps(meta)


def test_rerun_keeps_the_complete_log(config, tmp_path):
    run = run_of(config, "sysbench_cpu")
    log = measure(run, config, tmp_path / "data")
    before = (log.read_bytes(), log.stat().st_mtime_ns)
    assert measure(run, config, tmp_path / "data") == log
    assert (log.read_bytes(), log.stat().st_mtime_ns) == before


def test_failing_tool_never_becomes_a_log(config, tmp_path, monkeypatch):
    run = run_of(config, "sysbench_cpu")
    # a real sysbench with an option it does not know: it prints an error and exits 1
    monkeypatch.setattr(type(BENCHMARKS["sysbench_cpu"]), "run", lambda self, v: "sysbench cpu --no-such-option=1 run")
    with pytest.raises(MeasurementError, match="invalid option: --no-such-option=1") as error:
        measure(run, config, tmp_path / "data")
    log = run.log_path(tmp_path / "data")
    assert not log.exists()
    failed = list(log.parent.glob("rep-0.failed-*.log"))
    assert len(failed) == 1 and str(failed[0]) in str(error.value)
    assert "invalid option" in failed[0].read_text()
    assert json.loads(failed[0].with_suffix(".json").read_text())["status"] == "failed"


def test_a_killed_run_says_it_was_killed(config, tmp_path, monkeypatch):
    """The OOM killer ends a run with SIGKILL (mbw at 1024 MiB arrays in a 2 GiB container printed
    only "Killed"): the error names the exit status and what it means, beside the parser's complaint."""
    run = run_of(config, "mbw")
    monkeypatch.setattr(type(BENCHMARKS["mbw"]), "run", lambda self, v: "mbw -n 2 16 | head -3; kill -KILL $$")
    with pytest.raises(MeasurementError, match=r"mbw exited with status 137: killed \(SIGKILL: the out-of-memory killer"):
        measure(run, config, tmp_path / "data")
    assert not run.log_path(tmp_path / "data").exists()
    assert "Getting down to business" in next(run.log_path(tmp_path / "data").parent.glob("rep-0.failed-*.log")).read_text()


def test_a_run_past_its_timeout_is_killed_and_fails(config, tmp_path, monkeypatch):
    """The remote side enforces the timeout too: the tool does not keep running after the job gives up."""
    import subprocess

    run = run_of(config, "sysbench_cpu")
    marker = "--cpu-max-prime=20011"  # a command line no other test uses, to find leftovers by
    monkeypatch.setattr(type(BENCHMARKS["sysbench_cpu"]), "run", lambda self, v: f"sysbench cpu {marker} --time=60 run")
    with pytest.raises(MeasurementError):
        measure(run, config, tmp_path / "data", timeout=3)
    assert not run.log_path(tmp_path / "data").exists()
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert not [line for line in ps.splitlines() if marker in line]


def test_a_variant_job_measures_only_missing_repetitions_and_marks_them_complete(config, tmp_path, monkeypatch):
    import hashlib

    from virtrepro.planning.config import plan_rounds
    from virtrepro.measurement.job import measure_rounds

    config = {**config, "repetitions": 3}
    job = next(j for j in plan_rounds(config) if j.benchmark == "sysbench_cpu")
    (variant,) = job.plans
    data = tmp_path / "data"
    first = measure(variant.runs()[0], config, data)
    stamp = first.stat().st_mtime_ns
    # the other two fail: the first failure's round ends, the rounds stop; it is reported, no log, no marker
    good_command = type(BENCHMARKS["sysbench_cpu"]).run
    monkeypatch.setattr(type(BENCHMARKS["sysbench_cpu"]), "run", lambda self, v: "sysbench cpu --no-such-option=1 run")
    with pytest.raises(MeasurementError, match="1 repetitions failed .the rounds stop after round 1.") as error:
        measure_rounds(job, config, data)
    assert "native rep 1:" in str(error.value)
    assert [r.repetition for r in variant.runs() if r.log_path(data).exists()] == [0]
    assert first.stat().st_mtime_ns == stamp and not job.marker_path(data).exists()
    monkeypatch.setattr(type(BENCHMARKS["sysbench_cpu"]), "run", good_command)
    marker = measure_rounds(job, config, data)
    assert marker == job.marker_path(data) and marker.name.endswith(".reps-3.json")
    content = json.loads(marker.read_text())
    logs = [r.log_path(data) for r in variant.runs()]
    assert content["platforms"]["native"]["logs_sha256"] == {log.name: hashlib.sha256(log.read_bytes()).hexdigest()
                                                            for log in logs}
    assert first.stat().st_mtime_ns == stamp
    # the marker is newer than the variant's directory (what Snakemake compares)
    assert marker.stat().st_mtime_ns >= variant.directory(data).stat().st_mtime_ns
    time.sleep(0.05)  # file times tick in kernel jiffies: a user's deletion comes later than that
    logs[1].unlink()
    logs[1].with_suffix(".json").unlink()
    assert variant.directory(data).stat().st_mtime_ns > marker.stat().st_mtime_ns
    kept = {log: log.stat().st_mtime_ns for log in (logs[0], logs[2])}
    measure_rounds(job, config, data)
    assert logs[1].exists() and {log: log.stat().st_mtime_ns for log in kept} == kept
    assert json.loads(logs[1].with_suffix(".json").read_text())["round"] == 1


def test_the_sidecar_records_what_the_orchestrator_and_harness_used_during_the_run(config, tmp_path):
    import os
    import subprocess
    import sys

    # an "orchestrator" that sleeps, as a Snakemake process waiting for its job should
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        run = run_of(config, "sysbench_cpu")
        log = measure(run, config, tmp_path / "data", owner_pid=sleeper.pid)
    finally:
        sleeper.kill()
    used = json.loads(log.with_suffix(".json").read_text())["harness_cpu"]
    assert set(used) == {"orchestrator_cpu_s", "orchestrator_share_of_a_core", "harness_cpu_s", "harness_share_of_a_core",
                         "resolution_s"}
    assert 0 <= used["orchestrator_share_of_a_core"] < 0.01
    assert 0 <= used["harness_cpu_s"] and 0 <= used["harness_share_of_a_core"] < 0.5


def test_a_variant_jobs_repetitions_share_one_connection_and_read_the_load_anew(config, tmp_path, monkeypatch):
    """The repetitions of one job reuse each instance's SSH connection (one handshake and runner);
    the host facts are asked once, the load average every repetition; the connections are closed
    when the job ends."""
    from virtrepro.measurement import job as measure_module
    from virtrepro.testbed import hosts as hosts_module
    from virtrepro.measurement import connections
    from virtrepro.planning.config import plan_rounds

    opened, commands = [], []
    real_connect = hosts_module.connect

    def counting_connect(host, *args, **kwargs):
        connection = real_connect(host, *args, **kwargs)
        opened.append(connection)
        real_run = connection.run

        def run(command, **kw):
            commands.append(command)
            return real_run(command, **kw)

        connection.run = run
        return connection

    monkeypatch.setattr(connections, "connect", counting_connect)
    config = {**config, "repetitions": 3}
    job = next(j for j in plan_rounds(config) if j.benchmark == "sysbench_fileio")
    (variant,) = job.plans
    data = tmp_path / "data"
    measure_module.measure_rounds(job, config, data)
    # native: the instance is the testbed host (one connection for the run and the page-cache drop)
    assert len(opened) == 1, [c.host for c in opened]
    assert not opened[0].is_connected  # closed with the job
    assert sum("loadavg=" in c for c in commands) == 1  # the facts once
    assert commands.count("cat /proc/loadavg") == 2  # then the load, for reps 1 and 2
    # each reuse checks that the instance still answers: the cache drop of rep 0, the run and drop of reps 1-2
    assert commands.count("true") == 5
    sidecars = [json.loads(r.log_path(data).with_suffix(".json").read_text()) for r in variant.runs()]
    assert all(len(s["host"]["loadavg"].split()) == 3 for s in sidecars)
    assert len({s["host"]["cpu_model"] for s in sidecars}) == 1
    # outside a job each measurement connects anew
    opened.clear()
    measure(dataclasses.replace(variant.runs()[0], repetition=3), config, data)
    assert len(opened) == 2 and not any(c.is_connected for c in opened)


def test_a_network_job_reconnects_to_instances_restarted_between_repetitions(config, tmp_path):
    """native's network instances (namespaces with their own sshd) are stopped by the next
    repetition's start: the kept connections to them no longer answer and are opened anew."""
    require_tools("netperf", "netserver")
    from virtrepro.planning.config import plan_rounds
    from virtrepro.measurement.job import measure_rounds

    config = {**config, "repetitions": 2, "benchmarks": ["netperf"]}
    config["scales"]["quick"]["netperf"].update(rr_sizes=[1], stream_sizes=[4096], seconds=1)
    validate_config(config)
    job = next(j for j in plan_rounds(config) if j.benchmark == "netperf")
    (variant,) = job.plans
    marker = measure_rounds(job, config, tmp_path / "data")
    assert marker is not None and all(r.log_path(tmp_path / "data").exists() for r in variant.runs())


def test_a_job_measures_its_plan_entry_without_planning_or_the_environments_configuration(config, tmp_path, monkeypatch):
    # the workflow hands the job its plan entry and a configuration file; nothing is planned again
    import virtrepro.planning.config as config_module
    from virtrepro.planning.config import VariantRounds, plan_rounds, write_config_file
    from virtrepro.measurement.job import main, plan_entry

    monkeypatch.delenv("VIRTREPRO_CONFIG", raising=False)
    job = next(j for j in plan_rounds(config) if j.benchmark == "sysbench_cpu")
    (variant,) = job.plans
    assert VariantRounds.from_json(json.loads(plan_entry(job, None))["rounds"]) == job
    monkeypatch.setattr(config_module, "plan_variants", lambda *a, **k: pytest.fail("the job planned again"))
    monkeypatch.setattr(config_module, "plan_rounds", lambda *a, **k: pytest.fail("the job planned again"))
    data = tmp_path / "data"
    config_file = write_config_file(config, tmp_path / "job")
    assert main(["--data-dir", str(data), "--config-file", str(config_file), "--plan-entry", plan_entry(job, None),
                 "--expect-marker", str(job.marker_path(data))]) == 0
    assert job.marker_path(data).exists()
    assert all(rawlog.complete_record(run.log_path(data)).version == 3 for run in variant.runs())
