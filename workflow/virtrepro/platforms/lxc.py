"""LXC system containers (OS-level virtualization: the papers' OpenVZ and the thesis' LXC).

A privileged LXC 5 container with systemd inside, its root file system an
overlay of the shared guest image (lower, read-only) and a per-container upper
directory, so the container writes to the host's file system like OpenVZ did.
Its network is a veth pair on a host-only bridge (``vrbr0``, 10.251.0.1/24, no
forwarding, no NAT); sshd answers on the container's own address.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from ..guests import GuestState, require_image
from ..testbed import default_state_dir
from .guest import GuestPlatform

BRIDGE = "vrbr0"
BRIDGE_ADDRESS = "10.251.0.1/24"
SUBNET = "10.251.0"


def lxc_path() -> Path:
    return default_state_dir() / "lxc"


def ensure_bridge() -> None:
    if Path(f"/sys/class/net/{BRIDGE}").exists():
        return
    subprocess.run(["ip", "link", "add", BRIDGE, "type", "bridge"], check=True)
    subprocess.run(["ip", "addr", "add", BRIDGE_ADDRESS, "dev", BRIDGE], check=True)
    subprocess.run(["ip", "link", "set", BRIDGE, "up"], check=True)


REMOVE_IDLE_BRIDGE = [
    "sh", "-c",
    f"[ -d /sys/class/net/{BRIDGE} ] && [ -z \"$(ls /sys/class/net/{BRIDGE}/brif)\" ] && ip link del {BRIDGE}; true",
]


class Lxc(GuestPlatform):
    name = "lxc"
    family = "container"
    boot_timeout = 90.0

    def console_log(self, state: GuestState) -> Path:
        return lxc_path() / state.name / "console.log"

    def launch(self, state: GuestState, name: str, seed: Path):
        image = require_image()
        index = int(name.rsplit("-", 1)[1])
        address = f"{SUBNET}.{10 + index}"
        container = lxc_path() / name
        subprocess.run(["rm", "-rf", str(container)], check=True)
        (container / "delta").mkdir(parents=True)
        ensure_bridge()
        (container / "config").write_text(
            "\n".join(
                [
                    "lxc.include = /usr/share/lxc/config/debian.common.conf",
                    "lxc.arch = amd64",
                    f"lxc.uts.name = {name}",
                    f"lxc.rootfs.path = overlay:{image / 'rootfs'}:{container / 'delta'}",
                    "lxc.apparmor.profile = unconfined",
                    "lxc.net.0.type = veth",
                    f"lxc.net.0.link = {BRIDGE}",
                    "lxc.net.0.flags = up",
                    "lxc.net.0.name = eth0",
                    f"lxc.net.0.veth.pair = vr-{name[-9:]}",
                    f"lxc.net.0.ipv4.address = {address}/24",
                    f"lxc.mount.entry = {seed} seed none bind,ro,create=dir 0 0",
                    f"lxc.log.file = {container / 'lxc.log'}",
                    "lxc.log.level = WARN",
                    f"lxc.console.logfile = {container / 'console.log'}",
                    "",
                ]
            )
        )
        base = ["-P", str(lxc_path()), "-n", name]
        self.applied.update(image=image.name, address=address, rootfs="overlay")
        spec = {
            "stop": [["lxc-stop", *base, "-t", "20"]],
            "cleanup": [["lxc-stop", *base, "-k"], ["rm", "-rf", str(container), str(seed)], REMOVE_IDLE_BRIDGE],
        }
        return ["lxc-start", "-F", *base], spec, address, 22

    def clone(self, state: GuestState, target: Path) -> None:
        """A full copy of the container's root file system (what lxc-copy without snapshots does)."""
        container = lxc_path() / state.name
        target.mkdir(parents=True)
        subprocess.run(["cp", "-a", f"{require_image() / 'rootfs'}/.", str(target)], check=True)
        subprocess.run(["cp", "-a", f"{container / 'delta'}/.", str(target)], check=True)
