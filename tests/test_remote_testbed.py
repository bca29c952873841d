"""Guests on a remote testbed: containers and a VM on a host reached over SSH, reached through it.

The remote host is a stand-in made on this machine (``remotehost.py``: its own
network namespace, host name, sysfs and sshd, and its own virtrepro state), reached
only over SSH like any other host: the host agent is uploaded to it, runs there with
the standard library only (``python3 -S``), starts LXC, podman and QEMU guests
under supervisors owned by a keeper, and the benchmarks reach the guests through
the host (ProxyJump), their host keys pinned here. Afterwards, and after the
controller is killed with SIGKILL, nothing may be left on the host.

To save the image build (a few minutes from Debian's archive), the host's image
directory is seeded with hard links to this machine's image of the same recipe;
``prepare`` then finds it, as it would after building it there.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from conftest import REPO, require_tools
from remotehost import RemoteHost
from virtrepro.rawdata import rawlog
from virtrepro.benchmarks import BENCHMARKS
from virtrepro.planning.config import plan, validate_config
from virtrepro.guests import image_dir
from virtrepro.guests.image import recipe_hash
from virtrepro.guests.network import FIRST_HOST, device_name, testbed_octet as octet_of
from virtrepro.measurement.job import measure
from virtrepro.testbed.agent import HostAgent
from virtrepro.testbed.kinds import RemoteTestbed
from virtrepro.testbed.hosts import HostKeyRejected, connect
from virtrepro.testbed.hosts import TestbedError as ConnectError

pytestmark = pytest.mark.integration

TESTBED = "pytest-remote"
SPEC = {"vcpus": 1, "memory_mb": 1024}
TINY = {"repetitions": 1, "threads": [1], "cpu_max_prime": 2000, "seconds": 1}


@pytest.fixture(scope="module")
def remote(tmp_path_factory):
    require_tools("/usr/sbin/sshd", "nsenter", "unshare", "lxc-start", "podman", "qemu-system-x86_64", "mmdebstrap")
    source = image_dir()  # this machine's image (before VIRTREPRO_STATE points elsewhere)
    if not (source / "image.json").exists():
        subprocess.run([sys.executable, "-m", "virtrepro.guests.image", "build", str(source)], check=True)
    state = Path(tempfile.mkdtemp(prefix="vr-rh-"))  # short: podman's run directory must stay under 50 characters
    host = RemoteHost(tmp_path_factory.mktemp("remote-host"), state)
    host.up()
    seeded = host.state_dir / "images" / recipe_hash()
    seeded.parent.mkdir(parents=True)
    if subprocess.run(["cp", "-al", str(source), str(seeded)], capture_output=True).returncode != 0:
        subprocess.run(["cp", "-a", "--reflink=auto", str(source), str(seeded)], check=True)  # another file system
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("VIRTREPRO_STATE", str(tmp_path_factory.mktemp("controller-state")))
        patch.delenv("VIRTREPRO_TESTBED_OWNER", raising=False)
        try:
            yield host
        finally:
            RemoteTestbed(TESTBED, host.testbed_spec()).down()
            host.down()
            shutil.rmtree(state, ignore_errors=True)


@pytest.fixture(scope="module")
def config(remote):
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    cfg["testbed"] = TESTBED
    cfg["testbeds"][TESTBED] = remote.testbed_spec()
    cfg["platforms"] = ["lxc", "podman", "qemu-tcg"]
    cfg["benchmarks"] = ["sysbench_cpu", "lifecycle"]
    cfg["repetitions"] = 1
    cfg["guest"] = dict(SPEC)
    cfg["scales"]["quick"]["sysbench_cpu"] = dict(TINY)
    cfg["informative_only"] = []  # a CPU benchmark in the TCG guest: what runs there, not what informs a claim
    return validate_config(cfg)


def leftovers(host: RemoteHost) -> list[str]:
    """What guests leave behind on the host: processes, containers, network devices, namespaces, mounts.

    Keepers are not counted here: one lives as long as its controller (this test process)."""
    state = host.state_dir
    ps = subprocess.run(["ps", "-ww", "-eo", "stat,args"], capture_output=True, text=True).stdout.splitlines()
    found = [f"process: {line}" for line in ps if str(state) in line and not line.startswith("Z")
             and "hostagent keep" not in line and "virtrepro.testbed.remote keep" not in line]
    podman = f"podman --root {state}/podman/storage --runroot {state}/podman/runroot --cgroup-manager cgroupfs"
    found += [f"lxc container: {line}" for line in host.run(f"lxc-ls -1 -P {state}/lxc").split()]
    found += [f"podman container: {line}" for line in host.run(f"{podman} ps -a --format '{{{{.Names}}}}'").split()]
    links = [line.split()[0] for line in host.run("ip -br link").splitlines()]
    found += [f"link: {link}" for link in links if link != "lo" and not link.startswith("eth0@")]
    tag = device_name("", TESTBED, "")  # every device and namespace name of this testbed has its octet
    found += [f"netns: {line}" for line in host.run("ip netns").splitlines()
              if line.startswith(("vrn-", "vrh-")) and line[4:6] == tag]
    found += [f"mount: {line}" for line in host.run("cat /proc/mounts").splitlines() if str(state) in line]
    return found


def sidecar(log: Path) -> dict:
    return json.loads(rawlog.sidecar_path(log).read_text())


def test_prepare_finds_the_tools_and_the_image_of_the_same_recipe(remote, config, tmp_path):
    out = tmp_path / "prepared.json"
    env = {**os.environ, "VIRTREPRO_CONFIG": json.dumps(config)}
    result = subprocess.run([sys.executable, "-m", "virtrepro.testbed.remote", "prepare", "--testbed", TESTBED,
                             "--no-install", str(out)], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    prepared = json.loads(out.read_text())[f"{TESTBED}/{remote.address}"]
    assert prepared["recipe"] == recipe_hash() and prepared["image"]["recipe"] == recipe_hash()
    assert prepared["image_built"] is False and prepared["installed"] == []
    assert prepared["image_dir"] == str(remote.state_dir / "images" / recipe_hash())
    # the agent ran on the host, from its own copy of the package, with the standard library only
    agents = list((remote.state_dir / "agent").glob("*/virtrepro/testbed/hostagent.py"))
    assert len(agents) == 1


def check_run_through_the_host(remote: RemoteHost, log: Path, platform: str) -> dict:
    """A complete log of a run in a guest of ``platform`` on the remote host, reached through the host."""
    assert rawlog.is_complete(log)
    meta = sidecar(log)
    params = meta["parameters"]
    records = BENCHMARKS[meta["benchmark"]].parse(log.read_text(), str(log), params)
    assert meta["records"] == len(records) > 0
    endpoint = meta["endpoint"]
    # reached through the testbed host: the sidecar names the gateway
    assert endpoint["via"]["hostname"] == remote.address and endpoint["via"]["name"] == f"{TESTBED}/{remote.address}"
    if platform.startswith("qemu"):
        assert endpoint["hostname"] == "127.0.0.1"  # the VM's forwarded port, on the host's own loopback
    else:
        assert endpoint["hostname"] == f"10.251.{octet_of(TESTBED)}.{FIRST_HOST[platform]}"
    # the benchmark ran in the guest (its own host name), not on the host
    assert meta["host"]["hostname"] == endpoint["name"] != remote.hostname
    assert meta["platform"]["name"] == platform and meta["platform"]["applied"]["gateway_ssh_s"] > 0
    return meta


def snakemake(work: Path, config: dict) -> subprocess.CompletedProcess:
    (work / "config.yaml").write_text(yaml.safe_dump(config))
    env = {**os.environ, "VIRTREPRO_STATE": str(work / "state")}
    for name in ("VIRTREPRO_CONFIG", "VIRTREPRO_TESTBED_OWNER", "VIRTREPRO_INVOCATION"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--cores", "2",
                           "--directory", str(work), "--configfile", str(work / "config.yaml")],
                          capture_output=True, text=True, env=env, timeout=900)


def test_workflow_runs_benchmarks_in_containers_on_the_remote_host(remote, config, tmp_path):
    """Snakemake as a user runs it: the host prepared, guests owned by Snakemake's keeper, all gone at the end."""
    small = {key: config[key] for key in ("testbed", "testbeds", "guest", "scale")}
    small.update(platforms=["lxc", "podman"], benchmarks=["sysbench_cpu"], notebooks=[], repetitions=1,
                 data_dir=str(tmp_path / "data"), figures_dir=str(tmp_path / "figures"),
                 scales={"quick": {"sysbench_cpu": TINY}, "paper": {"sysbench_cpu": TINY}})
    result = snakemake(tmp_path, small)
    assert result.returncode == 0, result.stderr[-4000:]
    # the guest_image rule prepared the host: tools there, its image of the same recipe found there
    prepared = json.loads((tmp_path / "state" / "testbeds" / TESTBED / f"hosts-prepared-{recipe_hash()}.json").read_text())
    assert prepared[f"{TESTBED}/{remote.address}"]["image"]["recipe"] == recipe_hash()
    for platform in ("lxc", "podman"):
        logs = sorted((tmp_path / "data" / "raw" / TESTBED / platform / "sysbench_cpu").glob("*/rep-0.log"))
        assert len(logs) == 1
        check_run_through_the_host(remote, logs[0], platform)
    assert (tmp_path / "data" / "tables" / f"{TESTBED}.parquet").exists()
    # Snakemake stopped the guests and its keeper on the host when it ended
    assert leftovers(remote) == []
    ps = subprocess.run(["ps", "-ww", "-eo", "stat,args"], capture_output=True, text=True).stdout.splitlines()
    assert [line for line in ps if str(tmp_path / "state") in line and not line.startswith("Z")] == []
    keepers = [line for line in ps if "-m virtrepro.testbed.hostagent keep" in line and not line.startswith("Z")]
    assert len(keepers) == len(HostAgent(remote.host(TESTBED)).keepers())  # only this test process's own, if any


