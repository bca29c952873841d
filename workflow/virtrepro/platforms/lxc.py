"""LXC system containers (OS-level virtualization: the papers' OpenVZ and the thesis' LXC).

A privileged LXC 5 container with systemd inside, its root file system an
overlay of the shared guest image (lower, read-only) and a per-container upper
directory; benchmarks write to the host's scratch directory, bind-mounted at the
same path (:func:`~virtrepro.platforms.guest.scratch_bind`), so the container
writes to the host's file system like OpenVZ did.
Its network is a veth pair on the testbed's host-only bridge (:mod:`virtrepro.guests.network`);
sshd answers on the container's own address there, which other instances reach too.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from ..guests import GuestState, require_image
from ..guests.network import PREFIX, address, device_name, ensure_bridge, remove_idle_bridge
from ..testbed.hosts import default_state_dir
from .base import PlatformError
from .guest import GuestPlatform, scratch_bind

# what this module runs or reads on the host: path or program -> Debian package (see virtrepro.testbed.packages)
HOST_PATHS = {
    "lxc-start": "lxc", "lxc-stop": "lxc", "lxc-freeze": "lxc", "lxc-unfreeze": "lxc", "lxc-info": "lxc",
    # the container configuration includes it; lxc only recommends lxc-templates, which ships it
    "/usr/share/lxc/config/debian.common.conf": "lxc-templates",
    "/usr/share/lxc/config/common.conf": "liblxc-common",
    "cp": "coreutils", "rm": "coreutils",
}


def lxc_path() -> Path:
    return default_state_dir() / "lxc"


class Lxc(GuestPlatform):
    name = "lxc"
    boot_timeout = 90.0
    tool = "lxc-start"

    # LXC's log and the console are kept in the guest's state directory: the cleanup removes the container's
    def console_log(self, state: GuestState) -> Path:
        return state.dir / "console.log"

    def tool_logs(self, state: GuestState):
        return [*super().tool_logs(state), ("LXC's log", state.dir / "lxc.log", r"\b(ERROR|CRIT|ALERT|FATAL)\b")]

    def launch(self, state: GuestState, name: str, seed: Path):
        image = require_image()
        ip = address(self.name, int(name.rsplit("-", 1)[1]), self.testbed)
        container = lxc_path() / name
        subprocess.run(["rm", "-rf", str(container)], check=True)
        (container / "delta").mkdir(parents=True)
        bridge = ensure_bridge(self.testbed)
        limits = self.container_limits(int(name.rsplit("-", 1)[1]), container)
        scratch, target = scratch_bind()
        cgroup = [f"lxc.cgroup.cpuset.cpus = {limits['cpuset']}"]
        if "memory_limit_mb" in limits:
            cgroup.append(f"lxc.cgroup.memory.limit_in_bytes = {limits['memory_limit_mb'] * 1024 * 1024}")
        if "disk_bps" in limits:
            cgroup += [f"lxc.cgroup.blkio.throttle.{kind}_bps_device = {limits['disk_device']} {limits['disk_bps']}"
                       for kind in ("read", "write")]
        (container / "config").write_text(
            "\n".join(
                [
                    "lxc.include = /usr/share/lxc/config/debian.common.conf",
                    "lxc.arch = amd64",
                    f"lxc.uts.name = {name}",
                    f"lxc.rootfs.path = overlay:{image / 'rootfs'}:{container / 'delta'}",
                    "lxc.apparmor.profile = unconfined",
                    "lxc.net.0.type = veth",
                    f"lxc.net.0.link = {bridge}",
                    "lxc.net.0.flags = up",
                    "lxc.net.0.name = eth0",
                    f"lxc.net.0.veth.pair = {device_name('vr-', self.testbed, name)}",
                    f"lxc.net.0.ipv4.address = {ip}/{PREFIX}",
                    f"lxc.mount.entry = {seed} seed none bind,ro,create=dir 0 0",
                    f"lxc.mount.entry = {scratch} {target.lstrip('/')} none bind,create=dir 0 0",
                    f"lxc.log.file = {state.dir / 'lxc.log'}",
                    "lxc.log.level = WARN",
                    *cgroup,
                    f"lxc.console.logfile = {self.console_log(state)}",
                    "",
                ]
            )
        )
        base = ["-P", str(lxc_path()), "-n", name]
        self.applied.update(image=image.name, address=ip, rootfs="overlay", scratch=f"bind mount of the host's {scratch}")
        spec = {
            # thawed first: a frozen container's processes cannot stop (lxc-unfreeze of a running one fails, harmless)
            "stop": [["lxc-unfreeze", *base], ["lxc-stop", *base, "-t", "20"]],
            "cleanup": [["lxc-stop", *base, "-k"], ["rm", "-rf", str(container), str(seed)],
                        remove_idle_bridge(self.testbed)],
        }
        return ["lxc-start", "-F", *base], spec, ip, 22

    def spec_applied(self, index: int) -> dict:
        return {"limits": self.container_limits(index, lxc_path())}

    freeze_mechanism = "lxc-freeze/lxc-unfreeze (the container's cgroup v1 freezer)"

    def _base(self, state: GuestState) -> list[str]:
        return ["-P", str(lxc_path()), "-n", state.name]

    def _set_frozen(self, state: GuestState, index: int, frozen: bool) -> None:
        what = "lxc-freeze" if frozen else "lxc-unfreeze"
        self._run_freezer(index, what, [what, *self._base(state)])

    def _frozen_now(self, state: GuestState) -> bool:
        result = subprocess.run(["lxc-info", *self._base(state), "-s"], capture_output=True, text=True, timeout=30)
        if result.returncode != 0:
            raise PlatformError(f"lxc-info: {(result.stderr.strip() or result.stdout.strip())[-300:]}")
        return result.stdout.split()[-1:] == ["FROZEN"]

    def freezer_state_file(self, index: int = 0) -> Path | None:
        """The cgroup v1 freezer.state of instance ``index`` (for tests and the bench), if found."""
        for group in (f"lxc.payload.{self.guest_name(index)}", f"lxc/{self.guest_name(index)}"):
            path = Path("/sys/fs/cgroup/freezer") / group / "freezer.state"
            if path.exists():
                return path
        return None

    def cpu_time_ns(self, index: int = 0) -> int:
        for group in (f"lxc.payload.{self.guest_name(index)}", f"lxc/{self.guest_name(index)}"):
            path = Path("/sys/fs/cgroup/cpuacct") / group / "cpuacct.usage"
            if path.exists():
                return int(path.read_text())
        raise PlatformError(f"lxc instance {index}: no cpuacct cgroup of {self.guest_name(index)}")

    def clone(self, state: GuestState, target: Path) -> None:
        """A full copy of the container's root file system (what lxc-copy without snapshots does)."""
        container = lxc_path() / state.name
        target.mkdir(parents=True)
        subprocess.run(["cp", "-a", f"{require_image() / 'rootfs'}/.", str(target)], check=True)
        subprocess.run(["cp", "-a", f"{container / 'delta'}/.", str(target)], check=True)
