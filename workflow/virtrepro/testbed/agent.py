"""Guests on a remote testbed's host: the controller's side of the host agent.

A remote (``kind: ssh``) testbed's host runs the same platform code as the local
testbed, in :mod:`virtrepro.testbed.hostagent`: this module uploads the package to the
host (``<state_dir>/agent/<content hash>/``, once per version), calls the agent
over SSH (:func:`virtrepro.testbed.hosts.connect`, the host's pinned key), and turns its
answers into guest endpoints reached *through* the host (``Host.gateway``: Fabric
opens a direct-tcpip channel from the host's sshd, like ``ssh -J``). The guest's
host key, generated on the host, is pinned in a known_hosts file here; unknown keys
are refused as everywhere else.

Lifetime: every guest on the host is owned by a *keeper* process there, which lives
as long as an SSH channel from this machine stays open. The channel is held by
``python -m virtrepro.testbed.remote keep``, run under a local supervisor owned by the
Snakemake process (``$VIRTREPRO_TESTBED_OWNER``) or by the process that asked for a
guest. When that owner ends, fails or is killed, the channel closes, the keeper
exits and the host's supervisors tear the guests down: nothing is left on the host.

Above the platforms and below the testbed kinds (:mod:`virtrepro.testbed.kinds` hands a remote
host's guest platforms :class:`GuestsThroughAgent`); the command line is :mod:`virtrepro.testbed.remote`.
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import io
import json
import os
import shlex
import sys
import tarfile
import time
from contextlib import contextmanager
from pathlib import Path

from . import supervisor
from ..guests import GuestError, wait_for_ssh
from .hostagent import RESULT_MARKER
from ..platforms.base import PlatformError
from .hosts import Host, connect, default_state_dir

AGENT_MISSING = 97  # exit status of an agent call when this version is not on the host yet
HEARTBEAT_S = 5  # the keep process writes to the keeper this often
KEEPER_TIMEOUT_S = 60  # the keeper gives up after this long without a heartbeat
PACKAGE = Path(__file__).resolve().parents[1]


class AgentError(PlatformError):
    """The host agent could not do what was asked (its message says why)."""


_ARCHIVE: tuple[str, bytes] | None = None


def package_archive() -> tuple[str, bytes]:
    """(content hash, tar) of this package's Python files: what the host agent runs."""
    global _ARCHIVE
    if _ARCHIVE is None:
        files = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
        digest = hashlib.sha256()
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            for path in files:
                relative = path.relative_to(PACKAGE.parent).as_posix()
                data = path.read_bytes()
                digest.update(relative.encode() + b"\0" + data + b"\0")
                info = tarfile.TarInfo(relative)
                info.size, info.mode, info.mtime = len(data), 0o644, 0
                tar.addfile(info, io.BytesIO(data))
        _ARCHIVE = (digest.hexdigest()[:16], buffer.getvalue())
    return _ARCHIVE


class _Result:
    """Collects an agent call's standard error: its answer line, and the rest (shown as progress)."""

    def __init__(self, echo):
        self.answer = None
        self.lines: list[str] = []
        self._partial = ""
        self._echo = echo

    def write(self, text: str) -> None:
        self._partial += text
        *complete, self._partial = self._partial.split("\n")
        for line in complete:
            if line.startswith(RESULT_MARKER):
                self.answer = json.loads(line[len(RESULT_MARKER):])
            else:
                self.lines.append(line)
                if self._echo is not None:
                    print(line, file=self._echo, flush=True)

    def flush(self) -> None:
        pass


