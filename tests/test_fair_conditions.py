"""Every platform gets the same conditions but for its virtualization layer (docs/methodology.md,
"Fair conditions"): network benchmarks bind client and server to the same CPUs everywhere, and the
containers' scratch directory is the host's own file system, where fsync reaches the disk."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from conftest import REPO, require_tools
from virtrepro.rawdata import rawlog
from virtrepro.benchmarks import BENCHMARKS
from virtrepro.planning.config import plan, validate_config
from virtrepro.guests import stop_guests
from virtrepro.measurement.job import measure
from virtrepro.testbed.kinds import LocalTestbed


@pytest.mark.parametrize("name, option", [("netperf", "-T"), ("iperf3", "-A")])
def test_network_commands_bind_both_ends_to_the_recorded_cpus(name, option):
    benchmark = BENCHMARKS[name]
    params = {"netperf": {"seconds": 2, "rr_sizes": [1], "stream_sizes": [256]},
              "iperf3": {"seconds": 2, "streams": [1]}}[name]
    for variant in benchmark.variants(params):
        command = benchmark.run(variant)
        client, server = re.search(rf" {option} (\d+),(\d+) ", command).groups()
        placement = benchmark.placement(variant)
        assert (placement["client_cpu"], placement["server_cpu"]) == (int(client), int(server)) == (0, 0)


def test_benchmarks_without_a_placement_say_so():
    fileio = BENCHMARKS["sysbench_fileio"]
    variant = fileio.variants({"modes": ["rndrw"], "total_size": "8M", "seconds": 1})[0]
    assert fileio.placement(variant) is None


TESTBED = "pytest-fair"
CONTAINER_MEMORY_MB = 1024


@pytest.fixture
def config(tmp_path, built_image):
    require_tools("/usr/sbin/sshd", "lxc-start", "podman", "sysbench", "findmnt")
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    cfg["testbed"] = TESTBED
    cfg["testbeds"][TESTBED] = {"kind": "local"}
    cfg["repetitions"] = 1
    cfg["platforms"] = ["native", "lxc", "podman"]
    cfg["benchmarks"] = ["sysbench_fileio"]
    cfg["guest"].update(memory_mb=CONTAINER_MEMORY_MB)
    cfg["scales"]["quick"]["sysbench_fileio"].update(modes=["rndrw"], total_size="8M", seconds=1)
    validate_config(cfg)
    yield cfg
    stop_guests(TESTBED)
    LocalTestbed(TESTBED).down()


@pytest.mark.integration
def test_every_platform_writes_to_the_same_file_system_with_real_fsyncs(config, tmp_path):
    sidecars = {}
    for run in plan(config):
        log = measure(run, config, tmp_path / "data")
        sidecars[run.platform] = json.loads(rawlog.sidecar_path(log).read_text())
    assert set(sidecars) == {"native", "lxc", "podman"}
    native = sidecars["native"]["scratch_fs"]
    assert native["fstype"] not in ("overlay", "tmpfs")
    for name in ("lxc", "podman"):
        fs = sidecars[name]["scratch_fs"]
        # the same file system as native's (type and device; findmnt names a bind mount's source
        # directory after the device, as in /dev/vda[/var/tmp/virtrepro]), not the container's overlay
        assert (fs["fstype"], fs["source"].split("[")[0]) == (native["fstype"], native["source"]), name
        assert fs["options"] == native["options"], name
        assert "volatile" not in fs["options"], f"{name}: fsync would not reach the disk"
        assert sidecars[name]["host"]["memory_limit_bytes"] == CONTAINER_MEMORY_MB * 1024 * 1024
    assert sidecars["native"]["host"]["memory_limit_bytes"] > CONTAINER_MEMORY_MB * 1024 * 1024
    for sidecar in sidecars.values():
        assert sidecar["page_cache"] == {"host": "dropped", "instance": "the host's kernel"}
        assert sidecar["placement"] is None
