"""A remote testbed host on this machine, for the integration tests of remote testbeds.

It is what the harness needs from a host reachable over SSH as root, made from
namespaces: a network namespace (its own address, its own bridge and guests'
network devices, reached from here only through a veth), its own host name (UTS
namespace), its own mount namespace with a sysfs of its network namespace (and
the machine's cgroups, which LXC and podman need), and its own sshd with its own
host key, pinned in a known_hosts file. Its virtrepro state (the host agent, the
guest image, guests) lives in a directory of its own (``state_dir``, short: podman
wants its run directory under 50 characters), as on a separate machine.

The sshd runs under a supervisor owned by the test process: if the test dies, the
host's sshd and namespace go too.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from virtrepro.testbed import supervisor
from virtrepro.testbed.hosts import Host, connect

SSHD_CONFIG = """ListenAddress {address}:22
HostKey {dir}/ssh_host_ed25519_key
AuthorizedKeysFile {dir}/authorized_keys
PidFile {dir}/sshd.pid
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
AllowTcpForwarding yes
MaxStartups 50:30:100
MaxSessions 50
Subsystem sftp internal-sftp
"""

# inside the new mount namespace: a sysfs of this network namespace, with the machine's cgroups
# under it again; then the host name; then sshd
START = """set -e
keep=$(mktemp -d)
mount --rbind /sys/fs/cgroup "$keep"
umount -l /sys
mount -t sysfs sysfs /sys
mount --rbind "$keep" /sys/fs/cgroup
umount -l "$keep"
rmdir "$keep"
hostname {hostname}
exec /usr/sbin/sshd -D -e -f {config}
"""


class RemoteHost:
    def __init__(self, directory: Path, state_dir: Path, netns: str = "vrremote-pytest", subnet: str = "10.250.99",
                 hostname: str = "vr-remote-host", bridge: str | None = None, host_octet: int = 2):
        """``bridge``: an existing bridge of this machine's that the host's veth joins (several hosts on
        one network, ``<subnet>.1`` being the bridge's address), instead of a network of its own."""
        self.dir = Path(directory)
        self.state_dir = Path(state_dir)
        self.netns = netns
        self.veth = f"vrrh-{netns[-10:]}"[:15]
        self.local_address = f"{subnet}.1"
        self.address = f"{subnet}.{host_octet}"
        self.hostname = hostname
        self.bridge = bridge

    @property
    def identity(self) -> Path:
        return self.dir / "id_ed25519"

    @property
    def known_hosts(self) -> Path:
        return self.dir / "known_hosts"

    def host(self, testbed: str) -> Host:
        return Host(name=f"{testbed}/{self.address}", hostname=self.address, port=22, user="root",
                    identity=str(self.identity), known_hosts=str(self.known_hosts), testbed=testbed,
                    remote_state_dir=str(self.state_dir))

    def testbed_spec(self) -> dict:
        """The `testbeds:` entry of the configuration for this host."""
        return {"kind": "ssh", "known_hosts": str(self.known_hosts), "state_dir": str(self.state_dir),
                "hosts": [{"hostname": self.address, "user": "root", "identity": str(self.identity)}]}

    def up(self) -> None:
        self.down()
        self.dir.mkdir(parents=True, exist_ok=True)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        for key in (self.identity, self.dir / "ssh_host_ed25519_key"):
            if not key.exists():
                subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
        (self.dir / "authorized_keys").write_text(Path(f"{self.identity}.pub").read_text())
        host_key = Path(self.dir / "ssh_host_ed25519_key.pub").read_text().split()[:2]
        self.known_hosts.write_text(f"{self.address} {' '.join(host_key)}\n")
        config = self.dir / "sshd_config"
        config.write_text(SSHD_CONFIG.format(address=self.address, dir=self.dir))
        for argv in (
            ["ip", "netns", "add", self.netns],
            ["ip", "link", "add", self.veth, "type", "veth", "peer", "name", "eth0", "netns", self.netns],
            ["ip", "link", "set", self.veth, "master", self.bridge] if self.bridge else
            ["ip", "addr", "add", f"{self.local_address}/24", "dev", self.veth],
            ["ip", "link", "set", self.veth, "up"],
            ["ip", "-n", self.netns, "addr", "add", f"{self.address}/24", "dev", "eth0"],
            ["ip", "-n", self.netns, "link", "set", "eth0", "up"],
            ["ip", "-n", self.netns, "link", "set", "lo", "up"],
        ):
            subprocess.run(argv, check=True, capture_output=True)
        Path("/run/sshd").mkdir(exist_ok=True)
        command = ["nsenter", f"--net=/run/netns/{self.netns}", "unshare", "--mount", "--uts", "--propagation", "slave",
                   "sh", "-c", START.format(hostname=self.hostname, config=config)]
        supervisor.start(command, os.getpid(), self.dir / "supervisor.pid", self.dir / "supervisor.log",
                         {"cleanup": [["ip", "netns", "del", self.netns], ["ip", "link", "del", self.veth]]})
        from virtrepro.guests import wait_for_ssh

        wait_for_ssh(self.host("probe"), 20)

    def run(self, command: str) -> str:
        """A command on the host, over SSH."""
        with connect(self.host("probe")) as connection:
            return connection.run(command, hide=True, in_stream=False, timeout=60).stdout

    def sshd_pid(self) -> int:
        """The host's sshd (its listener): a process in the host's network, mount and UTS namespaces."""
        for pid in sorted(self.processes()):
            try:
                if Path(f"/proc/{pid}/comm").read_text().strip() == "sshd":
                    return pid
            except OSError:
                continue
        raise RuntimeError(f"no sshd runs in {self.netns}")

    def processes(self) -> list[int]:
        """Processes running in the host's network namespace (its sshd, its sessions, its guests...)."""
        result = subprocess.run(["ip", "netns", "pids", self.netns], capture_output=True, text=True)
        return [int(pid) for pid in result.stdout.split()]

    def down(self) -> None:
        """Stop the host: its sshd, then whatever still runs in its namespace (a test that failed half-way)."""
        supervisor.stop(self.dir / "supervisor.pid")
        import signal
        import time

        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in self.processes():
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 10
            while self.processes() and time.monotonic() < deadline:
                time.sleep(0.1)
        subprocess.run(["ip", "netns", "del", self.netns], capture_output=True)
        subprocess.run(["ip", "link", "del", self.veth], capture_output=True)
