"""Hosts: SSH endpoints and the connection to them (the bottom of the testbed layer).

Every benchmark reaches its host through :func:`connect` (Fabric over SSH), on the local
testbed exactly as on a remote one, and guests are hosts too (reached through their host,
ProxyJump). Host keys are pinned in the testbed's own known_hosts file: an unknown host key
is refused, never trusted silently. Platforms, guests and the host agent use this module;
the testbed kinds that bring hosts up (:mod:`virtrepro.testbed.kinds`) sit above them.
"""

from __future__ import annotations

import math
import os
import shlex
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import VirtreproError


def default_state_dir() -> Path:
    """Where keys and sshd state live: $VIRTREPRO_STATE, else .state/ in the working directory."""
    return Path(os.environ.get("VIRTREPRO_STATE") or Path.cwd() / ".state")


class TestbedError(VirtreproError, RuntimeError):
    """A testbed cannot be brought up or reached."""


@dataclass(frozen=True)
class Host:
    """An SSH endpoint: where a benchmark command runs."""

    name: str
    hostname: str
    port: int
    user: str
    identity: str | None
    known_hosts: str
    gateway: "Host | None" = None
    # the testbed this host belongs to (for a testbed's own hosts; guests' private addresses depend on it)
    testbed: str | None = None
    # a host of a remote (kind: ssh) testbed: where virtrepro keeps its state there (host agent,
    # guest image, guests); None for the local testbed, whose host is this machine
    remote_state_dir: str | None = None

    def describe(self) -> dict:
        data = {"name": self.name, "hostname": self.hostname, "port": self.port, "user": self.user}
        if self.gateway is not None:
            data["via"] = self.gateway.describe()
        return data


class HostKeyRejected(TestbedError):
    """A host offered a host key that is not the one pinned for it (or none is pinned)."""


class ForwardingRefused(TestbedError):
    """A gateway's sshd refuses to forward connections (direct-tcpip) to a host behind it."""


CONNECT_TIMEOUT_S = 20


def connect(host: Host, timeout: float = CONNECT_TIMEOUT_S):
    """A Fabric connection to ``host`` that refuses unknown host keys.

    A host with a ``gateway`` (a guest on a remote testbed host) is reached through a
    connection to the gateway (ProxyJump: a direct-tcpip channel opened by the gateway's
    sshd), which is closed together with the connection. The connection opens on first use;
    whatever keeps it from opening is a :class:`TestbedError` of one line (see
    :func:`connection_error`). Commands go to one runner process per connection
    (:mod:`virtrepro.testbed.sshrun`)."""
    import fabric
    import paramiko

    known_hosts = Path(host.known_hosts).expanduser()
    if not known_hosts.exists():
        raise TestbedError(f"testbed {host.name}: known_hosts file {known_hosts} does not exist")
    if host.identity and not Path(host.identity).expanduser().is_file():
        raise TestbedError(f"{_where(host)}: the identity (private key) file {host.identity} does not exist; "
                           "make it (ssh-keygen) or set the host's identity to an existing key")
    gateway = connect(host.gateway, timeout) if host.gateway is not None else None
    connect_kwargs = {"look_for_keys": host.identity is None, "allow_agent": host.identity is None,
                      "banner_timeout": timeout, "auth_timeout": timeout}
    if host.identity:
        connect_kwargs["key_filename"] = [str(Path(host.identity).expanduser())]
    # lazy: the testbed's own settings, not the user's ~/.ssh/config or Fabric config files
    connection = _connection_class()(
        config=fabric.Config(lazy=True),
        host=host.hostname,
        port=host.port,
        user=host.user,
        connect_kwargs=connect_kwargs,
        gateway=gateway,
        connect_timeout=timeout,
    )
    connection.virtrepro_host = host
    connection.timeout_s = timeout
    connection.client = paramiko.SSHClient()
    connection.client.load_host_keys(str(known_hosts))
    connection.client.set_missing_host_key_policy(paramiko.RejectPolicy())
    return connection