def test_benchmark_runs_in_a_vm_on_the_remote_host_through_it(remote, config, tmp_path):
    run = next(r for r in plan(config, ["qemu-tcg"]) if r.benchmark == "sysbench_cpu")
    meta = check_run_through_the_host(remote, measure(run, config, tmp_path / "data"), "qemu-tcg")
    assert meta["platform"]["applied"]["accel"] == "tcg"
    # nobody else owns the guest (no Snakemake here): torn down when the run ended
    assert leftovers(remote) == []


def test_guest_host_keys_are_pinned_and_instances_talk_privately(remote, config, tmp_path):
    testbed = RemoteTestbed(TESTBED, config["testbeds"][TESTBED])
    platform = testbed.platform(testbed.up(), "lxc", SPEC)
    with platform.instance(0) as first, platform.instance(1) as second:
        peer = platform.private_address(1)
        with connect(first) as connection:
            result = connection.run(f"bash -c 'exec 3<>/dev/tcp/{peer}/22 && head -c 7 <&3'; echo; hostname",
                                    hide=True, in_stream=False, timeout=20)
        assert result.stdout.split() == ["SSH-2.0", first.name]
        assert peer == f"10.251.{octet_of(TESTBED)}.{FIRST_HOST['lxc'] + 1}"
        # the pinned key is the guest's own: another one (the second guest's) is refused
        wrong = tmp_path / "known_hosts"
        wrong.write_text(f"{first.hostname} {' '.join(Path(second.known_hosts).read_text().split()[1:])}\n")
        with pytest.raises(HostKeyRejected, match="host key mismatch"):
            with connect(dataclasses.replace(first, known_hosts=str(wrong))) as connection:
                connection.run("true", hide=True, in_stream=False)
        # and the guest is reached only through the host: not from here directly
        with pytest.raises(ConnectError):
            with connect(dataclasses.replace(first, gateway=None), timeout=3) as connection:
                connection.run("true", hide=True, in_stream=False)
    assert leftovers(remote) == []


