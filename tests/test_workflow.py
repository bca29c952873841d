"""The whole path, as a user runs it: Snakemake -> SSH -> real benchmarks -> raw logs -> table -> notebooks -> figures."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import DATA, REPO, require_tools
from virtrepro.rawdata import rawlog

pytestmark = pytest.mark.integration

SNAKEMAKE = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--cores", "2"]

SMALL = {
    "testbed": "wf-local",
    "platforms": ["native"],
    "repetitions": None,
    "benchmarks": ["sysbench_cpu", "iozone", "iozone_disk"],
    "notebooks": ["walters2008", "kumar2013", "regola2010"],
    "testbeds": {"wf-local": {"kind": "local"}},
    "scales": {
        "quick": {
            "sysbench_cpu": {"repetitions": 2, "threads": [1], "cpu_max_prime": 5000, "seconds": 1},
            "iozone": {"repetitions": 2, "record_size": "1m", "min_file_size": "1m", "max_file_size": "4m", "tests": ["write", "read"]},
            "iozone_disk": {"repetitions": 2, "file_size": "4m", "record_size": "1m", "guest_memory_mb": 512,
                            "disk_formats": ["qcow2"], "cache_modes": ["none"]},
        },
        "paper": {
            "sysbench_cpu": {"repetitions": 50, "threads": [1, "all"], "cpu_max_prime": 20000, "seconds": 30},
            "iozone": {"repetitions": 10, "record_size": "1m", "min_file_size": "1m", "max_file_size": "512m", "tests": ["write", "read"]},
            "iozone_disk": {"repetitions": 10, "file_size": "1g", "record_size": "1m", "guest_memory_mb": 512,
                            "disk_formats": ["raw", "qcow2", "vmdk"], "cache_modes": ["none", "writeback", "writethrough"]},
        },
    },
}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    require_tools("/usr/sbin/sshd", "sysbench", "iozone")
    work = tmp_path_factory.mktemp("workflow")
    config = {**SMALL, "data_dir": str(work / "data"), "figures_dir": str(work / "figures")}
    (work / "config.yaml").write_text(yaml.safe_dump(config))
    return work


def snakemake(work: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "VIRTREPRO_STATE": str(work / "state")}
    env.pop("VIRTREPRO_CONFIG", None)
    env.pop("VIRTREPRO_TESTBED_OWNER", None)
    env.pop("VIRTREPRO_INVOCATION", None)
    return subprocess.run(
        [*SNAKEMAKE, "--directory", str(work), "--configfile", str(work / "config.yaml"), *args],
        capture_output=True, text=True, env=env, timeout=900,
    )


def raw_logs(work: Path) -> list[Path]:
    return sorted((work / "data" / "raw" / "wf-local").glob("*/*/*/rep-*.log"))


def markers(work: Path) -> list[Path]:
    return sorted((work / "data" / "raw" / "wf-local" / "rounds").glob("*/*.reps-*.json"))


def sshd_left(work: Path) -> list[str]:
    out = subprocess.run(["ps", "-ww", "-eo", "stat,args"], capture_output=True, text=True).stdout
    return [l for l in out.splitlines() if str(work / "state") in l and not l.startswith("Z")]


def test_full_run_produces_logs_table_notebooks_and_figures(workdir):
    result = snakemake(workdir)
    assert result.returncode == 0, result.stderr[-4000:]
    logs = raw_logs(workdir)
    assert len(logs) == 6  # 2 repetitions each of sysbench, iozone, iozone_disk
    assert all(log.with_suffix(".json").exists() for log in logs)
    # one measurement job per variant (on all its platforms, in rounds): its marker lists the logs
    marker_files = markers(workdir)
    assert len(marker_files) == 3
    for marker in marker_files:
        content = json.loads(marker.read_text())
        assert marker.name.endswith(".reps-2.json") and list(content["platforms"]) == ["native"]
        assert content["platforms"]["native"]["repetitions"] == 2
        assert sorted(content["platforms"]["native"]["logs_sha256"]) == ["rep-0.log", "rep-1.log"]
    tables = workdir / "data" / "tables"
    assert (tables / "wf-local.parquet").exists() and (tables / "wf-local.csv").exists()
    assert (tables / "wf-local.claims.csv").exists()
    for paper, figure in [
        ("walters2008", "fig2-iozone-reader-writer"),
        ("kumar2013", "fig4-cpu-overhead"),
        ("regola2010", "table2-iozone-disk-formats"),
    ]:
        assert (workdir / "data" / "executed" / "wf-local" / f"{paper}.ipynb").exists()
        for ext in ("png", "pdf"):
            # not the reference testbed: its figures go to figures/<testbed>/ (virtrepro.figures.figures_home)
            assert (workdir / "figures" / "wf-local" / paper / f"{figure}.{ext}").stat().st_size > 1000
    assert sorted(p.name for p in (workdir / "figures").iterdir()) == ["wf-local"]
    assert sshd_left(workdir) == []


def test_second_run_does_nothing(workdir):
    result = snakemake(workdir)
    assert result.returncode == 0
    assert "Nothing to be done" in result.stdout + result.stderr


def test_deleting_one_log_reruns_only_that_run(workdir):
    logs = raw_logs(workdir)
    victim, others = logs[0], logs[1:]
    stamps = {p: p.stat().st_mtime_ns for p in others}
    victim.unlink()
    dry = snakemake(workdir, "-n")
    stats = dry.stdout + dry.stderr
    # (a dry run prints its job table twice)
    # the variant's one job, which measures only the missing repetition
    measure_lines = {tuple(line.split()) for line in stats.splitlines() if line.startswith("measure ")}
    assert measure_lines == {("measure", "1")}
    result = snakemake(workdir)
    assert result.returncode == 0, result.stderr[-4000:]
    assert victim.exists()
    assert {p: p.stat().st_mtime_ns for p in others} == stamps
    # and then nothing is left to do
    again = snakemake(workdir, "-n")
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr


def test_truncated_iozone_log_stops_the_workflow_naming_the_file(workdir):
    iozone_dir = next(p for p in (workdir / "data" / "raw" / "wf-local" / "native" / "iozone").iterdir() if p.is_dir())
    # (the planted log belongs to the iozone sweep, whose third repetition the config below asks for)
    bad = iozone_dir / "rep-2.log"
    shutil.copy(DATA / "iozone" / "bad-truncated-sigterm.log", bad)
    # a sidecar that fits its place and its log (a copy of rep-1's, renumbered, with the planted log's
    # digest): the log itself is what is wrong
    sidecar = json.loads((iozone_dir / "rep-1.json").read_text())
    bad.with_suffix(".json").write_text(json.dumps({**sidecar, "repetition": 2, "log": "rep-2.log",
                                                    **rawlog.digest_record(bad.read_bytes(), rawlog.TAKEN_AT_COMMIT)}))
    config = yaml.safe_load((workdir / "config.yaml").read_text())
    config["scales"]["quick"]["iozone"]["repetitions"] = 3
    (workdir / "config-3.yaml").write_text(yaml.safe_dump(config))
    env = {**os.environ, "VIRTREPRO_STATE": str(workdir / "state")}
    result = subprocess.run(
        [*SNAKEMAKE, "--directory", str(workdir), "--configfile", str(workdir / "config-3.yaml")],
        capture_output=True, text=True, env=env, timeout=900,
    )
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "rep-2.log" in output and "iozone reported: iozone: interrupted" in output, output[-3000:]
    assert bad.exists()  # the bad log is left for the user to look at, not deleted


def test_bad_config_stops_before_anything_runs_naming_the_key(workdir):
    result = snakemake(workdir, "-n", "--config", "scale=huge")
    assert result.returncode != 0
    assert "config key 'scale'" in result.stdout + result.stderr


def test_a_rule_that_serves_the_verdict_names_its_markers_the_workflow_accepts(tmp_path):
    """target: claims gives markers named ...reps-6to30-w0.5-c0.95-sr-m0.05...; the workflow's
    wildcard for them (workflow/rules/common.smk) must accept that name, or the dry run fails."""
    config = {**SMALL, "benchmarks": ["sysbench_cpu"], "notebooks": [], "data_dir": str(tmp_path / "data"),
              "figures_dir": str(tmp_path / "figures")}
    config["scales"] = {**SMALL["scales"], "quick": {**SMALL["scales"]["quick"], "sysbench_cpu": {
        **SMALL["scales"]["quick"]["sysbench_cpu"],
        "repetitions": {"min": 2, "max": 30, "rel_half_width": 0.5, "metrics": ["events_per_second"],
                        "target": "claims"}}}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    dry = snakemake(tmp_path, "-n", str(tmp_path / "data" / "raw" / "wf-local" / "rounds" / "sysbench_cpu"
                                        / "threads-1_prime-5000_seconds-1.reps-6to30-w0.5-c0.95-sr-m0.05.json"))
    assert dry.returncode == 0, dry.stderr[-4000:]
    assert "rule measure:" in dry.stdout + dry.stderr
