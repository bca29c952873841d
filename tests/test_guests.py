"""Real guests on the local testbed: an LXC container, a podman container and a QEMU VM.

Each is started from the project's own image, reached over SSH with its own
pinned host key, and torn down; afterwards nothing may be left (processes,
containers, network devices, mounts). The first run builds the guest image
(about a minute, from Debian's archive); later runs reuse it.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import require_tools
from virtrepro.guests import GuestError, image_dir
from virtrepro.guests.network import FIRST_HOST, testbed_octet as octet_of
from virtrepro.platforms.base import get_platform
from virtrepro.testbed.kinds import LocalTestbed
from virtrepro.testbed.hosts import connect

pytestmark = pytest.mark.integration

SPEC = {"vcpus": 2, "memory_mb": 1024}
TESTBED = "pytest-guests"


@pytest.fixture(scope="module")
def host():
    require_tools("/usr/sbin/sshd", "mmdebstrap", "qemu-system-x86_64", "lxc-start", "podman")
    if not (image_dir() / "image.json").exists():
        subprocess.run([sys.executable, "-m", "virtrepro.guests.image", "build", str(image_dir())], check=True)
    testbed = LocalTestbed(TESTBED)
    yield testbed.up()
    testbed.down()


def leftovers(name: str) -> list[str]:
    found = []
    ps = subprocess.run(["ps", "-ww", "-eo", "stat,args"], capture_output=True, text=True).stdout
    found += [f"process: {line}" for line in ps.splitlines() if name in line and not line.startswith("Z")]
    found += [f"mount: {line}" for line in open("/proc/mounts").read().splitlines() if name in line]
    # this testbed's bridge, devices and namespaces (their names carry its octet; other testbeds
    # on this machine have their own)
    tag = f"{octet_of(TESTBED):02x}"
    links = subprocess.run(["ip", "-br", "link"], capture_output=True, text=True).stdout
    found += [f"link: {line}" for line in links.splitlines()
              if line.split()[0].startswith(tuple(f"{prefix}{tag}" for prefix in ("vrbr-", "vr-", "vp-", "vrt-", "vh-")))]
    netns = subprocess.run(["ip", "netns"], capture_output=True, text=True).stdout.splitlines()
    found += [f"netns: {line}" for line in netns if line.startswith((f"vrn-{tag}", f"vrh-{tag}"))]
    return found


@pytest.mark.parametrize("name", ["lxc", "podman", "qemu-tcg"])
def test_guest_runs_a_command_over_ssh_and_leaves_nothing(host, name):
    platform = get_platform(name)(host, SPEC)
    with platform.instance() as endpoint:
        guest = endpoint.name
        with connect(endpoint) as connection:
            result = connection.run(
                ". /etc/os-release; echo $VERSION_CODENAME; sysbench --version; command -v iozone",
                hide=True, in_stream=False,
            )
        lines = result.stdout.split()
        assert lines[0] == "bookworm" and "sysbench" in result.stdout and "/iozone" in result.stdout
        assert leftovers(guest), "the guest should be visible while it runs"
    assert leftovers(guest) == []
    applied = platform.describe()["applied"]
    assert applied["boot_to_ssh_s"] > 0
    if name == "qemu-tcg":
        assert applied["accel"] == "tcg"


def test_two_guests_have_their_own_host_keys(host):
    platform = get_platform("lxc")(host, SPEC)
    with platform.instance(0) as first, platform.instance(1) as second:
        keys = [open(e.known_hosts).read().split()[-1] for e in (first, second)]
        with connect(second) as connection:
            assert connection.run("hostname", hide=True, in_stream=False).stdout.strip() == second.name
    assert keys[0] != keys[1]
    assert leftovers(first.name) == [] and leftovers(second.name) == []


def test_guest_that_does_not_come_up_fails_clearly_and_keeps_its_console(host, tmp_path):
    platform = get_platform("qemu-tcg")(host, {**SPEC, "memory_mb": 512})
    platform.boot_timeout = 3  # far too short for a TCG boot
    platform.failure_dir = tmp_path
    with pytest.raises(GuestError, match="did not answer over SSH within 3 s") as error:
        with platform.instance(7):
            pass
    kept = list(tmp_path.glob("console-qemu-tcg-*-7-*.log"))
    assert len(kept) == 1 and str(kept[0]) in str(error.value)
    assert leftovers(platform.guest_name(7)) == []



def test_a_container_that_fails_to_start_says_what_lxc_start_said(host):
    """What a missing lxc-templates did: the container configuration includes a file that is not
    there. The error carries lxc-start's own line, and nothing is left behind."""
    from virtrepro.platforms.lxc import Lxc, lxc_path

    missing = "/usr/share/lxc/config/virtrepro-missing.common.conf"

    class BrokenLxc(Lxc):
        def launch(self, state, name, seed):
            launched = super().launch(state, name, seed)
            config = lxc_path() / name / "config"
            text = config.read_text().replace("/usr/share/lxc/config/debian.common.conf", missing)
            assert f"lxc.include = {missing}" in text
            config.write_text(text)
            return launched

    platform = BrokenLxc(host, SPEC)
    with pytest.raises(GuestError) as error:
        with platform.instance(8):
            pass
    message = str(error.value)
    assert f"guest {platform.guest_name(8)} died while booting" in message
    assert f'Failed to open file "{missing}"' in message
    assert leftovers(platform.guest_name(8)) == []