def _where(host: Host) -> str:
    via = f" via {host.gateway.hostname}:{host.gateway.port}" if host.gateway is not None else ""
    return f"{host.name} ({host.user}@{host.hostname}:{host.port}{via})"


def _pin_advice(host: Host) -> str:
    spec = host.hostname if host.port == 22 else f"[{host.hostname}]:{host.port}"
    return (f"if the host was re-installed or its key regenerated, check the new key's fingerprint and pin it: "
            f"ssh-keygen -f {host.known_hosts} -R '{spec}' && "
            f"ssh-keyscan -t ed25519 -p {host.port} {host.hostname} >> {host.known_hosts}")


def connection_error(host: Host, error: BaseException, timeout: float = CONNECT_TIMEOUT_S) -> TestbedError:
    """One line for why a connection to ``host`` did not open: which host, what failed, what to do."""
    import paramiko

    where = _where(host)
    if isinstance(error, TestbedError):
        return error
    if isinstance(error, paramiko.BadHostKeyException):
        return HostKeyRejected(
            f"{where}: host key mismatch: it offered a {error.key.get_name()} key "
            f"{error.key.fingerprint}, not the one pinned in {host.known_hosts} "
            f"({error.expected_key.fingerprint}); {_pin_advice(host)}")
    if isinstance(error, paramiko.ChannelException):
        if error.code == 1:
            return ForwardingRefused(f"{where}: the gateway's sshd refuses to forward connections ({error.text}); "
                                     "its sshd_config needs 'AllowTcpForwarding yes'")
        return TestbedError(f"{where}: the gateway could not open a connection to {host.hostname}:{host.port} "
                            f"({error.text}); is the host up and its sshd listening?")
    if isinstance(error, paramiko.AuthenticationException):
        return TestbedError(f"{where}: authentication as {host.user} failed with "
                            f"{host.identity or 'the SSH agent and default keys'} ({error}); add its public key "
                            f"to ~{host.user}/.ssh/authorized_keys on the host, or set the host's identity/user")
    if isinstance(error, paramiko.SSHException):
        text = str(error)
        if "not found in known_hosts" in text:
            return HostKeyRejected(f"{where}: its host key is not pinned in {host.known_hosts} (unknown hosts are "
                                   f"refused); {_pin_advice(host)}")
        if "protocol banner" in text or "Negotiation timed out" in text or "No existing session" in text:
            return TestbedError(f"{where}: no SSH server answers on this port (the SSH handshake did not "
                                f"end within {timeout:g} s); check the host's port and that sshd runs there")
        return TestbedError(f"{where}: SSH failed: {text}")
    if isinstance(error, EOFError):
        return TestbedError(f"{where}: the server closed the connection during the SSH handshake (not an SSH "
                            "server, or one that refuses this client: see its log); check the port and the sshd")
    if isinstance(error, ConnectionRefusedError) or isinstance(error, paramiko.ssh_exception.NoValidConnectionsError):
        return TestbedError(f"{where}: connection refused: nothing listens on port {host.port}; "
                            "start the host's sshd or fix the testbed's port")
    if isinstance(error, socket.gaierror):
        return TestbedError(f"{where}: cannot resolve host name {host.hostname!r} ({error.strerror}); "
                            "fix the testbed's hostname")
    if isinstance(error, (socket.timeout, TimeoutError)):
        return TestbedError(f"{where}: no answer within {timeout:g} s (host down, or a firewall drops "
                            "the connection); check that the host is up and reachable")
    if isinstance(error, OSError):
        return TestbedError(f"{where}: cannot connect: {error.strerror or error}; check that the host is up "
                            "and reachable")
    return TestbedError(f"{where}: connection failed: {type(error).__name__}: {error}")


