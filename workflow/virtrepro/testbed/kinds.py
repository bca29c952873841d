"""Testbeds: the kinds of testbed (local, ssh) that bring hosts up and down.

The embedded local testbed is an sshd that the workflow starts on 127.0.0.1 with a free
port, a host key and a client key generated into a git-ignored state directory
(``.state/testbeds/<name>``). A small supervisor process owns that sshd and stops it when
its owner (the Snakemake process, a test, a script) goes away, so an interrupted run leaves
no sshd behind. A remote (``kind: ssh``) testbed is hosts described in the config; their
guests are started by each host's agent (:mod:`virtrepro.testbed.remote`). Hosts and the connection
to them are :mod:`virtrepro.testbed.hosts`; this module is above platforms, guests and the agent.
"""

from __future__ import annotations

import argparse
import getpass
import os
import shlex
import socket
import subprocess
import time
from pathlib import Path

from . import supervisor
from ..guests import stop_guests
from .hosts import Host, TestbedError, default_state_dir
from ..platforms.base import Platform, get_platform
from .agent import GuestsThroughAgent, HostAgent


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]

# what the local testbed runs: path or program -> Debian package (see virtrepro.testbed.packages)
HOST_PATHS = {"/usr/sbin/sshd": "openssh-server", "ssh-keygen": "openssh-client"}


def _sshd_path() -> str:
    for candidate in ("/usr/sbin/sshd", "/usr/local/sbin/sshd"):
        if os.access(candidate, os.X_OK):
            return candidate
    raise TestbedError("the local testbed needs OpenSSH's sshd (Debian package openssh-server); run the set-up script")


