"""Frozen guests (issue 40: guests stay up across rounds, and idle platforms cost nothing).

Real instances of lxc, podman, charliecloud and qemu-tcg on the local testbed are frozen and
thawed: the platform's own state says frozen (the cgroup v1 freezer.state FROZEN, podman's
State.Paused, QMP's query-status "paused"), the instance uses no CPU while frozen, an SSH command
started while it is frozen does not complete until it is thawed, and it completes after. A
frozen instance is thawed when its ``with`` block ends and is torn down without hanging, also
when its supervisor stops it while frozen (its owner gone).
"""

from __future__ import annotations

import os
import subprocess
import threading
import time

import pytest

from conftest import require_tools
from virtrepro.guests import guest_run
from virtrepro.platforms.base import PlatformError, get_platform
from virtrepro.testbed.kinds import LocalTestbed

pytestmark = pytest.mark.integration

TESTBED = "pytest-freeze"
GUESTS = ["lxc", "podman", "charliecloud", "qemu-tcg"]
SPEC = {"qemu-tcg": {"vcpus": 1, "memory_mb": 512}}
TOOLS = {"lxc": ["lxc-start", "lxc-freeze"], "podman": ["podman", "runc"], "charliecloud": ["ch-run", "setpriv"],
         "qemu-tcg": ["qemu-system-x86_64"]}


@pytest.fixture(scope="module")
def host(built_image):
    require_tools("/usr/sbin/sshd")
    testbed = LocalTestbed(TESTBED)
    yield testbed.up()
    testbed.down()


def platform_of(host, name):
    require_tools(*TOOLS[name])
    return get_platform(name)(host, SPEC.get(name, {}))


def reported_frozen(platform, index=0) -> str:
    """The state as the platform's own tool or file reports it (not through freeze()'s own check)."""
    if platform.name == "qemu-tcg":
        return platform.query_status(index)["status"]
    if platform.name == "podman":
        paused = subprocess.run([*__import__("virtrepro.platforms.podman", fromlist=["podman"]).podman(), "inspect",
                                 "--format", "{{.State.Paused}}", platform.guest_name(index)],
                                capture_output=True, text=True, check=True).stdout.strip()
        return f"paused={paused} {platform.freezer_state_file(index).read_text().strip()}"
    return platform.freezer_state_file(index).read_text().strip()


FROZEN = {"lxc": "FROZEN", "podman": "paused=true FROZEN", "charliecloud": "FROZEN", "qemu-tcg": "paused"}
THAWED = {"lxc": "THAWED", "podman": "paused=false THAWED", "charliecloud": "THAWED", "qemu-tcg": "running"}


def leftovers(name: str) -> list[str]:
    ps = subprocess.run(["ps", "-ww", "-eo", "stat,args"], capture_output=True, text=True).stdout
    return [line for line in ps.splitlines() if name in line and not line.startswith("Z")]


@pytest.mark.parametrize("name", GUESTS)
def test_a_frozen_instance_takes_no_cpu_and_answers_only_after_thaw(host, name):
    platform = platform_of(host, name)
    with platform.instance() as endpoint:
        assert reported_frozen(platform) == THAWED[name] and not platform.frozen()
        platform.freeze()
        assert reported_frozen(platform) == FROZEN[name] and platform.frozen()
        before = platform.cpu_time_ns()
        # a command started now does not complete while the instance is frozen...
        result: dict = {}
        worker = threading.Thread(target=lambda: result.update(out=guest_run(endpoint, "echo answered", timeout=90)),
                                  daemon=True)
        worker.start()
        worker.join(6)
        frozen_cpu_s = (platform.cpu_time_ns() - before) / 1e9
        assert worker.is_alive() and "out" not in result, f"{name}: a command completed in a frozen instance"
        # ...and uses no CPU: a frozen container's cgroup not a nanosecond; a stopped VM's QEMU keeps only
        # its main loop (timers, the user-mode network), under 2 % of one CPU
        assert frozen_cpu_s < (0.12 if name == "qemu-tcg" else 0.01), f"{name} used {frozen_cpu_s:.3f} s CPU frozen"
        platform.thaw()
        assert reported_frozen(platform) == THAWED[name] and not platform.frozen()
        worker.join(60)
        assert result.get("out", "").strip() == "answered", f"{name}: the command did not complete after thaw"
        assert guest_run(endpoint, "echo again", timeout=30).strip() == "again"
        # the counter that read (nearly) nothing while frozen counts this instance's work
        before = platform.cpu_time_ns()
        guest_run(endpoint, "timeout 2 sh -c 'while :; do :; done' || true", timeout=60)
        assert (platform.cpu_time_ns() - before) / 1e9 > 0.3, f"{name}: cpu_time_ns() misses the instance's work"
        record = platform.describe()["applied"]["freeze"]
        assert record["freezes"] == 1 and record["thaws"] == 1 and record["frozen_s"] >= 6
        assert record["mechanism"] == platform.freeze_mechanism and platform.freezable
        guest = endpoint.name
    assert leftovers(guest) == []


