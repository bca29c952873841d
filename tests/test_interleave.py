"""python -m virtrepro.measurement.interleave: a variant measured on several platforms in alternating rounds, for real."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from conftest import REPO
from virtrepro.planning.config import round_order

VARIANT = "threads-1_prime-20000_seconds-1"


def test_the_order_reverses_every_round():
    assert [round_order(["a", "b", "c"], r) for r in range(3)] == [["a", "b", "c"], ["c", "b", "a"], ["a", "b", "c"]]


def interleave(tmp_path, *extra):
    overlay = tmp_path / "overlay.yaml"  # merged over config/config.yaml, as Snakemake merges --configfile
    overlay.write_text(yaml.safe_dump({"scales": {"quick": {"sysbench_cpu": {"threads": [1]}}}}))
    return subprocess.run(
        [sys.executable, "-m", "virtrepro.measurement.interleave", "--configfile", str(overlay), "--data-dir", str(tmp_path / "data"),
         "--testbed", "local", "--scale", "quick", "--benchmark", "sysbench_cpu", "--variant", VARIANT, *extra],
        cwd=REPO, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO / "workflow")}, timeout=600)


def test_two_platforms_are_measured_round_by_round_in_alternating_order(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("containers need root")
    done = interleave(tmp_path, "--platforms", "native", "lxc", "--rounds", "2")
    assert done.returncode == 0, done.stderr[-2000:]
    started = []
    for platform in ("native", "lxc"):
        for rep in (0, 1):
            sidecar = json.loads((tmp_path / "data" / "raw" / "local" / platform / "sysbench_cpu" / VARIANT /
                                  f"rep-{rep}.json").read_text())
            assert sidecar["exit_status"] == 0 and sidecar["platform"]["name"] == platform
            assert sidecar["invocation"][0] == "python -m virtrepro.measurement.interleave"  # the command that measured it
            started.append((sidecar["started_utc"], platform, rep))
    # round 0: native then lxc; round 1: lxc then native
    assert [(p, r) for _, p, r in sorted(started)] == [("native", 0), ("lxc", 0), ("lxc", 1), ("native", 1)]
    # run again: every log is complete, nothing is measured again
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "data" / "raw").rglob("rep-*.log")}
    assert interleave(tmp_path, "--platforms", "native", "lxc", "--rounds", "2").returncode == 0
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "data" / "raw").rglob("rep-*.log")} == before


def test_a_platform_named_twice_is_refused(tmp_path):
    done = interleave(tmp_path, "--platforms", "native", "native", "--rounds", "1")
    assert done.returncode == 2 and "two or more, each once" in done.stderr
