"""Kumar 2013 thesis scenarios for real: container limits seen from inside, variant planning, isolation runs.

Containers must really get the cpuset and memory limit of the guest spec (read inside
the guest); the planner caps vCPUs at the host's CPUs, marks oversubscription and refuses
memory the host cannot back, with the reason; an isolation run with a stressing neighbour
on ``native`` (network namespaces) and on ``lxc`` leaves no stressor behind.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
import yaml

from conftest import REPO, require_tools
from virtrepro.benchmarks import BENCHMARKS
from virtrepro.benchmarks.thesis import MARK, host_cpu_count, host_memory_mb
from virtrepro.planning.config import Run, validate_config
from virtrepro.guests import GuestState, image_dir, stop_guests
from virtrepro.measurement.job import measure
from virtrepro.platforms.base import get_platform
from virtrepro.platforms.guest import block_device, host_cpus
from virtrepro.testbed.kinds import LocalTestbed
from virtrepro.testbed.hosts import connect, default_state_dir

pytestmark = pytest.mark.integration

TESTBED = "pytest-thesis"
QUICK = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["scales"]["quick"]

# inside a guest: CPUs it may use, its memory cgroup limit (own cgroup root, or its path in the host's tree)
PROBE = (
    "nproc; grep Cpus_allowed_list /proc/self/status | cut -f2; "
    "p=$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup); "
    "for f in /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/memory$p/memory.limit_in_bytes; do "
    "[ -f $f ] && cat $f && break; done"
)
# inside a guest: its blkio write throttle rules ("major:minor bytes/s" lines)
BLKIO = (
    "p=$(sed -n 's/^[0-9]*:blkio://p' /proc/self/cgroup); "
    "for f in /sys/fs/cgroup/blkio/blkio.throttle.write_bps_device /sys/fs/cgroup/blkio$p/blkio.throttle.write_bps_device; do "
    "[ -f $f ] && cat $f && break; done"
)


@pytest.fixture(scope="module")
def host():
    require_tools("/usr/sbin/sshd", "lxc-start", "podman", "stress-ng", "sysbench", "iperf3", "fio")
    if not (image_dir() / "image.json").exists():
        pytest.fail("no guest image: run the workflow's guest_image rule (or tests/test_guests.py) first")
    testbed = LocalTestbed(TESTBED)
    yield testbed.up()
    stop_guests(TESTBED)
    testbed.down()


@pytest.mark.parametrize("name", ["lxc", "podman"])
def test_containers_get_the_cpuset_and_memory_limit_of_the_spec(host, name):
    cpus = host_cpus()
    spec = {"vcpus": 1, "memory_mb": 512, "cpu_partition": True, "disk_bps": 10 * 1024 * 1024}
    platform = get_platform(name)(host, spec)
    with platform.instance(1) as endpoint, connect(endpoint) as connection:
        nproc, allowed, limit = connection.run(PROBE, hide=True, in_stream=False).stdout.split()
        throttle = connection.run(BLKIO, hide=True, in_stream=False).stdout.split()
    assert throttle == [block_device(default_state_dir())[0], str(10 * 1024 * 1024)]
    assert int(nproc) == 1
    assert allowed == str(cpus[1 % len(cpus)]), "instance 1 of a partitioned spec gets the second block of CPUs"
    assert int(limit) == 512 * 1024 * 1024
    # more vCPUs than the host has: a container gets every host CPU, and says it was capped;
    # memory above the host's (memory_scaling's "above" guest) is set as asked
    above = host_memory_mb() * 5 // 4
    platform = get_platform(name)(host, {"vcpus": len(cpus) + 3, "memory_mb": above})
    with platform.instance(0) as endpoint, connect(endpoint) as connection:
        nproc, allowed, limit = connection.run(PROBE, hide=True, in_stream=False).stdout.split()
    assert int(nproc) == len(cpus) and int(limit) == above * 1024 * 1024
    limits = platform.describe()["applied"]["limits"]
    assert limits["capped_at_host_cpus"] is True and limits["vcpus_requested"] == len(cpus) + 3
    assert limits["memory_limit_mb"] == above


def test_planning_caps_marks_and_refuses():
    cpu, memory, isolation = (BENCHMARKS[n] for n in ("cpu_scaling", "memory_scaling", "isolation"))
    n = host_cpu_count()
    params = {**QUICK["cpu_scaling"], "vcpus": [1, n, n + 1, 4 * n], "oversubscribe": False}
    assert [v.param_dict["vcpus"] for v in cpu.variants(params, "qemu-tcg")] == [1, n]
    assert [key for key, _ in cpu.skipped(params, "lxc")] == [f"vcpus-{n + 1}", f"vcpus-{4 * n}"]
    over = cpu.variants({**params, "oversubscribe": True}, "qemu-tcg")
    marked = [v for v in over if v.param_dict.get("oversubscribed") == "yes"]
    assert [v.param_dict["vcpus"] for v in marked] == [n + 1, 4 * n] and all("oversubscribed-yes" in v.key for v in marked)
    assert cpu.guest_overrides(marked[0]) == {"vcpus": n + 1}

    total = host_memory_mb()
    params = {**QUICK["memory_scaling"], "fractions": [0.5, 1.0, 1.25, 4.0], "operations": ["read"]}
    planned = memory.variants(params, "lxc")
    assert [v.param_dict["fraction"] for v in planned] == [0.5, 1.0, 1.25]
    assert [memory.guest_overrides(v)["memory_mb"] for v in planned] == [int(f * total) // 64 * 64 for f in (0.5, 1.0, 1.25)]
    (refused, reason), = memory.skipped(params, "lxc")
    assert refused.startswith("fraction-4.0") and "max_overcommit" in reason and "refused" in reason
    # a reserve larger than the host leaves nothing a guest may touch: every size is refused, with the reason
    tight = {**params, "reserve_mb": total}
    assert memory.variants(tight, "qemu-tcg") == [] and all("reserve" in r or "max_overcommit" in r for _, r in memory.skipped(tight, "qemu-tcg"))
    assert [v.param_dict["mem"] for v in memory.variants(params, "native")] == ["host"]

    params = {**QUICK["isolation"], "resources": ["cpu", "memory", "disk", "network"], "limits": ["off", "on"]}
    native = isolation.variants(params, "native")
    assert {v.param_dict["limits"] for v in native} == {"off"} and isolation.skipped(params, "native")
    lxc = isolation.variants(params, "lxc")
    assert len(lxc) == 2 * len(native)
    on = next(v for v in lxc if v.param_dict["limits"] == "on")
    assert isolation.guest_overrides(on)["cpu_partition"] is True and isolation.guest_overrides(on)["vcpus"] == max(1, n // 2)
    assert isolation.instances(next(v for v in lxc if v.param_dict["resource"] == "network")) == 3


def leftovers_in(connection) -> list[str]:
    """Our pid files and any process that names the neighbour's marker, port 5212 or our iperf3 servers."""
    out = connection.run(
        f"ls /run/{MARK}-*.pid 2>/dev/null; ps -eo args | grep -E '{MARK}|iperf3 -s -p 521[12]|iperf3 -c .* -p 5212' | grep -v grep",
        hide=True, warn=True, in_stream=False,
    ).stdout
    return [line for line in out.splitlines() if line.strip() and "grep -E" not in line]


