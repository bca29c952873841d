"""podman containers (OCI, runc) from the same guest image, sshd as the container's command.

Storage lives under ``.state/podman`` (not /var/lib/containers). On hosts with
hybrid cgroups v1 only runc with the cgroupfs manager works, and podman needs
explicit ulimits there; the flags below are those. Networking: a network
namespace made by the harness with a veth on the host-only bridge of
:mod:`virtrepro.guests.network` (no podman network, no NAT, no iptables rules).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from ..guests import GuestState, require_image
from ..guests.network import address, device_name, netns_on_bridge
from ..testbed.hosts import default_state_dir
from .base import PlatformError
from .guest import GuestPlatform, scratch_bind

# what this module runs on the host: path or program -> Debian package (see virtrepro.testbed.packages);
# podman depends on "crun | runc" and would get crun, the flags below ask for runc
HOST_PATHS = {"podman": "podman", "runc": "runc", "conmon": "conmon"}

RUN_FLAGS = ["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096"]
GUEST_COMMAND = ["/bin/sh", "-c", "/usr/local/sbin/guest-seed && mkdir -p /run/sshd && exec /usr/sbin/sshd -D -e"]


def podman() -> list[str]:
    root = default_state_dir() / "podman"
    if len(str(root / "runroot")) > 50:  # podman refuses longer ones (its run directory holds sockets)
        raise PlatformError(f"podman: its run directory {root / 'runroot'} would be longer than 50 characters; "
                            "use a shorter state directory (VIRTREPRO_STATE, or a remote testbed's state_dir)")
    return ["podman", "--root", str(root / "storage"), "--runroot", str(root / "runroot"),
            "--cgroup-manager", "cgroupfs", "--runtime", "runc"]


def ensure_image(image: Path) -> str:
    tag = f"localhost/virtrepro-guest:{image.name}"
    if subprocess.run([*podman(), "image", "exists", tag], capture_output=True).returncode != 0:
        result = subprocess.run(
            [*podman(), "import", "--change", 'CMD ["/bin/sh"]', str(image / "rootfs.tar"), tag],
            capture_output=True, text=True,
        )
        if result.returncode != 0:
            raise PlatformError(f"podman import of {image / 'rootfs.tar'} failed: {result.stderr.strip()[-500:]}")
    return tag


class Podman(GuestPlatform):
    name = "podman"
    boot_timeout = 60.0
    tool = "podman"

    def launch(self, state: GuestState, name: str, seed: Path):
        image = require_image()
        tag = ensure_image(image)
        index = int(name.rsplit("-", 1)[1])
        ip = address(self.name, index, self.testbed)
        netns, host_side = device_name("vrn-", self.testbed, name), device_name("vp-", self.testbed, name)
        subprocess.run([*podman(), "rm", "-f", "-i", name], capture_output=True)
        subprocess.run(["ip", "link", "del", host_side], capture_output=True)
        subprocess.run(["ip", "netns", "del", netns], capture_output=True)
        network_cleanup = netns_on_bridge(self.testbed, netns, host_side, ip)
        limits = self.container_limits(index, default_state_dir() / "podman")
        flags = ["--cpuset-cpus", limits["cpuset"]]
        if "memory_limit_mb" in limits:
            flags += ["--memory", f"{limits['memory_limit_mb']}m"]
        if "disk_bps" in limits:
            for kind in ("read", "write"):
                flags += [f"--device-{kind}-bps", f"{limits['disk_device_path']}:{limits['disk_bps']}"]
        scratch, target = scratch_bind()  # not the --rm container's overlay, whose fsync is volatile
        command = [
            *podman(), "run", "--rm", "--name", name, "--hostname", name, *RUN_FLAGS, *flags,
            "--network", f"ns:/run/netns/{netns}", "-v", f"{seed}:/seed:ro", "-v", f"{scratch}:{target}", tag, *GUEST_COMMAND,
        ]
        self.applied.update(image=tag, runtime="runc", cgroup_manager="cgroupfs", address=ip, network="netns+veth",
                            scratch=f"bind mount of the host's {scratch}")
        spec = {
            # unpaused first: a paused container's processes cannot stop (unpause of a running one fails, harmless)
            "stop": [[*podman(), "unpause", name], [*podman(), "stop", "-t", "5", name]],
            "cleanup": [[*podman(), "rm", "-f", "-i", name], ["rm", "-rf", str(seed)], *network_cleanup],
        }
        return command, spec, ip, 22

    def spec_applied(self, index: int) -> dict:
        return {"limits": self.container_limits(index, default_state_dir() / "podman")}

    reboot_supported = False

    freeze_mechanism = "podman pause/unpause (runc, the container's cgroup v1 freezer)"

    def _set_frozen(self, state: GuestState, index: int, frozen: bool) -> None:
        verb = "pause" if frozen else "unpause"
        self._run_freezer(index, f"podman {verb}", [*podman(), verb, state.name])

    def _frozen_now(self, state: GuestState) -> bool:
        result = subprocess.run([*podman(), "inspect", "--format", "{{.State.Paused}} {{.State.Status}}", state.name],
                                capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            raise PlatformError(f"podman inspect: {(result.stderr.strip() or result.stdout.strip())[-300:]}")
        return result.stdout.split()[:1] == ["true"]

    def container_id(self, index: int = 0) -> str:
        result = subprocess.run([*podman(), "inspect", "--format", "{{.Id}}", self.guest_name(index)],
                                capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            raise PlatformError(f"podman inspect {self.guest_name(index)}: {result.stderr.strip()[-300:]}")
        return result.stdout.strip()

    def _cgroup(self, controller: str, index: int) -> Path:
        """The container's cgroup v1 directory of ``controller`` (cgroupfs manager: libpod_parent/libpod-ID)."""
        cid = self.container_id(index)
        for path in Path(f"/sys/fs/cgroup/{controller}").glob(f"**/*{cid}*"):
            if path.is_dir():
                return path
        raise PlatformError(f"podman instance {index}: no {controller} cgroup of container {cid[:12]}")

    def freezer_state_file(self, index: int = 0) -> Path:
        return self._cgroup("freezer", index) / "freezer.state"

    def cpu_time_ns(self, index: int = 0) -> int:
        return int((self._cgroup("cpuacct", index) / "cpuacct.usage").read_text())

    def clone(self, state: GuestState, target: Path) -> None:
        """Commit the running container to a new image (how a container is cloned), then drop it."""
        tag = f"localhost/virtrepro-clone:{state.name}"
        subprocess.run([*podman(), "commit", "-q", state.name, tag], check=True, capture_output=True)
        subprocess.run([*podman(), "rmi", "-f", tag], check=True, capture_output=True)
