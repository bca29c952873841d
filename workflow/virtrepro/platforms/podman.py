"""podman containers (OCI, runc) from the same guest image, sshd as the container's command.

Storage lives under ``.state/podman`` (not /var/lib/containers). On hosts with
hybrid cgroups v1 only runc with the cgroupfs manager works, and podman needs
explicit ulimits there; the flags below are those. Networking: slirp4netns with
port 22 published on 127.0.0.1 only.
"""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

from ..guests import GuestState, require_image
from ..testbed import default_state_dir
from .base import PlatformError
from .guest import GuestPlatform

RUN_FLAGS = ["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096"]
GUEST_COMMAND = ["/bin/sh", "-c", "/usr/local/sbin/guest-seed && mkdir -p /run/sshd && exec /usr/sbin/sshd -D -e"]


def podman() -> list[str]:
    root = default_state_dir() / "podman"
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
    family = "container"
    boot_timeout = 60.0

    def launch(self, state: GuestState, name: str, seed: Path):
        image = require_image()
        tag = ensure_image(image)
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        subprocess.run([*podman(), "rm", "-f", "-i", name], capture_output=True)
        command = [
            *podman(), "run", "--rm", "--name", name, "--hostname", name, *RUN_FLAGS,
            "--network", "slirp4netns", "-p", f"127.0.0.1:{port}:22", "-v", f"{seed}:/seed:ro", tag, *GUEST_COMMAND,
        ]
        self.applied.update(image=tag, runtime="runc", cgroup_manager="cgroupfs")
        spec = {
            "stop": [[*podman(), "stop", "-t", "5", name]],
            "cleanup": [[*podman(), "rm", "-f", "-i", name], ["rm", "-rf", str(seed)]],
        }
        return command, spec, "127.0.0.1", port

    reboot_supported = False

    def clone(self, state: GuestState, target: Path) -> None:
        """Commit the running container to a new image (how a container is cloned), then drop it."""
        tag = f"localhost/virtrepro-clone:{state.name}"
        subprocess.run([*podman(), "commit", "-q", state.name, tag], check=True, capture_output=True)
        subprocess.run([*podman(), "rmi", "-f", tag], check=True, capture_output=True)