@pytest.fixture
def config(host, tmp_path, monkeypatch):
    keeper = subprocess.Popen(["sleep", "600"])  # guests outlive a run, as under the workflow
    monkeypatch.setenv("VIRTREPRO_TESTBED_OWNER", str(keeper.pid))
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    cfg.update(testbed=TESTBED, repetitions=1, platforms=["native", "lxc"], benchmarks=["isolation"])
    cfg["testbeds"][TESTBED] = {"kind": "local"}
    cfg["scales"]["quick"]["isolation"].update(seconds=1, resources=["cpu", "network", "disk"], limits=["off", "on"])
    validate_config(cfg)
    yield cfg
    stop_guests(TESTBED)
    keeper.kill()


@pytest.mark.parametrize("platform, resource, limits", [("native", "network", "off"), ("native", "cpu", "off"), ("lxc", "cpu", "on"),
                                                     ("lxc", "disk", "on")])  # disk: not in the default run
def test_isolation_run_with_a_stressing_neighbour_leaves_nothing_running(host, config, tmp_path, platform, resource, limits):
    benchmark = BENCHMARKS["isolation"]
    variant = next(v for v in benchmark.variants(config["scales"]["quick"]["isolation"], platform)
                   if v.param_dict["resource"] == resource and v.param_dict["neighbour"] == "stress"
                   and v.param_dict["limits"] == limits)
    log = measure(Run(TESTBED, platform, variant, 0), config, tmp_path / "data")
    sidecar = json.loads(log.with_suffix(".json").read_text())
    records = benchmark.parse(log.read_text(), str(log), sidecar["parameters"])
    assert records and sidecar["exit_status"] == 0 and len(sidecar["peers"]) == benchmark.instances(variant) - 1
    if platform == "lxc":
        limits_applied = sidecar["platform"]["applied"]["limits"]
        assert limits_applied["cpu_partition"] and limits_applied["memory_limit_mb"] == 1024 and limits_applied["disk_bps"] > 0
        if resource == "cpu":
            assert records[0]["threads"] == 1  # the victim sees the one CPU of its partition
    # the instances are still up (their owner lives): the neighbour must run nothing of ours any more
    from virtrepro.platforms.native import NativeNetns

    guests = NativeNetns(host, {}) if platform == "native" else get_platform(platform)(
        host, {**config["guest"], **benchmark.guest_overrides(variant)})
    for index in range(1, benchmark.instances(variant)):
        state = GuestState(TESTBED, guests.guest_name(index))
        assert state.running(), f"instance {index} should still be up"
        with connect(state.endpoint()) as connection:
            assert leftovers_in(connection) == []
    if platform == "native":  # the namespaces share the host's processes and /run
        assert not any(p.startswith(f"{MARK}-") for p in os.listdir("/run"))


