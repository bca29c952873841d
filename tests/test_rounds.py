"""A measurement job measures one variant on all its platforms in rounds, for real: native and lxc on
the local testbed, a cheap benchmark (docs/methodology.md, "Run order")."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import REPO
from virtrepro.planning.config import config_with_files, plan_rounds
from virtrepro.measurement.job import plan_entry

VARIANT = "threads-1_prime-20000_seconds-1"


def _measure(tmp_path, entry):
    config_file = tmp_path / "config.json"
    return subprocess.run(
        [sys.executable, "-m", "virtrepro.measurement.job", "--data-dir", str(tmp_path / "data"), "--config-file",
         str(config_file), "--plan-entry", entry],
        cwd=REPO, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO / "workflow")}, timeout=600)


def test_one_job_measures_a_variant_on_two_platforms_in_rounds(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("containers need root")
    config = config_with_files([], {"testbed": "local", "scale": "quick", "data_dir": str(tmp_path / "data"),
                                    "benchmarks": ["sysbench_cpu"], "platforms": ["native", "lxc"],
                                    "scales": {"quick": {"sysbench_cpu": {"threads": [1], "repetitions": 3}}}})
    (tmp_path / "config.json").write_text(json.dumps(config))
    job, = [j for j in plan_rounds(config, ["native", "lxc"]) if j.variant.key == VARIANT]
    assert job.platforms == ["native", "lxc"] and job.reps_label == "3"
    done = _measure(tmp_path, plan_entry(job, None))
    assert done.returncode == 0, done.stderr[-3000:]
    data = tmp_path / "data" / "raw" / "local"

    def sidecar(platform, rep):
        return json.loads((data / platform / "sysbench_cpu" / VARIANT / f"rep-{rep}.json").read_text())

    runs = sorted((sidecar(p, r)["started_utc"], p, r) for p in ("native", "lxc") for r in range(3))
    # round 0: native then lxc; round 1: lxc then native; round 2: native then lxc
    assert [(p, r) for _, p, r in runs] == [("native", 0), ("lxc", 0), ("lxc", 1), ("native", 1), ("native", 2), ("lxc", 2)]
    for (_, platform, rep), position in zip(runs, [0, 1, 0, 1, 0, 1]):
        record = sidecar(platform, rep)
        assert record["sidecar_version"] == 3 and "order" not in record
        assert (record["round"], record["position"]) == (rep, position)
        assert record["round_order"] == (["native", "lxc"] if rep % 2 == 0 else ["lxc", "native"])
        # lxc's container stays up for the job and is frozen while native measures; native has nothing to freeze
        assert record["frozen"] == (["lxc"] if platform == "native" else [])
    marker = job.marker_path(tmp_path / "data")
    assert marker == data / "rounds" / "sysbench_cpu" / f"{VARIANT}.reps-3.json"
    recorded = json.loads(marker.read_text())
    assert {p: sorted(v["logs_sha256"]) for p, v in recorded["platforms"].items()} == \
        {p: ["rep-0.log", "rep-1.log", "rep-2.log"] for p in ("native", "lxc")}
    # resumed after a log is gone: only that repetition is measured, in its round's place
    (data / "lxc" / "sysbench_cpu" / VARIANT / "rep-1.log").unlink()
    (data / "lxc" / "sysbench_cpu" / VARIANT / "rep-1.json").unlink()
    before = {p: p.stat().st_mtime_ns for p in data.rglob("rep-*.log")}
    done = _measure(tmp_path, plan_entry(job, None))
    assert done.returncode == 0, done.stderr[-3000:]
    after = {p: p.stat().st_mtime_ns for p in data.rglob("rep-*.log")}
    assert set(after) - set(before) == {data / "lxc" / "sysbench_cpu" / VARIANT / "rep-1.log"}
    assert all(after[p] == before[p] for p in before)
    again = sidecar("lxc", 1)
    assert (again["round"], again["position"], again["round_order"], again["frozen"]) == (1, 0, ["lxc", "native"], [])
