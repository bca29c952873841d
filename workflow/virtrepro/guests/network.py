"""The private network of a testbed's instances: a host-only bridge per testbed.

Every instance that takes part in a network benchmark gets an address on its
testbed's bridge, so two instances of one platform talk to each other over it (LXC
veth, podman in a network namespace with a veth, QEMU tap). The bridge exists only
on the testbed host: no forwarding, no NAT, no route to anything else.

Addresses are fixed per testbed, platform and instance index:
``10.251.<testbed octet>.<platform's first host + index>``, where the testbed octet
is a stable hash of the testbed's name (1..254). Each testbed has its own bridge
``vrbr-<octet in hex>`` with the host's address ``10.251.<octet>.1/24`` on it, so two
testbeds that run the same platform on one machine at the same time never share an
address, a bridge, a MAC or a device name (QEMU MACs and device names carry the
octet too), and one testbed removing its idle bridge never disturbs another's. The
instances' own addresses are /16 (``NETWORK``/``PREFIX``: the private network of all
testbeds). A bridge is removed when its last port goes away.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from ..platforms import catalog as platform_catalog
from ..errors import VirtreproError
from ..layout import NETWORK, PREFIX  # the instances' network (a leaf's constants, the benchmarks' too)

# what this module runs on the host: path or program -> Debian package (see virtrepro.testbed.packages)
HOST_PATHS = {"ip": "iproute2"}

# first host number per platform (its declaration's address block); instance i gets first + i
FIRST_HOST = {spec.name: spec.first_host for spec in platform_catalog.PLATFORMS}
INSTANCES_PER_PLATFORM = 20


class NetworkError(VirtreproError, RuntimeError):
    pass


def testbed_octet(testbed: str) -> int:
    """The third octet of a testbed's addresses: a stable hash of its name, 1..254."""
    if not testbed:
        raise NetworkError("private addresses need the testbed's name")
    return 1 + int(hashlib.sha256(testbed.encode()).hexdigest(), 16) % 254


def address(platform: str, index: int, testbed: str) -> str:
    if platform not in FIRST_HOST or not 0 <= index < INSTANCES_PER_PLATFORM:
        raise NetworkError(f"no private address for {platform} instance {index}")
    return f"{NETWORK}.{testbed_octet(testbed)}.{FIRST_HOST[platform] + index}"


def bridge(testbed: str) -> str:
    """The testbed's host-only bridge on its host."""
    return f"vrbr-{testbed_octet(testbed):02x}"


def bridge_address(testbed: str) -> str:
    """The host's own address on the testbed's bridge (its instances' subnet)."""
    return f"{NETWORK}.{testbed_octet(testbed)}.1/24"


def mac(ip: str) -> str:
    """A MAC of its own for a VM's NIC on the bridge, from the last two octets of its address
    (QEMU's default MAC is the same in every VM, which a bridge cannot tell apart)."""
    third, fourth = (int(part) for part in ip.split(".")[2:])
    return f"52:54:00:fb:{third:02x}:{fourth:02x}"


def device_name(prefix: str, testbed: str, guest: str, limit: int = 15) -> str:
    """A network device (or namespace) name for a guest: prefix, testbed octet, end of the guest's name.

    Interface names have at most 15 characters; the guest's name ends with its spec hash and index."""
    tag = f"{prefix}{testbed_octet(testbed):02x}"
    return tag + guest[-(limit - len(tag)):]


def ensure_bridge(testbed: str) -> str:
    """The testbed's bridge, up, with the host's address on it; return its name."""
    name = bridge(testbed)
    if not Path(f"/sys/class/net/{name}").exists():
        result = subprocess.run(["ip", "link", "add", name, "type", "bridge"], capture_output=True, text=True)
        if result.returncode != 0 and "File exists" not in result.stderr:
            raise NetworkError(f"ip link add {name} type bridge: {result.stderr.strip()}")
    addresses = subprocess.run(["ip", "-o", "-4", "addr", "show", "dev", name], capture_output=True, text=True).stdout
    commands = [["ip", "link", "set", name, "up"]]
    if f" {bridge_address(testbed)} " not in addresses:
        commands.insert(0, ["ip", "addr", "add", bridge_address(testbed), "dev", name])
    for argv in commands:
        result = subprocess.run(argv, capture_output=True, text=True)
        if result.returncode != 0 and "File exists" not in result.stderr and "already assigned" not in result.stderr:
            raise NetworkError(f"{' '.join(argv)}: {result.stderr.strip()}")
    return name


def remove_idle_bridge(testbed: str) -> list[str]:
    """A supervisor cleanup command: drop the testbed's bridge once nothing is attached to it."""
    name = bridge(testbed)
    return ["sh", "-c", f"[ -d /sys/class/net/{name} ] && [ -z \"$(ls /sys/class/net/{name}/brif)\" ] && ip link del {name}; true"]


def netns_on_bridge(testbed: str, netns: str, host_side: str, ip: str) -> list[list[str]]:
    """Create a network namespace with one veth on the testbed's bridge; return the cleanup commands."""
    name = ensure_bridge(testbed)
    for argv in (
        ["ip", "netns", "add", netns],
        ["ip", "link", "add", host_side, "type", "veth", "peer", "name", "eth0", "netns", netns],
        ["ip", "link", "set", host_side, "master", name, "up"],
        ["ip", "-n", netns, "addr", "add", f"{ip}/{PREFIX}", "dev", "eth0"],
        ["ip", "-n", netns, "link", "set", "eth0", "up"],
        ["ip", "-n", netns, "link", "set", "lo", "up"],
    ):
        subprocess.run(argv, check=True, capture_output=True)
    return [["ip", "link", "del", host_side], ["ip", "netns", "del", netns], remove_idle_bridge(testbed)]


def tap_on_bridge(testbed: str, tap: str) -> list[list[str]]:
    """Create a tap device on the testbed's bridge (a VM's second NIC); return the cleanup commands."""
    name = ensure_bridge(testbed)
    subprocess.run(["ip", "tuntap", "add", "dev", tap, "mode", "tap"], check=True, capture_output=True)
    subprocess.run(["ip", "link", "set", tap, "master", name, "up"], check=True, capture_output=True)
    return [["ip", "link", "del", tap], remove_idle_bridge(testbed)]


def networkd_static(interface: str, ip: str) -> str:
    return f"[Match]\nName={interface}\n\n[Network]\nAddress={ip}/{PREFIX}\nLinkLocalAddressing=no\nIPv6AcceptRA=no\n"