def test_a_vm_larger_than_the_host_boots_and_measures(host, tmp_path, monkeypatch):
    """memory_scaling's 1.25 x host guest: the kernel's overcommit heuristic refuses QEMU's plain
    -m for it, so its RAM is mapped without a reservation; the run completes and says so."""
    require_tools("qemu-system-x86_64")
    keeper = subprocess.Popen(["sleep", "600"])
    monkeypatch.setenv("VIRTREPRO_TESTBED_OWNER", str(keeper.pid))
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    cfg.update(testbed=TESTBED, repetitions=1, platforms=["qemu-tcg"], benchmarks=["memory_scaling"])
    cfg["testbeds"][TESTBED] = {"kind": "local"}
    cfg["scales"]["quick"]["memory_scaling"].update(fractions=[1.25], seconds=1)
    validate_config(cfg)
    benchmark = BENCHMARKS["memory_scaling"]
    (variant,) = benchmark.variants(cfg["scales"]["quick"]["memory_scaling"], "qemu-tcg")
    assert benchmark.guest_overrides(variant)["memory_mb"] > host_memory_mb()
    try:
        log = measure(Run(TESTBED, "qemu-tcg", variant, 0), cfg, tmp_path / "data")
    finally:
        stop_guests(TESTBED)
        keeper.kill()
    sidecar = json.loads(log.with_suffix(".json").read_text())
    applied = sidecar["platform"]["applied"]
    assert applied["memory_mb"] > host_memory_mb() and applied["memory_overcommitted"] is True
    records = benchmark.parse(log.read_text(), str(log), sidecar["parameters"])
    assert [r["value"] > 0 for r in records if r["metric"] == "throughput"] == [True]