def test_lifecycle_is_timed_by_the_host_agent_on_the_host(remote, config, tmp_path):
    run = next(r for r in plan(config, ["lxc"]) if r.benchmark == "lifecycle")
    log = measure(run, config, tmp_path / "data")
    records = BENCHMARKS["lifecycle"].parse(log.read_text(), str(log), run.variant.param_dict)
    assert {r["metric"] for r in records} >= {"provision", "boot", "reboot", "clone", "destroy"}
    assert "\ndestroy_resolution_s=0.0100\n" in log.read_text()  # timed to the look every 10 ms
    assert sidecar(log)["platform"]["applied"]["boot_to_ssh_s"] > 0
    assert leftovers(remote) == []


def test_a_guest_on_the_remote_host_is_frozen_and_thawed_by_its_agent(remote, config):
    import threading

    from virtrepro.guests import guest_run

    testbed = RemoteTestbed(TESTBED, config["testbeds"][TESTBED])
    platform = testbed.platform(testbed.up(), "podman", SPEC)
    with platform.instance(0) as endpoint:
        assert platform.frozen(0) is False
        platform.freeze(0)
        assert platform.frozen(0) is True  # podman's State.Paused, read by the agent on the host
        result: dict = {}
        worker = threading.Thread(target=lambda: result.update(out=guest_run(endpoint, "echo answered", timeout=90)),
                                  daemon=True)
        worker.start()
        worker.join(6)
        assert worker.is_alive() and "out" not in result, "a command completed in a frozen guest"
        platform.thaw(0)
        assert platform.frozen(0) is False
        worker.join(60)
        assert result.get("out", "").strip() == "answered"
        platform.freeze(0)  # left frozen: the block's end thaws it before the guest is stopped
    assert platform.applied["freeze"]["thaws"] == 2
    assert leftovers(remote) == []


CONTROLLER = """
import sys, time
from virtrepro.testbed.kinds import RemoteTestbed
spec = {spec!r}
testbed = RemoteTestbed({testbed!r}, {testbed_spec!r})
host = testbed.up()
with testbed.platform(host, "lxc", spec).instance(3), testbed.platform(host, "podman", spec).instance(3):
    print("up", flush=True)
    time.sleep(600)
"""


def test_killing_the_controller_leaves_nothing_on_the_host(remote, config):
    code = CONTROLLER.format(spec=SPEC, testbed=TESTBED, testbed_spec=config["testbeds"][TESTBED])
    controller = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert controller.stdout.readline().strip() == "up", controller.stderr.read()
        agent = HostAgent(RemoteTestbed(TESTBED, config["testbeds"][TESTBED]).up())
        keeper = json.loads(agent._keeper_files(controller.pid)[1].read_text())["keeper_pid"]
        running = agent.call("status", {"testbed": TESTBED})["guests"]
        assert len([g for g in running if g.startswith(("lxc-", "podman-")) and g.endswith("-3")]) == 2
        assert leftovers(remote) != []
    finally:
        os.kill(controller.pid, signal.SIGKILL)
        controller.wait()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (leftovers(remote) or os.path.exists(f"/proc/{keeper}")):
        time.sleep(1)
    assert leftovers(remote) == []
    assert not os.path.exists(f"/proc/{keeper}"), "the keeper on the host outlived its controller"
