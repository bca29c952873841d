"""A real SLURM cluster on this machine, for the tests and scripts of the `slurm` testbed kind.

Debian's own daemons (slurmctld, slurmd, munged; SLURM 22.05), nothing home-made: a controller in
this machine's network namespace and compute nodes, each a host of its own made of namespaces
(network, UTS and mount: ``tests/remotehost.py``) with its own sshd and its own slurmd, all on one
bridge made for the cluster (``10.250.80.0/24``: the controller is ``.1``, node i is ``.(10+i)``).
Its own munged (its own key and socket), its own slurm.conf and state directories, its own ports:
the machine's SLURM configuration, if any, is not touched (``SLURM_CONF`` points at this one). The
settings known to work on these machines: ``ProctrackType=proctrack/linuxproc``,
``TaskPlugin=task/none``, ``AccountingStorageType=accounting_storage/none``, ``MinJobAge=600``.

Every daemon runs under a supervisor owned by the process that made the cluster: if it dies, the
cluster goes too. :meth:`SlurmCluster.down` stops it and removes the bridge and the namespaces.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

from remotehost import RemoteHost

from virtrepro.testbed import supervisor

SUBNET = "10.250.80"
BRIDGE = "vrslurm0"
CONTROLLER = f"{SUBNET}.1"
PORTS = {"ctld": 6917, "slurmd": 6918}
CLUSTER = "vrtest"
PARTITION = "vr"

SLURM_CONF = """ClusterName={cluster}
SlurmctldHost={controller_name}({controller})
MailProg=/bin/true
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={munge_socket}
StateSaveLocation={dir}/ctld-state
SlurmdSpoolDir={dir}/spool/%n
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd-%n.pid
SlurmctldLogFile={dir}/slurmctld.log
SlurmdLogFile={dir}/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MinJobAge=600
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
NodeName=DEFAULT CPUs={cpus} State=UNKNOWN
{nodes}
PartitionName={partition} Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
"""


class SlurmCluster:
    """A controller and ``count`` compute nodes (``vrnode1``...), each node a namespace host with sshd."""

    def __init__(self, directory: Path, count: int = 2, state_root: str = "/var/tmp/vrslurm"):
        self.dir = Path(directory)
        self.count = count
        self.state_root = state_root
        self.nodes = [RemoteHost(self.dir / f"node{i}", Path(f"{state_root}-{self.node_name(i)}"), netns=f"vrslurm-{i}",
                                 subnet=SUBNET, hostname=self.node_name(i), bridge=BRIDGE, host_octet=10 + i)
                      for i in range(1, count + 1)]

    @staticmethod
    def node_name(i: int) -> str:
        return f"vrnode{i}"

    @property
    def conf(self) -> Path:
        return self.dir / "slurm.conf"

    @property
    def munge_socket(self) -> Path:
        return self.dir / "munge" / "munge.socket"

    @property
    def known_hosts(self) -> Path:
        return self.dir / "known_hosts"

    @property
    def identity(self) -> Path:
        return self.nodes[0].identity

    def testbed_spec(self) -> dict:
        """The `testbeds:` entry of a slurm testbed on this cluster."""
        return {"kind": "slurm", "known_hosts": str(self.known_hosts), "identity": str(self.identity),
                "state_dir": f"{self.state_root}-%n"}

    def env(self) -> dict:
        """The environment a SLURM command (sinfo, srun, sbatch, scancel) needs to reach this cluster."""
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def run(self, *argv: str, timeout: float = 60, check: bool = True, env: dict | None = None):
        return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=check,
                              env={**self.env(), **(env or {})})

    def up(self, timeout: float = 60) -> None:
        self.down()
        for directory in (self.dir, self.dir / "ctld-state", self.dir / "munge",
                          *(self.dir / "spool" / self.node_name(i) for i in range(1, self.count + 1))):
            directory.mkdir(parents=True, exist_ok=True)
        os.chmod(self.dir / "munge", 0o700)
        for argv in (["ip", "link", "add", BRIDGE, "type", "bridge"],
                     ["ip", "addr", "add", f"{CONTROLLER}/24", "dev", BRIDGE],
                     ["ip", "link", "set", BRIDGE, "up"]):
            subprocess.run(argv, check=True, capture_output=True)
        key = self.dir / "munge" / "munge.key"
        subprocess.run(["mungekey", "--create", f"--keyfile={key}", "--force"], check=True, capture_output=True)
        os.chmod(key, 0o600)
        self._daemon("munged", ["munged", "--foreground", "--force", f"--socket={self.munge_socket}",
                                f"--key-file={key}", f"--pid-file={self.dir / 'munge' / 'munged.pid'}",
                                f"--log-file={self.dir / 'munge' / 'munged.log'}",
                                f"--seed-file={self.dir / 'munge' / 'munged.seed'}"])
        self._wait(lambda: self.munge_socket.exists(), timeout, "munged did not create its socket")
        cpus = os.cpu_count() or 1
        nodes = "\n".join(f"NodeName={self.node_name(i)} NodeAddr={node.address} NodeHostname={self.node_name(i)}"
                          for i, node in enumerate(self.nodes, 1))
        self.conf.write_text(SLURM_CONF.format(cluster=CLUSTER, controller=CONTROLLER, controller_name=socket.gethostname(), ctld_port=PORTS["ctld"],
                                               slurmd_port=PORTS["slurmd"], munge_socket=self.munge_socket,
                                               dir=self.dir, cpus=cpus, nodes=nodes, partition=PARTITION))
        self._daemon("slurmctld", ["slurmctld", "-D", "-f", str(self.conf)])
        self._wait(lambda: self.run("scontrol", "ping", check=False).stdout.count("UP") > 0, timeout,
                   "slurmctld does not answer")
        for i, node in enumerate(self.nodes, 1):
            node.up()
            # the node's slurmd in the node's namespaces (those of its sshd)
            self._daemon(f"slurmd-{i}", ["nsenter", "-t", str(node.sshd_pid()), "-n", "-m", "-u",
                                         "slurmd", "-D", "-N", self.node_name(i), "-f", str(self.conf)])
        # one key for every node (a cluster's shared home directory), every node's host key pinned in one file
        shared = self.nodes[0].identity.with_suffix(".pub").read_text()
        for node in self.nodes:
            (node.dir / "authorized_keys").write_text(shared)
        self.known_hosts.write_text("".join(node.known_hosts.read_text() for node in self.nodes))
        self._wait(lambda: self.idle_nodes() == self.count, timeout,
                   lambda: f"the nodes did not come up: {self.run('sinfo', '-N', check=False).stdout}")

    def idle_nodes(self) -> int:
        out = self.run("sinfo", "-h", "-N", "-o", "%N %t", check=False).stdout.split()
        return sum(state == "idle" for state in out[1::2])

    def _daemon(self, name: str, argv: list[str]) -> None:
        supervisor.start(argv, os.getpid(), self.dir / f"{name}.supervisor.pid", self.dir / f"{name}.supervisor.log")

    @staticmethod
    def _wait(ready, timeout: float, what) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():
                return
            time.sleep(0.3)
        raise RuntimeError(what() if callable(what) else what)

    def down(self) -> None:
        """Stop every daemon, the nodes (sshd and whatever runs in their namespaces) and the bridge."""
        for pid_file in sorted(self.dir.glob("*.supervisor.pid")):
            supervisor.stop(pid_file)
        for node in self.nodes:
            node.down()
        subprocess.run(["ip", "link", "del", BRIDGE], capture_output=True)

    def leftovers(self) -> list[str]:
        """What of the cluster still exists on this machine (must be nothing after down())."""
        found = []
        if subprocess.run(["ip", "link", "show", BRIDGE], capture_output=True).returncode == 0:
            found.append(f"bridge {BRIDGE}")
        namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        found += [f"netns {n.netns}" for n in self.nodes if n.netns in namespaces]
        processes = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
        found += [line for line in processes.splitlines() if str(self.dir) in line and "ps -eo" not in line]
        return found


if __name__ == "__main__":  # by hand: a cluster until Enter is pressed
    import sys
    import tempfile

    with tempfile.TemporaryDirectory(prefix="vrslurm-") as tmp:
        cluster = SlurmCluster(Path(tmp), int(sys.argv[1]) if len(sys.argv) > 1 else 2)
        try:
            cluster.up()
            print(f"SLURM_CONF={cluster.conf}")
            print(cluster.run("sinfo").stdout)
            input("Enter stops it ")
        finally:
            cluster.down()
            shutil.rmtree(tmp, ignore_errors=True)