class LocalTestbed:
    """sshd on 127.0.0.1 of this machine, owned by a supervisor process."""

    def __init__(self, name: str = "local", state_dir: Path | str | None = None):
        self.name = name
        self.dir = Path(state_dir or default_state_dir()) / "testbeds" / name
        self.user = getpass.getuser()

    # files
    @property
    def client_key(self) -> Path:
        return self.dir / "id_ed25519"

    @property
    def host_key(self) -> Path:
        return self.dir / "ssh_host_ed25519_key"

    @property
    def known_hosts(self) -> Path:
        return self.dir / "known_hosts"

    @property
    def supervisor_pid_file(self) -> Path:
        return self.dir / "supervisor.pid"

    @property
    def port_file(self) -> Path:
        return self.dir / "port"

    def _keys(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.dir, 0o700)
        for key in (self.client_key, self.host_key):
            if not key.exists():
                subprocess.run(
                    ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"virtrepro-{self.name}", "-f", str(key)],
                    check=True,
                )
        (self.dir / "authorized_keys").write_text(Path(f"{self.client_key}.pub").read_text())

    def _write_config(self, port: int) -> Path:
        config = self.dir / "sshd_config"
        config.write_text(
            "\n".join(
                [
                    f"ListenAddress 127.0.0.1:{port}",
                    f"HostKey {self.host_key}",
                    f"AuthorizedKeysFile {self.dir / 'authorized_keys'}",
                    f"PidFile {self.dir / 'sshd.pid'}",
                    f"AllowUsers {self.user}",
                    "PermitRootLogin prohibit-password",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "UsePAM no",
                    "StrictModes no",
                    "X11Forwarding no",
                    "AllowTcpForwarding yes",
                    "PrintMotd no",
                    # bash skips ~/.bashrc for a shell that is not the first level: commands here do
                    # not depend on (or pay for) the user's dotfiles (see docs/architecture.md)
                    "SetEnv SHLVL=1",
                    "MaxStartups 50:30:100",
                    "MaxSessions 50",
                    "Subsystem sftp internal-sftp",
                    "",
                ]
            )
        )
        host_pub = Path(f"{self.host_key}.pub").read_text().split()
        self.known_hosts.write_text(f"[127.0.0.1]:{port} {host_pub[0]} {host_pub[1]}\n")
        return config

    def running(self) -> bool:
        try:
            pid = int(self.supervisor_pid_file.read_text())
            port = int(self.port_file.read_text())
        except (OSError, ValueError):
            return False
        if not supervisor.pid_alive(pid):
            return False
        with socket.socket() as sock:
            sock.settimeout(1)
            return sock.connect_ex(("127.0.0.1", port)) == 0

    def host(self) -> Host:
        return Host(
            name=self.name,
            hostname="127.0.0.1",
            port=int(self.port_file.read_text()),
            user=self.user,
            identity=str(self.client_key),
            known_hosts=str(self.known_hosts),
            testbed=self.name,
        )

    def platform(self, host: Host, name: str, spec: dict | None = None) -> Platform:
        """Platform ``name`` on ``host``, this process starting its guests."""
        return get_platform(name)(host, spec)

    def stop_guests(self, keep_prefix: str | None = None, host: str | None = None) -> None:
        """Tear down this testbed's guests (all, or all whose name does not start with ``keep_prefix``)."""
        if host is not None and host != self.name:
            raise TestbedError(f"testbed {self.name} has one host, {self.name!r}, not {host!r}")
        stop_guests(self.name, keep_prefix)

    def host_names(self) -> list[str]:
        """Its one host: this machine (named like the testbed)."""
        return [self.name]

    def scheduler(self, host: Host) -> dict | None:
        """No scheduler gave this testbed its host."""
        return None

    def mpi_launcher(self, hosts: list[Host]) -> str | None:
        """No scheduler starts MPI across hosts here (one host)."""
        return None

    def up(self, owner_pid: int | None = None, timeout: float = 20, host: str | None = None) -> Host:
        """Start the sshd (if it is not running) and return its Host. Idempotent."""
        if host is not None and host != self.name:
            raise TestbedError(f"testbed {self.name} has one host, {self.name!r}, not {host!r}")
        if self.running():
            return self.host()
        _sshd_path()
        self._keys()
        if os.geteuid() == 0:
            Path("/run/sshd").mkdir(parents=True, exist_ok=True)  # sshd's privilege separation directory
        port = _free_port()
        config = self._write_config(port)
        self.port_file.write_text(str(port))
        process = supervisor.start(
            # -r: no re-execution of sshd for each connection (a few milliseconds of every job's
            # connection; OpenSSH 9.8 and later always re-execute and only log that -r is ignored)
            [_sshd_path(), "-D", "-e", "-r", "-f", str(config)],
            owner=owner_pid or os.getpid(),
            pid_file=self.supervisor_pid_file,
            log_file=self.dir / "supervisor.log",
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                break
            if self.running():
                return self.host()
            time.sleep(0.05)
        self.down()
        tail = (self.dir / "supervisor.log").read_text(errors="replace")[-2000:]
        raise TestbedError(f"local testbed {self.name}: sshd did not start on 127.0.0.1:{port}\n{tail}")

    def down(self) -> None:
        """Stop the supervisor and its sshd."""
        supervisor.stop(self.supervisor_pid_file)

    def __enter__(self) -> Host:
        return self.up()

    def __exit__(self, *exc) -> None:
        self.down()


# where virtrepro keeps its state on a remote testbed host unless the testbed says otherwise
REMOTE_STATE_DIR = "/var/lib/virtrepro"


class RemoteTestbed:
    """Hosts described in the config, reached over SSH.

    Nothing to start for benchmarks on the hosts themselves. Guests (containers, VMs, the
    network namespaces of `native`) are started on each host by its host agent
    (:mod:`virtrepro.testbed.agent`), kept alive by a keeper that lives as long as the
    controller; :meth:`down` stops them. Every host is used: the workflow places each
    measurement on one of them (:mod:`virtrepro.testbed.placement`), and measures on different hosts
    at the same time."""

    def __init__(self, name: str, spec: dict):
        self.name = name
        self.spec = spec

    def hosts(self) -> list[Host]:
        hosts = [
            Host(
                name=f"{self.name}/{h['hostname']}" + (f":{h['port']}" if h.get("port", 22) != 22 else ""),
                hostname=h["hostname"],
                port=h.get("port", 22),
                user=h.get("user", "root"),
                identity=h.get("identity"),
                known_hosts=self.spec["known_hosts"],
                testbed=self.name,
                remote_state_dir=h.get("state_dir") or self.spec.get("state_dir") or REMOTE_STATE_DIR,
            )
            for h in self.spec["hosts"]
        ]
        names = [host.name for host in hosts]
        if len(set(names)) != len(names):
            raise TestbedError(f"testbed {self.name}: a host is listed twice ({', '.join(names)})")
        return hosts

    def host_names(self) -> list[str]:
        return [host.name for host in self.hosts()]

    def scheduler(self, host: Host) -> dict | None:
        """No scheduler gave these hosts (a slurm testbed's allocation did: SlurmTestbed)."""
        return None

    def mpi_launcher(self, hosts: list[Host]) -> str | None:
        """None: no scheduler starts MPI across these hosts. Runs across hosts are made through a
        scheduler that knows the nodes (SlurmTestbed), not from a hostfile written here."""
        return None

    def up(self, owner_pid: int | None = None, host: str | None = None) -> Host:
        """The host named ``host`` (default: the first)."""
        return _named(self.hosts(), host, self.name)

    def platform(self, host: Host, name: str, spec: dict | None = None) -> Platform:
        """Platform ``name`` on ``host``: its guests are started there by the host's agent."""
        platform = get_platform(name)(host, spec)
        if hasattr(platform, "agent"):
            platform.agent = GuestsThroughAgent()
        return platform

    def stop_guests(self, keep_prefix: str | None = None, host: str | None = None) -> None:
        """Tear down this testbed's guests on its hosts (or on the host named ``host`` only: the
        others may be measuring); only where a keeper runs: without one, none run."""
        for each in self.hosts() if host is None else [_named(self.hosts(), host, self.name)]:
            HostAgent(each).stop_guests(keep_prefix)

    def down(self) -> None:
        """Stop the guests on the testbed's hosts and their keepers."""
        for host in self.hosts():
            HostAgent(host).down()

    def running(self) -> bool:
        return True


def _named(hosts: list[Host], name: str | None, testbed: str) -> Host:
    if name is None:
        return hosts[0]
    for host in hosts:
        if host.name == name:
            return host
    raise TestbedError(f"testbed {testbed} has no host {name!r} (its hosts: {', '.join(h.name for h in hosts)})")


class SlurmTestbed(RemoteTestbed):
    """The nodes of the SLURM allocation the workflow runs in, as the testbed's hosts.

    The researcher asks the scheduler for nodes (``salloc -N 2 --exclusive ...``, or ``sbatch`` of a
    script that runs the workflow: ``scripts/slurm_run.sh``) and runs the workflow inside that
    allocation. Its nodes (``SLURM_JOB_NODELIST``, expanded by ``scontrol show hostnames``, each
    reached at its ``NodeAddr``) are the hosts, over SSH as on any remote testbed: clusters that
    confine SSH to the nodes of one's own job (``pam_slurm_adopt``) allow exactly that. Chosen over a
    SLURM job per measurement (the executor plugin) because the comparison must stay on one set of
    nodes for its whole run (a platform's difference from native must not be a difference between
    nodes the scheduler happened to give), guests boot once per node rather than once per job, and
    no status polling sits between measurements. Every sidecar records the job, its partition and
    the node (:meth:`scheduler`)."""

    def __init__(self, name: str, spec: dict, environ: dict | None = None):
        super().__init__(name, spec)
        self.environ = dict(os.environ if environ is None else environ)
        self._nodes: list[tuple[str, str]] | None = None

    def job(self) -> str:
        job = self.environ.get("SLURM_JOB_ID") or self.environ.get("SLURM_JOBID")
        if not job:
            raise TestbedError(f"testbed {self.name} (kind: slurm) measures the nodes of the SLURM allocation it runs "
                               "in, and there is none (no SLURM_JOB_ID): run the workflow inside one, e.g. "
                               "salloc -N 2 --exclusive -t 8:00:00 .venv/bin/snakemake --cores all --config "
                               f"testbed={self.name}, or sbatch scripts/slurm_run.sh {self.name}")
        return job

    def nodes(self) -> list[tuple[str, str]]:
        """(node name, address to reach it at) of each node of the allocation, in the scheduler's order."""
        if self._nodes is None:
            self.job()
            listed = self.environ.get("SLURM_JOB_NODELIST") or self.environ.get("SLURM_NODELIST") or ""
            names = _scontrol(["show", "hostnames", listed], self.environ).split()
            if not names:
                raise TestbedError(f"testbed {self.name}: the allocation {self.job()} lists no nodes ({listed!r})")
            self._nodes = []
            for node in names:
                shown = _scontrol(["show", "node", node, "--oneliner"], self.environ)
                fields = dict(item.split("=", 1) for item in shown.split() if "=" in item)
                self._nodes.append((node, fields.get("NodeAddr") or node))
        return self._nodes

    def hosts(self) -> list[Host]:
        return [
            Host(name=f"{self.name}/{node}", hostname=address, port=self.spec.get("port", 22),
                 user=self.spec.get("user", "root"), identity=self.spec.get("identity"),
                 known_hosts=self.spec["known_hosts"], testbed=self.name,
                 remote_state_dir=(self.spec.get("state_dir") or REMOTE_STATE_DIR).replace("%n", node))
            for node, address in self.nodes()
        ]

    def scheduler(self, host: Host) -> dict:
        """What a sidecar records of the scheduler: the job, its partition, its nodes, this host's node."""
        return {"kind": "slurm", "job_id": self.job(), "partition": self.environ.get("SLURM_JOB_PARTITION"),
                "nodes": [node for node, _ in self.nodes()], "node": host.name.split("/", 1)[1],
                "cluster": self.environ.get("SLURM_CLUSTER_NAME")}

    def mpi_launcher(self, hosts: list[Host]) -> str:
        """The start of an mpirun command, run on ``hosts[0]``, whose ranks go to ``hosts`` (nodes of this
        allocation) through SLURM: Open MPI reads the allocation from the job's environment (given here,
        as a login to the node has none: the job, its nodes, ``$per_node`` slots on each) and starts its
        daemons on the other nodes with ``srun`` as steps of the job (``plm slurm``, which fails rather
        than falls back to SSH). ``$per_node`` is set by the benchmark's command."""
        nodes = ",".join(host.name.split("/", 1)[1] for host in hosts)
        job = self.job()
        settings = {"SLURM_JOB_ID": job, "SLURM_JOBID": job, "SLURM_JOB_NODELIST": nodes, "SLURM_NODELIST": nodes,
                    "SLURM_JOB_NUM_NODES": str(len(hosts)), "SLURM_NNODES": str(len(hosts))}
        for passed in ("SLURM_CONF", "SLURM_JOB_PARTITION", "SLURM_CLUSTER_NAME"):
            if self.environ.get(passed):
                settings[passed] = self.environ[passed]
        assignments = " ".join(f"{name}={shlex.quote(value)}" for name, value in settings.items())
        return (f'env {assignments} SLURM_TASKS_PER_NODE="${{per_node}}(x{len(hosts)})" '
                "mpirun --mca plm slurm --mca ras slurm")


def _scontrol(args: list[str], environ: dict) -> str:
    try:
        result = subprocess.run(["scontrol", *args], capture_output=True, text=True, timeout=30, env=environ)
    except FileNotFoundError:
        raise TestbedError("a slurm testbed needs SLURM's scontrol (Debian package slurm-client) where the "
                           "workflow runs") from None
    if result.returncode != 0:
        raise TestbedError(f"scontrol {' '.join(args)}: {result.stderr.strip() or result.stdout.strip()}")
    return result.stdout


def testbed_from_config(name: str, config: dict, state_dir: Path | str | None = None):
    spec = config["testbeds"][name]
    if spec["kind"] == "local":
        return LocalTestbed(name, state_dir)
    if spec["kind"] == "slurm":
        return SlurmTestbed(name, spec)
    return RemoteTestbed(name, spec)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtrepro.testbed.kinds", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for verb in ("up", "down", "status"):
        sub = commands.add_parser(verb, help=f"{verb} the local testbed")
        sub.add_argument("--name", default="local")
    args = parser.parse_args(argv)
    testbed = LocalTestbed(args.name)
    if args.command == "up":
        host = testbed.up(owner_pid=1)  # owned by init: stays up until `down`
        print(f"local testbed {args.name} up: ssh -i {host.identity} -p {host.port} "
              f"-o UserKnownHostsFile={host.known_hosts} {host.user}@{host.hostname}")
    elif args.command == "down":
        testbed.down()
        print(f"local testbed {args.name} down")
    else:
        print("running" if testbed.running() else "stopped")
    return 0


if __name__ == "__main__":
    from ..cli import run as run_cli  # not "run": a module may have a function of that name

    run_cli(main)