@pytest.mark.parametrize("name", GUESTS)
def test_a_thaw_without_a_login_returns_once_the_platform_says_thawed_and_a_command_answers(host, name):
    """What a measurement job's turn does (repetition.Kept.thaw): thaw(login=False) waits for the platform's
    own state, not for a new SSH login (a second of handshake in a TCG guest); the command the run sends
    next over the open connection answers, and the record says which kind of thaw it was."""
    platform = platform_of(host, name)
    with platform.instance() as endpoint:
        platform.freeze()
        platform.thaw(login=False)
        assert reported_frozen(platform) == THAWED[name] and not platform.frozen()
        assert guest_run(endpoint, "echo answered", timeout=30).strip() == "answered"
        record = platform.describe()["applied"]["freeze"]
        assert record["thaws"] == 1 and "last_thaw_s" in record and "last_thaw_to_ssh_s" not in record


@pytest.mark.parametrize("name", GUESTS)
def test_a_frozen_instance_is_thawed_when_its_block_ends_and_torn_down(host, name):
    platform = platform_of(host, name)
    with platform.instance() as endpoint:
        guest = endpoint.name
        platform.freeze()
        assert platform.frozen()
        state_file = None if name == "qemu-tcg" else platform.freezer_state_file()
        start = time.monotonic()
    assert time.monotonic() - start < 60
    assert platform.describe()["applied"]["freeze"]["thaws"] == 1  # thawed (and verified) before teardown
    assert leftovers(guest) == []
    if state_file is not None:
        assert not state_file.exists(), f"{name}: its freezer cgroup is left behind"


@pytest.mark.parametrize("name", GUESTS)
def test_the_supervisor_stops_a_frozen_instance_without_hanging(host, name):
    """The owner went away while the instance was frozen: the supervisor's stop commands thaw it first."""
    platform = platform_of(host, name)
    endpoint = platform.acquire(0, os.getpid())
    try:
        platform.freeze()
        start = time.monotonic()
        platform.state(0).stop()
        assert time.monotonic() - start < 30, f"{name}: stopping a frozen instance took too long"
        assert leftovers(endpoint.name) == []
    finally:
        platform.state(0).stop()


def test_freeze_and_thaw_errors_name_platform_instance_and_cause(host):
    platform = platform_of(host, "podman")
    with pytest.raises(PlatformError, match=r"podman instance 3 \(podman-[0-9a-f]+-3\): freeze failed: .*not running"):
        platform.freeze(3)
    with pytest.raises(PlatformError, match=r"podman instance 3 .*thaw failed"):
        platform.thaw(3)
    assert not platform.frozen(3)


def test_a_failing_freeze_command_raises_with_its_last_line(host, monkeypatch):
    platform = platform_of(host, "lxc")
    with platform.instance():
        monkeypatch.setattr("virtrepro.platforms.lxc.lxc_path", lambda: host_path_that_is_not_lxcs())
        with pytest.raises(PlatformError, match=r"lxc instance 0 \(lxc-[0-9a-f]+-0\): lxc-freeze failed: \S"):
            platform.freeze()
        monkeypatch.undo()
        assert not platform.frozen()


def host_path_that_is_not_lxcs():
    from pathlib import Path

    return Path("/nonexistent-lxc-path")


def test_native_has_nothing_to_freeze(host):
    for platform in (get_platform("native")(host, {}),
                     __import__("virtrepro.platforms.native", fromlist=["NativeNetns"]).NativeNetns(host, {})):
        assert platform.freezable is False and "nothing to freeze" in platform.freeze_mechanism
        assert platform.freeze() is None and platform.thaw() is None and platform.frozen() is False
