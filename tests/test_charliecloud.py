"""The unprivileged HPC container (platform `charliecloud`, Charliecloud's ch-run) really runs here:
an instance is the guest image's root file system in a user and mount namespace of its own, its
processes belong to an unprivileged user and share the host's network; real benchmark runs in
it parse; it leaves nothing behind; and the plan leaves out what it cannot run."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
import yaml

from conftest import REPO, require_tools
from virtrepro.rawdata import rawlog
from virtrepro.benchmarks import BENCHMARKS
from virtrepro.planning.config import plan, plan_variants, validate_config
from virtrepro.guests import stop_guests
from virtrepro.testbed.hosts import connect
from virtrepro.measurement.job import measure
from virtrepro.platforms.base import get_platform
from virtrepro.testbed.kinds import LocalTestbed


def test_the_plan_leaves_out_runs_over_several_instances_and_resource_limits():
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    cfg["platforms"] = ["native", "charliecloud"]
    cfg["benchmarks"] = ["netperf", "sysbench_cpu", "npb_mpi", "isolation", "pgbench"]
    validate_config(cfg)
    keys = {}
    for part in plan_variants(cfg):
        keys.setdefault(part.platform, set()).add((part.benchmark, part.variant.key))
    ours = {benchmark for benchmark, _ in keys["charliecloud"]}
    # netperf, pgbench and isolation always use two or more instances; npb_mpi over one instance stays
    assert ours == {"sysbench_cpu", "npb_mpi"}
    assert {key for b, key in keys["charliecloud"] if b == "npb_mpi"} == {
        key for b, key in keys["native"] if b == "npb_mpi" and "nodes-1" in key}
    assert {k for k in keys["native"] if k[0] == "sysbench_cpu"} == {k for k in keys["charliecloud"] if k[0] == "sysbench_cpu"}


TESTBED = "pytest-charliecloud"


@pytest.fixture(scope="module")
def host(built_image):
    require_tools("/usr/sbin/sshd", "ch-run", "setpriv")
    testbed = LocalTestbed(TESTBED)
    yield testbed.up()
    testbed.down()


@pytest.mark.integration
def test_an_instance_is_unprivileged_in_namespaces_of_its_own_on_the_hosts_network(host):
    platform = get_platform("charliecloud")(host, {})
    with platform.instance() as endpoint:
        with connect(endpoint) as connection:
            out = connection.run(". /etc/os-release; echo $VERSION_CODENAME; id -u; readlink /proc/self/ns/user "
                                 "/proc/self/ns/mnt /proc/self/ns/net; command -v sysbench; "
                                 "touch /var/tmp/virtrepro/.ch-probe && rm /var/tmp/virtrepro/.ch-probe && echo wrote",
                                 hide=True, in_stream=False).stdout.split()
        name = endpoint.name
        running = subprocess.run(["pgrep", "-f", "ch-run"], capture_output=True, text=True).stdout.split()
        assert running, "ch-run should be running while the instance is up"
    codename, uid, user_ns, mnt_ns, net_ns, sysbench, wrote = out
    assert codename == "bookworm" and sysbench.endswith("/sysbench") and wrote == "wrote"
    assert int(uid) == 65534  # nobody: this test runs as root, and the instance drops to nobody
    assert user_ns != os.readlink("/proc/self/ns/user") and mnt_ns != os.readlink("/proc/self/ns/mnt")
    assert net_ns == os.readlink("/proc/self/ns/net")  # no network namespace: the host's
    applied = platform.describe()["applied"]
    assert applied["runtime"] == "ch-run" and applied["user"] == "nobody" and applied["boot_to_ssh_s"] > 0
    # the image as the committed sidecars keep it: no directory of this machine
    assert not applied["image"].startswith("/") and applied["image"].endswith("/rootfs")
    ps = subprocess.run(["ps", "-ww", "-eo", "args"], capture_output=True, text=True).stdout
    assert name not in ps and "ch-run" not in ps.replace("pgrep", "")


@pytest.mark.integration
def test_real_runs_in_the_container_parse(tmp_path, built_image):
    require_tools("/usr/sbin/sshd", "ch-run", "setpriv", "sysbench")
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    cfg.update(testbed="pytest-ch-runs", repetitions=1, platforms=["charliecloud"], benchmarks=["sysbench_cpu", "mbw"])
    cfg["testbeds"]["pytest-ch-runs"] = {"kind": "local"}
    cfg["scales"]["quick"]["sysbench_cpu"].update(threads=[1], seconds=1)
    cfg["scales"]["quick"]["mbw"].update(runs=2, array_mib=16)
    validate_config(cfg)
    runs = plan(cfg)
    assert {r.benchmark for r in runs} == {"sysbench_cpu", "mbw"}
    try:
        for run in runs:
            log = measure(run, cfg, tmp_path / "data")
            meta = json.loads(rawlog.sidecar_path(log).read_text())
            assert meta["status"] == "complete" and meta["platform"]["name"] == "charliecloud"
            assert meta["endpoint"]["user"] == "nobody"
            records = BENCHMARKS[run.benchmark].parse(log.read_text(), str(log), run.variant.param_dict)
            main = [r for r in records if r["metric"] in ("events_per_second", "copy_bandwidth_avg")]
            assert main and all(r["value"] > 0 for r in main)
    finally:
        stop_guests("pytest-ch-runs")
        LocalTestbed("pytest-ch-runs").down()
