"""Guests (containers and VMs) on a testbed host: images, identities, lifetimes.

A guest is started by a platform (:mod:`virtrepro.platforms`) under a
:mod:`virtrepro.testbed.supervisor` whose owner is the Snakemake process (or the test or
script that asked for it), so it stays up across the measurement jobs of one
run and is torn down at the end of the run, or when its owner dies, with all
its devices and directories. Its state lives in
``.state/guests/<testbed>/<platform>-<spec hash>-<index>/``.

Each guest gets its own SSH host key, generated into a *seed* directory that
``guest-seed.service`` in the image installs before sshd starts (containers
bind-mount it at ``/seed``; VMs get it as a small ext4 disk). The testbed pins
that key in the guest's own known_hosts file: nothing trusts an unknown key.

This module runs on the testbed host itself: in the controller for the local
testbed, and in the host agent (:mod:`virtrepro.testbed.hostagent`, standard library
only) on a remote testbed's host, which reaches its guests with OpenSSH's client
instead of Fabric (``wait_for_ssh(..., client="openssh")``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

from ..testbed import supervisor
from ..errors import VirtreproError
from ..testbed.hosts import Host, connect, default_state_dir

# what this module runs on the host: path or program -> Debian package (see virtrepro.testbed.packages)
HOST_PATHS = {"ssh-keygen": "openssh-client", "ssh": "openssh-client"}


class GuestError(VirtreproError, RuntimeError):
    """A guest could not be started or reached."""



_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def last_lines(text: str, count: int = 6, width: int = 300, only: str | None = None) -> list[str]:
    """The last ``count`` meaningful lines of a tool's output: escape sequences and blank lines dropped,
    long lines cut to ``width``; with ``only`` (a regular expression) just the lines it matches, if any
    does (a log's errors among its warnings)."""
    lines = [_ANSI.sub("", line).replace("\r", "").rstrip() for line in text.splitlines()]
    lines = [line if len(line) <= width else line[:width] + "..." for line in lines if line.strip()]
    if only is not None:
        lines = [line for line in lines if re.search(only, line)] or lines
    return lines[-count:]

def spec_hash(spec: dict) -> str:
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:8]


def images_dir() -> Path:
    return default_state_dir() / "images"


def image_dir() -> Path:
    """The directory of the current recipe's image (built by the guest_image rule)."""
    from .image import recipe_hash

    return images_dir() / recipe_hash()


def require_image() -> Path:
    path = image_dir()
    if not (path / "image.json").exists():
        raise GuestError(
            f"guest image {path} is missing: it is built by the workflow's guest_image rule "
            "(or: python -m virtrepro.guests.image build " + str(path) + ")"
        )
    return path


def make_seed(seed: Path, name: str, authorized_key_file: str, network: dict[str, str] | None = None,
              extra_keys: list[str] = ()) -> str:
    """Write a guest's seed (fresh host key, authorized_keys, hostname); return its public host key.

    ``authorized_key_file`` is a private key whose ``.pub`` may log in; ``extra_keys`` are more
    public key lines (on a remote testbed host: the controller's key beside the host agent's)."""
    if seed.exists():
        shutil.rmtree(seed)
    seed.mkdir(parents=True)
    os.chmod(seed, 0o700)
    key = seed / "ssh_host_ed25519_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"root@{name}", "-f", str(key)], check=True)
    keys = [Path(f"{authorized_key_file}.pub").read_text().strip(), *(k.strip() for k in extra_keys)]
    (seed / "authorized_keys").write_text("".join(f"{k}\n" for k in keys if k))
    (seed / "hostname").write_text(name + "\n")
    for relative, content in (network or {}).items():
        path = seed / "network" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return " ".join(Path(f"{key}.pub").read_text().split()[:2])


def write_known_hosts(path: Path, host: str, port: int, public_key: str) -> Path:
    spec = host if port == 22 else f"[{host}]:{port}"
    path.write_text(f"{spec} {public_key}\n")
    return path


class HostKeyError(GuestError):
    """A guest offered another SSH host key than the one pinned for it."""


def openssh_run(host: Host, command: str, timeout: float = 30) -> subprocess.CompletedProcess:
    """Run ``command`` on ``host`` with OpenSSH's client: pinned host key only, no user configuration.

    The host agent's way into its guests (it has no Fabric). Raises HostKeyError when the
    host key is not the pinned one."""
    argv = [
        "ssh", "-F", "/dev/null", "-i", str(host.identity), "-p", str(host.port),
        "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
        "-o", f"UserKnownHostsFile={host.known_hosts}", "-o", "GlobalKnownHostsFile=/dev/null",
        "-o", f"ConnectTimeout={max(1, min(10, int(timeout)))}", "-o", "LogLevel=ERROR",
        f"{host.user}@{host.hostname}", command,
    ]
    result = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
    if result.returncode == 255 and "Host key verification failed" in result.stderr:
        raise HostKeyError(f"guest {host.name} offered an unexpected host key: {result.stderr.strip()[-300:]}")
    return result


def guest_run(host: Host, command: str, timeout: float = 30, client: str = "fabric") -> str:
    """Run ``command`` in a guest over SSH (Fabric, or OpenSSH's client in the host agent); return its stdout."""
    if client == "openssh":
        result = openssh_run(host, command, timeout)
        if result.returncode != 0:
            raise GuestError(f"{command!r} on {host.name} exited {result.returncode}: {result.stderr.strip()[-300:]}")
        return result.stdout
    with connect(host) as connection:
        return connection.run(command, hide=True, in_stream=False, timeout=timeout).stdout