class _QuickSocket:
    """A TCP socket for SSH's small request/answer packets, with neither side waiting for the
    other's delayed ACK (about 40 ms each time): Nagle's algorithm is off (TCP_NODELAY), and
    every receive re-arms TCP_QUICKACK, so that what the server sends without an answer to
    wait for (sshd's host key announcement after login, two output packets in a row) is
    acknowledged at once and does not hold back its next packet (sshd leaves Nagle on for
    sessions without a terminal)."""

    def __init__(self, sock: socket.socket):
        self._sock = sock
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._quickack = getattr(socket, "TCP_QUICKACK", None)  # Linux only

    def recv(self, size: int) -> bytes:
        data = self._sock.recv(size)
        if self._quickack is not None and data:
            self._sock.setsockopt(socket.IPPROTO_TCP, self._quickack, 1)
        return data

    def __getattr__(self, name):
        return getattr(self._sock, name)


def _quick_socket(host: Host, timeout: float) -> _QuickSocket:
    """A TCP connection to ``host`` for SSH (see :class:`_QuickSocket`), once the server's SSH
    banner has arrived (peeked at, left for paramiko): a port that is not an SSH server's is
    told apart here, in one line."""
    sock = socket.create_connection((host.hostname, host.port), timeout=timeout)
    try:
        try:
            first = sock.recv(4, socket.MSG_PEEK)
        except (socket.timeout, TimeoutError):
            raise TestbedError(f"{_where(host)}: no SSH server answers on this port (no SSH banner within "
                               f"{timeout:g} s); check the host's port and that sshd runs there") from None
        if not first:
            raise TestbedError(f"{_where(host)}: the server closed the connection before saying anything (an sshd "
                               "over its MaxStartups, or not an SSH server); check the port and the host's sshd log")
        if not first.startswith(b"SSH-"[:len(first)]):
            raise TestbedError(f"{_where(host)}: this port is not an SSH server's (it began with {first!r}); "
                               "check the testbed's port")
    except BaseException:
        sock.close()
        raise
    return _QuickSocket(sock)


_CONNECTION_CLASS = None

# what the runner path of Connection.run understands; anything else goes to Fabric's own run
_RUNNER_KWARGS = {"hide", "warn", "in_stream", "out_stream", "err_stream", "timeout", "pty", "merge_stderr"}
KILL_AFTER_S = 10


def _connection_class():
    """fabric.Connection with the testbed's connection handling (built on first use: Fabric is
    imported lazily). ``open`` sets TCP_NODELAY and turns failures into TestbedError; ``run``
    sends commands to the connection's runner; ``close`` also closes the gateway connection
    (Fabric leaves it open). The methods are the module's ``_connection_*`` functions."""
    global _CONNECTION_CLASS
    if _CONNECTION_CLASS is None:
        import fabric

        _CONNECTION_CLASS = type("Connection", (fabric.Connection,), {
            # declared here: invoke's DataProxy turns sets of undeclared attributes into config
            "virtrepro_host": None,
            "timeout_s": CONNECT_TIMEOUT_S,
            "facts": None,  # host facts, cached per connection (virtrepro.measurement.instance.host_facts)
            "virtrepro_packages": None,  # (packages) -> installed versions (virtrepro.measurement.instance.package_versions)
            "virtrepro_boot": None,  # a VM's BootFacts (virtrepro.measurement.instance.boot_facts)
            "_runner": None,  # None: not started yet; False: unavailable on this host
            "_runner_lock": None,
            "open": _connection_open,
            "runner": _connection_runner,
            "run": _connection_run,
            "_fabric_run": _connection_fabric_run,
            "close": _connection_close,
            "__module__": __name__,
        })
    return _CONNECTION_CLASS


