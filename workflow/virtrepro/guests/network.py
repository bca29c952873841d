"""The private network of the local testbed's instances: a host-only bridge.

``vrbr0`` (10.251.0.1/24) exists only on this machine: no forwarding, no NAT,
no route to anything else. Every instance that takes part in a network
benchmark gets an address on it, so two instances of one platform talk to each
other over it (LXC veth, podman in a network namespace with a veth, QEMU tap).
Addresses are fixed per platform and instance index; the bridge is removed when
its last port goes away.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

BRIDGE = "vrbr0"
BRIDGE_ADDRESS = "10.251.0.1/24"
SUBNET = "10.251.0"
PREFIX = 24
# first host number per platform; instance i gets first + i
FIRST_HOST = {"lxc": 10, "podman": 30, "qemu-kvm": 50, "qemu-tcg": 50, "native": 70}
INSTANCES_PER_PLATFORM = 20


class NetworkError(RuntimeError):
    pass


def address(platform: str, index: int) -> str:
    if platform not in FIRST_HOST or not 0 <= index < INSTANCES_PER_PLATFORM:
        raise NetworkError(f"no private address for {platform} instance {index}")
    return f"{SUBNET}.{FIRST_HOST[platform] + index}"


def ensure_bridge() -> None:
    if Path(f"/sys/class/net/{BRIDGE}").exists():
        return
    for argv in (
        ["ip", "link", "add", BRIDGE, "type", "bridge"],
        ["ip", "addr", "add", BRIDGE_ADDRESS, "dev", BRIDGE],
        ["ip", "link", "set", BRIDGE, "up"],
    ):
        result = subprocess.run(argv, capture_output=True, text=True)
        if result.returncode != 0 and "File exists" not in result.stderr:
            raise NetworkError(f"{' '.join(argv)}: {result.stderr.strip()}")


# a supervisor cleanup command: drop the bridge once nothing is attached to it
REMOVE_IDLE_BRIDGE = [
    "sh", "-c",
    f"[ -d /sys/class/net/{BRIDGE} ] && [ -z \"$(ls /sys/class/net/{BRIDGE}/brif)\" ] && ip link del {BRIDGE}; true",
]


def netns_on_bridge(netns: str, host_side: str, ip: str) -> list[list[str]]:
    """Create a network namespace with one veth on the bridge; return the cleanup commands."""
    ensure_bridge()
    for argv in (
        ["ip", "netns", "add", netns],
        ["ip", "link", "add", host_side, "type", "veth", "peer", "name", "eth0", "netns", netns],
        ["ip", "link", "set", host_side, "master", BRIDGE, "up"],
        ["ip", "-n", netns, "addr", "add", f"{ip}/{PREFIX}", "dev", "eth0"],
        ["ip", "-n", netns, "link", "set", "eth0", "up"],
        ["ip", "-n", netns, "link", "set", "lo", "up"],
    ):
        subprocess.run(argv, check=True, capture_output=True)
    return [["ip", "link", "del", host_side], ["ip", "netns", "del", netns], REMOVE_IDLE_BRIDGE]


def tap_on_bridge(tap: str) -> list[list[str]]:
    """Create a tap device on the bridge (a VM's second NIC); return the cleanup commands."""
    ensure_bridge()
    subprocess.run(["ip", "tuntap", "add", "dev", tap, "mode", "tap"], check=True, capture_output=True)
    subprocess.run(["ip", "link", "set", tap, "master", BRIDGE, "up"], check=True, capture_output=True)
    return [["ip", "link", "del", tap], REMOVE_IDLE_BRIDGE]


def networkd_static(interface: str, ip: str) -> str:
    return f"[Match]\nName={interface}\n\n[Network]\nAddress={ip}/{PREFIX}\nLinkLocalAddressing=no\nIPv6AcceptRA=no\n"