def test_knobs_the_host_cannot_honour_are_refused(host):
    from virtrepro.platforms.base import PlatformError

    free_pages = int(next(l.split()[1] for l in open("/proc/meminfo") if l.startswith("HugePages_Free")))
    if free_pages == 0:
        with pytest.raises(PlatformError, match="hugepages=true needs .* free huge pages"):
            get_platform("qemu-tcg")(host, {**SPEC, "hugepages": True})
    with pytest.raises(PlatformError, match="numa_nodes=3 must divide"):
        get_platform("qemu-tcg")(host, {**SPEC, "numa_nodes": 3})
    with pytest.raises(PlatformError, match="pin_vcpus needs a host CPU per vCPU"):
        get_platform("qemu-tcg")(host, {**SPEC, "vcpus": 64, "pin_vcpus": True})


def test_numa_topology_and_vcpu_pinning_are_applied(host):
    platform = get_platform("qemu-tcg")(host, {**SPEC, "numa_nodes": 2, "pin_vcpus": True})
    with platform.instance() as endpoint:
        with connect(endpoint) as connection:
            nodes = connection.run("ls -d /sys/devices/system/node/node*", hide=True, in_stream=False).stdout.split()
    assert len(nodes) == 2
    applied = platform.describe()["applied"]
    assert applied["numa_nodes"] == 2
    assert sorted(applied["vcpu_pinning"].values()) == [0, 1]


@pytest.mark.parametrize("name", ["lxc", "podman", "qemu-tcg"])
def test_two_instances_talk_over_the_private_network(host, name):
    platform = get_platform(name)(host, SPEC)
    with platform.instance(0) as first, platform.instance(1) as second:
        peer = platform.private_address(1)
        with connect(first) as connection:
            # a TCP connection from the first instance to the second one's sshd, over the bridge
            result = connection.run(f"bash -c 'exec 3<>/dev/tcp/{peer}/22 && head -c 7 <&3'", hide=True, in_stream=False, timeout=20)
        assert result.stdout.startswith("SSH-2.0")
        assert peer == f"10.251.{octet_of(TESTBED)}.{FIRST_HOST[name] + 1}"
    assert leftovers(first.name) == [] and leftovers(second.name) == []


def test_native_network_instances_are_namespaces_that_talk(host):
    platform = get_platform("native")(host)
    with platform.network_instance(0) as first, platform.network_instance(1) as second:
        with connect(first) as connection:
            result = connection.run(
                f"bash -c 'exec 3<>/dev/tcp/{platform.private_address(1)}/22 && head -c 7 <&3'; readlink /proc/self/ns/net",
                hide=True, in_stream=False, timeout=20,
            )
        names = []
        for endpoint in (first, second):
            with connect(endpoint) as connection:
                names.append(connection.run("hostname", hide=True, in_stream=False, timeout=20).stdout.strip())
        own_netns = subprocess.run(["readlink", "/proc/self/ns/net"], capture_output=True, text=True).stdout.strip()
        assert result.stdout.startswith("SSH-2.0")
        assert result.stdout.split()[-1] != own_netns  # really another network stack
        # a host name each, like separate hosts (Open MPI tells nodes apart by name)
        assert names == [first.name, second.name]
    assert leftovers(first.name) == [] and leftovers(second.name) == []


def test_instances_booted_ahead_run_side_by_side_and_are_waited_for_when_acquired(host):
    """boot_ahead starts every instance it is given at once, without waiting (a job's two TCG guests boot
    side by side); instance() then waits for each, with its boot time, and it answers; an instance
    begun ahead that nobody acquires is stopped by abandon_ahead, leaving nothing."""
    from virtrepro.testbed import supervisor

    platform = get_platform("qemu-tcg")(host, SPEC)
    try:
        platform.boot_ahead([0, 1, 2])
        # all three QEMUs started before any is acquired (none answers yet: no endpoint saved)
        assert all(supervisor.running(platform.state(i).pid_file) for i in (0, 1, 2))
        assert not any(platform.state(i).running() for i in (0, 1, 2))
        with platform.instance(0) as first, platform.instance(1) as second:
            for endpoint in (first, second):
                with connect(endpoint) as connection:
                    assert connection.run("hostname", hide=True, in_stream=False).stdout.strip() == endpoint.name
            applied = platform.describe()["applied"]
            assert applied["boot_to_ssh_s"] > 0 and applied["booted_ahead"] is True
    finally:
        third = platform.state(2).name
        platform.abandon_ahead()
    assert not supervisor.running(platform.state(2).pid_file) and leftovers(third) == []
    assert leftovers(first.name) == [] and leftovers(second.name) == []