class HostAgent:
    """The host agent of one remote testbed host, and this machine's files about it."""

    def __init__(self, host: Host):
        if host.remote_state_dir is None:
            raise PlatformError(f"{host.name} is not a remote testbed host")
        self.host = host
        self.testbed = host.testbed or host.name
        self.dir = default_state_dir() / "testbeds" / self.testbed / f"agent-{host.hostname}-{host.port}"

    # --- calling the agent -------------------------------------------------------------

    @property
    def remote_dir(self) -> str:
        return f"{self.host.remote_state_dir}/agent/{package_archive()[0]}"

    @property
    def sudo(self) -> str:
        return "" if self.host.user == "root" else "sudo -n "

    def command(self, verb: str, args: dict) -> str:
        state = shlex.quote(self.host.remote_state_dir)
        directory = shlex.quote(self.remote_dir)
        return (
            f"test -f {directory}/virtrepro/testbed/hostagent.py || exit {AGENT_MISSING}; cd / && "
            f"{self.sudo}env VIRTREPRO_STATE={state} PYTHONPATH={directory} "
            f"python3 -S -m virtrepro.testbed.hostagent {verb} {shlex.quote(json.dumps(args))}"
        )

    def upload(self, connection) -> None:
        """Put this version of the package on the host (atomically: a complete directory or none)."""
        digest, data = package_archive()
        check = connection.run("command -v python3 && python3 -c 'import sys; print(sys.version.split()[0])'",
                               hide=True, warn=True, in_stream=False)
        if check.exited != 0:
            raise AgentError(f"{self.host.name}: guests on a remote testbed need python3 (3.9 or newer) on the host "
                             "(Debian package python3)")
        upload = f"/tmp/virtrepro-agent-{digest}-{os.getpid()}.tar"
        connection.put(io.BytesIO(data), upload)
        directory = shlex.quote(self.remote_dir)
        script = (f"set -e; d={directory}; t=$d.tmp.$$; mkdir -p $t; tar -xf {upload} -C $t; chmod -R go+rX $t; "
                  "mv -T $t $d 2>/dev/null || rm -rf $t; test -f $d/virtrepro/testbed/hostagent.py")
        result = connection.run(f"{self.sudo}sh -c {shlex.quote(script)}; s=$?; rm -f {upload}; exit $s",
                                hide=True, warn=True, in_stream=False)
        if result.exited != 0:
            raise AgentError(f"{self.host.name}: could not install the host agent in {self.remote_dir} "
                             f"(exit {result.exited}): {result.stderr.strip()[-500:]}"
                             + (" (the testbed's user needs passwordless sudo)" if self.sudo else ""))

    def call(self, verb: str, args: dict, out_stream=None, echo=None, timeout: float | None = None) -> dict:
        """Run an agent command on the host; return its answer, or raise what it reported."""
        with connect(self.host) as connection:
            for attempt in range(2):
                result = _Result(echo)
                run = connection.run(self.command(verb, args), hide=True, warn=True, in_stream=False,
                                     out_stream=out_stream, err_stream=result, timeout=timeout)
                if run.exited == AGENT_MISSING and attempt == 0:
                    self.upload(connection)
                    continue
                break
        result.write("\n")
        if result.answer is None:
            if run.exited == 127:
                raise AgentError(f"{self.host.name}: python3 is missing on the host (Debian package python3)")
            detail = "\n".join(result.lines[-10:])
            raise AgentError(f"{self.host.name}: host agent {verb} failed (exit {run.exited}) without an answer: {detail}")
        if "error" in result.answer:
            kind, message = result.answer.get("kind"), f"{self.host.name}: {result.answer['error']}"
            raise (GuestError if kind == "GuestError" else AgentError)(message)
        return result.answer

    # --- the keepers ------------------------------------------------------------------
    # one per owner here (the Snakemake process, a test, a script): each owner's guests go
    # with that owner, also when another controller uses the same testbed from this machine

    def _keeper_files(self, owner: int) -> tuple[Path, Path]:
        return self.dir / f"keeper-{owner}.supervisor.pid", self.dir / f"keeper-{owner}.json"

    def keepers(self) -> list[int]:
        """Owners here whose keeper runs."""
        owners = [int(p.name.split("-")[1].split(".")[0]) for p in self.dir.glob("keeper-*.supervisor.pid")]
        return [owner for owner in owners if self.keeper_running(owner)]

    def keeper_running(self, owner: int) -> bool:
        pid_file, ready_file = self._keeper_files(owner)
        return supervisor.running(pid_file) and ready_file.exists()

    def ensure_keeper(self, owner: int, timeout: float = 90) -> int:
        """The pid (on the host) of a keeper whose channel lives as long as ``owner`` here; started if needed."""
        self.dir.mkdir(parents=True, exist_ok=True)
        pid_file, ready_file = self._keeper_files(owner)
        with open(self.dir / "keeper.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if self.keeper_running(owner):
                return json.loads(ready_file.read_text())["keeper_pid"]
            for stale in self.dir.glob("keeper-*"):  # files of keepers that are gone
                if stale.name.endswith(".supervisor.pid") and not supervisor.running(stale):
                    for path in self.dir.glob(stale.name.replace(".supervisor.pid", ".*")):
                        path.unlink(missing_ok=True)
            supervisor.stop(pid_file)
            ready_file.unlink(missing_ok=True)
            log = self.dir / f"keeper-{owner}.log"
            host = json.dumps(dataclasses.asdict(self.host))
            process = supervisor.start([sys.executable, "-m", "virtrepro.testbed.remote", "keep", host, str(ready_file)],
                                       owner, pid_file, log)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if ready_file.exists():
                    return json.loads(ready_file.read_text())["keeper_pid"]
                if process.poll() is not None:
                    break
                time.sleep(0.1)
            supervisor.stop(pid_file)
            tail = log.read_text(errors="replace")[-1500:] if log.exists() else ""
            raise AgentError(f"{self.host.name}: the keeper of the host's guests did not start:\n{tail}")

    def stop_guests(self, keep_prefix: str | None = None) -> None:
        """Stop this testbed's guests on the host (none run without a keeper: it takes them along)."""
        if self.keepers():
            self.call("stop", {"testbed": self.testbed, "keep_prefix": keep_prefix})

    def down(self) -> None:
        """Stop the guests and the keepers (whose exit would stop them anyway)."""
        owners = self.keepers()
        try:
            if owners:
                self.stop_guests()
        finally:
            for owner in owners:
                pid_file, ready_file = self._keeper_files(owner)
                supervisor.stop(pid_file)
                ready_file.unlink(missing_ok=True)

    # --- guests ------------------------------------------------------------------------

    def guest_endpoint(self, answer: dict) -> Host:
        """The guest as this machine reaches it: through the host, its host key pinned here."""
        directory = self.dir / "guests" / answer["name"]
        directory.mkdir(parents=True, exist_ok=True)
        hostname, port = answer["hostname"], int(answer["port"])
        known_hosts = directory / "known_hosts"
        spec = hostname if port == 22 else f"[{hostname}]:{port}"
        known_hosts.write_text(f"{spec} {answer['host_key']}\n")
        return Host(name=answer["name"], hostname=hostname, port=port, user=answer["user"],
                    identity=self.host.identity, known_hosts=str(known_hosts), gateway=self.host)

    def guest_args(self, platform, owner: int) -> dict:
        if not self.host.identity:
            raise PlatformError(f"testbed {self.testbed}: guests on a remote testbed need the host's `identity:` "
                                "(its public key, identity + '.pub', is authorized in the guests)")
        public_key = Path(f"{Path(self.host.identity).expanduser()}.pub")
        if not public_key.exists():
            raise PlatformError(f"testbed {self.testbed}: {public_key} is missing (the identity's public key "
                                "is authorized in the guests)")
        return {"testbed": self.testbed, "platform": platform.name, "spec": platform.spec, "owner": owner,
                "authorized_keys": [public_key.read_text().strip()]}


def _owner() -> int:
    """Who the guests live for: the Snakemake process if it is set and alive, else this process."""
    owner = int(os.environ.get("VIRTREPRO_TESTBED_OWNER") or os.getpid())
    return owner if supervisor.pid_alive(owner) else os.getpid()


@contextmanager
def remote_instance(platform, index: int):
    """Instance ``index`` of a guest platform on a remote testbed host, reached through the host."""
    agent = HostAgent(platform.host)
    owner = _owner()
    keeper = agent.ensure_keeper(owner)
    answer = agent.call("start", {**agent.guest_args(platform, keeper), "index": index})
    endpoint = agent.guest_endpoint(answer)
    platform.applied.update(answer["applied"])
    stop = {"testbed": agent.testbed, "names": [answer["name"]]}
    try:
        waited = wait_for_ssh(endpoint, 60)  # through the host, with the pinned key
    except Exception:
        agent.call("stop", stop)  # a guest this machine cannot reach is of no use to the next job either
        raise
    platform.applied["gateway_ssh_s"] = round(waited, 2)
    try:
        yield endpoint
    finally:
        if owner == os.getpid():  # nobody else keeps it: down with this block
            agent.call("stop", stop)


def remote_lifecycle(platform, out) -> None:
    """The lifecycle timings of a guest platform, done by the host agent on the host (log into ``out``)."""
    agent = HostAgent(platform.host)
    keeper = agent.ensure_keeper(_owner())
    answer = agent.call("lifecycle", agent.guest_args(platform, keeper), out_stream=out)
    platform.applied.update(answer.get("applied") or {})


def _remote_freezer(verb: str):
    """freeze, thaw or frozen of a guest on a remote host: done by the host agent there (the thaw
    verified there, by a login from the host); answers whether the guest is frozen now."""
    def call(platform, index: int) -> bool:
        agent = HostAgent(platform.host)
        keeper = agent.ensure_keeper(_owner())
        return bool(agent.call(verb, {**agent.guest_args(platform, keeper), "index": index}).get("frozen"))
    return call


class GuestsThroughAgent:
    """What a guest platform on a remote host hands its guests' start, lifecycle, freeze and thaw to
    (its ``agent``: set by :meth:`virtrepro.testbed.kinds.RemoteTestbed.platform`)."""

    instance = staticmethod(remote_instance)
    lifecycle = staticmethod(remote_lifecycle)
    freeze = staticmethod(_remote_freezer("freeze"))
    thaw = staticmethod(_remote_freezer("thaw"))
    frozen = staticmethod(_remote_freezer("frozen"))


# --- the keep process -------------------------------------------------------------------


def keep(host: Host, ready_file: Path) -> int:
    """Hold the keeper's channel open, writing a heartbeat, until killed or the channel closes."""
    agent = HostAgent(host)
    agent.call("status", {"testbed": agent.testbed})  # installs the agent if this version is missing
    with connect(host) as connection:
        connection.open()
        channel = connection.client.get_transport().open_session()
        channel.exec_command(agent.command("keep", {"testbed": agent.testbed, "heartbeat_s": KEEPER_TIMEOUT_S}))
        line = b""
        deadline = time.monotonic() + 60
        while not line.endswith(b"\n") and time.monotonic() < deadline and not channel.exit_status_ready():
            if channel.recv_ready():
                line += channel.recv(4096)
            else:
                time.sleep(0.05)
        try:
            keeper_pid = json.loads(line)["keeper_pid"]
        except (ValueError, KeyError):
            error = channel.recv_stderr(65536).decode(errors="replace") if channel.recv_stderr_ready() else ""
            print(f"keeper did not start on {host.name}: {line!r} {error}", file=sys.stderr)
            return 1
        temporary = ready_file.with_suffix(".tmp")
        temporary.write_text(json.dumps({"keeper_pid": keeper_pid, "agent_dir": agent.remote_dir}))
        temporary.rename(ready_file)
        print(f"keeper {keeper_pid} running on {host.name}", file=sys.stderr, flush=True)
        try:
            while not channel.exit_status_ready():
                channel.sendall(b".\n")
                time.sleep(HEARTBEAT_S)
        finally:
            ready_file.unlink(missing_ok=True)
    print(f"the keeper on {host.name} ended", file=sys.stderr)
    return 1