# how often wait_for_banner tries a new TCP connection while a guest boots (the resolution of
# boot-to-ready timings: each log and sidecar records the gap actually achieved)
READY_POLL_S = 0.01


def wait_for_banner(hostname: str, port: int, timeout: float, alive=None, name: str | None = None,
                    interval: float = READY_POLL_S) -> tuple[float, float]:
    """Poll plain TCP connects to ``hostname:port`` until an SSH server's banner arrives.

    Returns (the ``time.monotonic()`` at which the banner arrived, the resolution: the time
    between the start of the last attempt that found no SSH server and the start of the one
    that did; 0 when the first attempt succeeded). A refused connect returns at once, a
    connection that is accepted but closed (QEMU's port forwarding before the guest listens)
    counts as not ready, an accepted one waits for the banner."""
    start = time.monotonic()
    previous = None
    name = name or f"{hostname}:{port}"
    while True:
        attempt = time.monotonic()
        if alive is not None and not alive():
            raise GuestError(f"guest {name} died while booting")
        try:
            with socket.create_connection((hostname, port), timeout=0.2) as sock:
                sock.settimeout(2)
                if sock.recv(4) == b"SSH-":
                    return time.monotonic(), 0.0 if previous is None else attempt - previous
        except OSError:  # refused, unreachable, reset, no banner yet
            pass
        previous = attempt
        if time.monotonic() - start >= timeout:
            raise GuestError(f"guest {name} did not answer over SSH within {timeout:.0f} s "
                             f"(no SSH banner on {hostname}:{port})")
        time.sleep(interval)


def wait_for_ssh(host: Host, timeout: float, alive=None, client: str = "fabric", timing: dict | None = None) -> float:
    """Wait until a command runs over SSH (pinned host key); return the seconds until the guest
    was ready: its SSH banner on a plain TCP connect (polled every READY_POLL_S), or, for a
    guest behind a gateway, the first login. ``timing`` gets the details (monotonic times of
    readiness and login, the probe, its resolution)."""
    from ..testbed.hosts import ForwardingRefused, HostKeyRejected

    if client == "fabric":
        import logging

        logging.getLogger("paramiko").setLevel(logging.CRITICAL)  # refused/reset while booting is expected
    start = time.monotonic()
    if host.gateway is None:
        ready_at, resolution = wait_for_banner(host.hostname, host.port, timeout, alive, host.name)
        probe = "ssh-banner"
    else:
        ready_at, resolution, probe = None, None, "ssh-login"
    last = "no attempt"
    previous_login = None
    while True:
        if alive is not None and not alive():
            raise GuestError(f"guest {host.name} died while booting")
        attempt = time.monotonic()
        try:
            guest_run(host, "true", timeout=10, client=client)
            break
        except (HostKeyError, HostKeyRejected) as error:
            raise GuestError(f"guest {host.name} offered an unexpected host key: {error}") from None
        except ForwardingRefused as error:
            raise GuestError(f"guest {host.name}: {error}") from None
        except Exception as error:  # not up yet: refused, reset, banner timeout, auth not ready
            last = f"{type(error).__name__}: {error}"
        if time.monotonic() - start >= timeout:
            raise GuestError(f"guest {host.name} did not answer over SSH within {timeout:.0f} s (last: {last})")
        previous_login = attempt
        time.sleep(READY_POLL_S)
    login_at = time.monotonic()
    if ready_at is None:  # through a gateway: the first login is the first sign of life
        ready_at = login_at
        resolution = 0.0 if previous_login is None else attempt - previous_login
    if timing is not None:
        timing.update(ready_at=ready_at, login_at=login_at, probe=probe, resolution_s=round(resolution, 4))
    return ready_at - start


class GuestState:
    """Files of one guest instance and its supervisor."""

    def __init__(self, testbed: str, name: str):
        self.dir = default_state_dir() / "guests" / testbed / name
        self.name = name

    @property
    def pid_file(self) -> Path:
        return self.dir / "supervisor.pid"

    @property
    def endpoint_file(self) -> Path:
        return self.dir / "endpoint.json"

    def running(self) -> bool:
        return supervisor.running(self.pid_file) and self.endpoint_file.exists()

    def endpoint(self) -> Host:
        data = json.loads(self.endpoint_file.read_text())
        return Host(**data)

    def save_endpoint(self, host: Host) -> None:
        self.endpoint_file.write_text(
            json.dumps({k: getattr(host, k) for k in ("name", "hostname", "port", "user", "identity", "known_hosts")})
        )

    def stop(self) -> None:
        supervisor.stop(self.pid_file)
        self.endpoint_file.unlink(missing_ok=True)


def stop_guests(testbed: str, keep_prefix: str | tuple | list | None = None) -> None:
    """Tear down the guests of a testbed (all, or all whose name does not start with ``keep_prefix``:
    one prefix, or several)."""
    if isinstance(keep_prefix, (list, tuple)):
        keep_prefix = tuple(keep_prefix) or None
    root = default_state_dir() / "guests" / testbed
    for pid_file in sorted(root.glob("*/supervisor.pid")):
        name = pid_file.parent.name
        if keep_prefix is None or not name.startswith(keep_prefix):
            GuestState(testbed, name).stop()