def _connection_open(self):
    import fabric

    if self.is_connected:
        return None
    host = self.virtrepro_host
    try:
        if self.gateway is None:
            self.connect_kwargs["sock"] = _quick_socket(host, self.timeout_s)
        return fabric.Connection.open(self)
    except Exception as error:
        sock = self.connect_kwargs.get("sock")
        if sock is not None:
            sock.close()
        raise connection_error(host, error, self.timeout_s) from None
    finally:
        self.connect_kwargs.pop("sock", None)


def _connection_runner(self):
    """This connection's runner, started on first use; None where it cannot run."""
    import threading

    import paramiko

    from .sshrun import Runner, RunnerUnavailable

    if self._runner is None:
        self.open()
        try:
            self._runner = Runner(self.transport)
        except (RunnerUnavailable, OSError, EOFError, paramiko.SSHException):
            self._runner = False
        self._runner_lock = threading.Lock()
    return self._runner or None


def _connection_run(self, command, **kwargs):
    """Fabric's ``run``, through the connection's runner where it can be: the same
    arguments, Result, UnexpectedExit and CommandTimedOut (the runner kills the
    command's process group at ``timeout``). ``merge_stderr=True`` folds stderr into
    stdout (in order, as ``2>&1``)."""
    from fabric.runners import Result
    from invoke.exceptions import CommandTimedOut, UnexpectedExit
    from invoke.runners import normalize_hide

    from .sshrun import RunnerLost, TextSink

    usable = set(kwargs) <= _RUNNER_KWARGS and kwargs.get("in_stream") is False and not kwargs.get("pty")
    runner = self.runner() if usable else None
    if runner is None or not self._runner_lock.acquire(blocking=False):
        return self._fabric_run(command, **kwargs)
    try:
        out_stream, err_stream = kwargs.get("out_stream"), kwargs.get("err_stream")
        hide = normalize_hide(kwargs.get("hide"), out_stream, err_stream)
        out = TextSink(None if "stdout" in hide else out_stream or sys.stdout)
        err = TextSink(None if "stderr" in hide else err_stream or sys.stderr)
        timeout = kwargs.get("timeout")
        status, timed_out = runner.execute(command, out, err, timeout, KILL_AFTER_S,
                                           merge=bool(kwargs.get("merge_stderr")))
    except RunnerLost as error:
        self._runner = False  # the channel is gone: later commands take Fabric's path
        raise TestbedError(f"{_where(self.virtrepro_host)}: {error} while running {command[:200]!r}") from None
    except BaseException:
        self._runner = False
        raise
    finally:
        self._runner_lock.release()
    result = Result(stdout=out.text(), stderr=err.text(), encoding="utf-8", command=command, shell="/bin/sh",
                    exited=status, pty=False, hide=hide, connection=self)
    if timed_out:
        raise CommandTimedOut(result, timeout)
    if status != 0 and not kwargs.get("warn"):
        raise UnexpectedExit(result)
    return result


def _connection_fabric_run(self, command, merge_stderr=False, timeout=None, **kwargs):
    """One channel a command (a host without python3): the same semantics, from the shell."""
    import fabric
    from invoke.exceptions import CommandTimedOut, UnexpectedExit

    if merge_stderr:
        command = f"sh -c {shlex.quote(command)} 2>&1"
    if timeout:
        command = f"timeout -k {KILL_AFTER_S} {math.ceil(timeout)} {command if merge_stderr else 'sh -c ' + shlex.quote(command)}"
        warn = kwargs.pop("warn", False)
        result = fabric.Connection.run(self, command, warn=True, timeout=timeout + KILL_AFTER_S + 30, **kwargs)
        if result.exited in (124, 137):
            raise CommandTimedOut(result, timeout)
        if result.exited != 0 and not warn:
            raise UnexpectedExit(result)
        return result
    return fabric.Connection.run(self, command, **kwargs)


def _connection_close(self):
    import fabric

    if self._runner:
        self._runner.close()
    self._runner = None
    fabric.Connection.close(self)
    if isinstance(self.gateway, fabric.Connection):
        self.gateway.close()
