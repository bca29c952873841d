"""lmbench for real on every platform of a local testbed (native, lxc, podman, qemu-tcg), in tiny
sizes: each run is a complete log that the benchmark's parser accepts as the run it asked for."""

from __future__ import annotations

import json

import pytest
import yaml

from conftest import REPO, require_tools
from virtrepro.rawdata import rawlog
from virtrepro.benchmarks import BENCHMARKS
from virtrepro.planning.config import plan, validate_config
from virtrepro.guests import stop_guests
from virtrepro.measurement.job import measure
from virtrepro.testbed.kinds import LocalTestbed

pytestmark = pytest.mark.integration

TESTBED = "pytest-lmbench"
PLATFORMS = ["native", "lxc", "podman", "qemu-tcg"]


@pytest.fixture(scope="module")
def config(tmp_path_factory, built_image):
    require_tools("/usr/sbin/sshd", "lxc-start", "podman", "qemu-system-x86_64")
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    cfg["testbed"] = TESTBED
    cfg["testbeds"][TESTBED] = {"kind": "local"}
    cfg["repetitions"] = 1
    cfg["platforms"] = PLATFORMS
    cfg["benchmarks"] = ["lmbench"]
    cfg["scales"]["quick"]["lmbench"].update(syscalls=["null", "open"], ctx_processes=[2], ctx_sizes_kb=[0],
                                             mem_rd_mib=1, bw_mem_mib=[8], bw_mem_ops=["rd"])
    validate_config(cfg)
    yield cfg
    stop_guests(TESTBED)
    LocalTestbed(TESTBED).down()


def test_lmbench_runs_on_every_platform(config, tmp_path):
    bench = BENCHMARKS["lmbench"]
    seen = set()
    for run in plan(config):
        log = measure(run, config, tmp_path / "data")
        assert rawlog.is_complete(log)
        meta = json.loads(rawlog.sidecar_path(log).read_text())
        assert meta["exit_status"] == 0 and meta["tool_version"].startswith("lmbench 3.0"), run.platform
        # the quick scale runs every program on one CPU: the command found it and taskset ran (exit 0)
        assert "taskset -c $cpu" in meta["command"] and meta["placement"]["how"].startswith("taskset"), run.platform
        records = bench.parse(log.read_text(), str(log), run.variant.param_dict)
        assert {r["metric"] for r in records} == {"syscall_latency", "context_switch", "memory_latency", "memory_bandwidth"}
        assert all(r["value"] > 0 for r in records)
        seen.add(run.platform)
    assert seen == set(PLATFORMS)
