"""native: the testbed host itself, no virtualization layer.

For network benchmarks, which need two communicating instances, native
instances are network namespaces of the host (veth on the host-only bridge of
:mod:`virtrepro.guests.network`), each running its own sshd with its own host
key: the host's kernel and binaries, separate network stacks.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ..guests import GuestState
from ..guests.network import address, device_name, netns_on_bridge
from ..testbed.hosts import Host
from .base import Platform
from .guest import GuestPlatform

# what this module runs on the host: path or program -> Debian package (see virtrepro.testbed.packages)
HOST_PATHS = {"ip": "iproute2", "unshare": "util-linux", "/usr/sbin/sshd": "openssh-server"}


class Native(Platform):
    name = "native"

    @classmethod
    def agent_class(cls) -> type:
        """On a remote host the agent starts native's network instances (NativeNetns)."""
        return NativeNetns

    @contextmanager
    def instance(self, index: int = 0) -> Iterator[Host]:
        yield self.host

    @contextmanager
    def network_instance(self, index: int = 0) -> Iterator[Host]:
        with NativeNetns(self.host, self.spec).instance(index) as endpoint:
            yield endpoint

    def private_address(self, index: int) -> str:
        return address(self.name, index, self.testbed)

    def authorized_keys_file(self, index: int) -> str:
        """A network namespace's sshd reads the authorized_keys of its seed (not the host's own)."""
        return f"{NativeNetns(self.host, self.spec).host_state_dir(index)}/seed/authorized_keys"


class NativeNetns(GuestPlatform):
    """A network namespace of the host with its own sshd (an instance of `native` for network benchmarks)."""

    name = "native"
    boot_timeout = 30.0
    tool = "sshd"
    # an idle sshd in a network namespace: the host itself, nothing to freeze (as native's instance)
    freezable = False
    freeze_mechanism = Platform.freeze_mechanism

    def launch(self, state: GuestState, name: str, seed: Path):
        import subprocess

        index = int(name.rsplit("-", 1)[1])
        ip = address(self.name, index, self.testbed)
        netns, host_side = device_name("vrh-", self.testbed, name), device_name("vh-", self.testbed, name)
        subprocess.run(["ip", "link", "del", host_side], capture_output=True)
        subprocess.run(["ip", "netns", "del", netns], capture_output=True)
        network_cleanup = netns_on_bridge(self.testbed, netns, host_side, ip)
        config = state.dir / "sshd_config"
        config.write_text(
            "\n".join(
                [
                    f"ListenAddress {ip}:22",
                    f"HostKey {seed / 'ssh_host_ed25519_key'}",
                    f"AuthorizedKeysFile {seed / 'authorized_keys'}",
                    f"PidFile {state.dir / 'sshd.pid'}",
                    "PermitRootLogin prohibit-password",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "UsePAM no",
                    "StrictModes no",
                    "Subsystem sftp internal-sftp",  # benchmarks upload files (Benchmark.prepare: uploads)
                    "",
                ]
            )
        )
        self.applied.update(address=ip, netns=netns)
        # a host name of its own (UTS namespace), as a separate host has: Open MPI tells nodes apart by
        # name, and two instances named alike would talk through shared memory instead of the network
        command = ["ip", "netns", "exec", netns, "unshare", "--uts", "sh", "-c",
                   f"hostname {name} && exec /usr/sbin/sshd -D -e -f {config}"]
        return command, {"cleanup": [["rm", "-rf", str(seed)], *network_cleanup]}, ip, 22
