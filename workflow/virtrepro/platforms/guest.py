"""Common part of the container and VM platforms: one long-lived guest per (spec, index)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ..testbed import supervisor
from ..guests import (READY_POLL_S, GuestError, GuestState, guest_run, last_lines, make_seed, spec_hash, wait_for_ssh,
                      write_known_hosts)
from ..layout import SCRATCH_DIR, host_memory_mb, overcommit_policy  # noqa: F401  (qemu imports them from here)
from ..testbed.hosts import Host
from .base import Platform, PlatformError


def host_cpus() -> list[int]:
    """The host CPUs this process may use (its affinity: a cpuset of the host's own applies too)."""
    return sorted(os.sched_getaffinity(0))


def block_device(path: Path) -> tuple[str, str] | None:
    """(major:minor, /dev path) of the whole disk holding ``path``, or None (tmpfs, overlay, btrfs...)."""
    dev = os.stat(path).st_dev
    sysfs = Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}")
    if not sysfs.exists():
        return None
    disk = sysfs.resolve()
    if (disk / "partition").exists():  # blkio throttling applies to the whole disk
        disk = disk.parent
    return (disk / "dev").read_text().strip(), f"/dev/{disk.name}"


def scratch_bind() -> tuple[str, str]:
    """The host's scratch directory, made if missing, and where a container mounts it (the same path).

    Containers write their benchmark files there, on the host's file system as native does, not in
    their root file system: podman mounts a ``--rm`` container's overlay with ``fsync=volatile``
    (fsync returns before anything reaches the disk), and an overlay is not the file system
    native's scratch directory is on (docs/methodology.md, "Fair conditions")."""
    Path(SCRATCH_DIR).mkdir(parents=True, exist_ok=True)
    return SCRATCH_DIR, SCRATCH_DIR


class CgroupFreezer:
    """A freezer cgroup of its own for an instance's processes: cgroup v1's freezer hierarchy
    (``freezer.state``: FROZEN/THAWED, with a cpuacct group beside it that counts the instance's CPU
    time) or, on a host with only cgroup v2, a cgroup with ``cgroup.freeze`` (and ``cpu.stat``).
    Every process the instance forks stays in it (daemons that start a session of their own too),
    which a signal to a process group would miss."""

    V1_ROOT = Path("/sys/fs/cgroup/freezer")
    V1_CPUACCT = Path("/sys/fs/cgroup/cpuacct")
    V2_ROOT = Path("/sys/fs/cgroup")

    def __init__(self, testbed: str, name: str):
        if (self.V1_ROOT / "freezer.state").exists() or (self.V1_ROOT / "cgroup.procs").exists():
            self.version, root = 1, self.V1_ROOT
        elif (self.V2_ROOT / "cgroup.controllers").exists():
            self.version, root = 2, self.V2_ROOT
        else:
            self.version, root = 0, self.V1_ROOT
        self.dir = root / "virtrepro" / testbed / name
        self.cpuacct = (self.V1_CPUACCT / "virtrepro" / testbed / name
                        if self.version == 1 and (self.V1_CPUACCT / "cpuacct.usage").exists() else None)

    @property
    def available(self) -> bool:
        return self.version != 0 and os.access(self.dir.parent.parent.parent, os.W_OK)

    @property
    def state_file(self) -> Path:
        return self.dir / ("freezer.state" if self.version == 1 else "cgroup.freeze")

    @property
    def dirs(self) -> list[Path]:
        return [self.dir, *([self.cpuacct] if self.cpuacct else [])]

    def create(self) -> None:
        for directory in self.dirs:
            directory.mkdir(parents=True, exist_ok=True)

    def enter_command(self, command: list[str]) -> list[str]:
        """``command`` run from inside the cgroups (the shell moves itself in, then execs it)."""
        moves = " && ".join(f'echo $$ > "{d}/cgroup.procs"' for d in self.dirs)
        return ["sh", "-c", f'{moves} && exec "$@"', "sh", *command]

    def remove_commands(self) -> list[list[str]]:
        return [["rmdir", str(d)] for d in self.dirs]

    def set_command(self, frozen: bool) -> list[str]:
        value = ("FROZEN" if frozen else "THAWED") if self.version == 1 else ("1" if frozen else "0")
        return ["sh", "-c", f'echo {value} > "$0"', str(self.state_file)]

    def frozen(self) -> bool:
        """True once every process is frozen (v1 FROZEN, not FREEZING; v2 ``frozen 1``)."""
        if self.version == 1:
            return self.state_file.read_text().strip() == "FROZEN"
        return "frozen 1" in (self.dir / "cgroup.events").read_text().splitlines()

    def cpu_ns(self) -> int | None:
        """CPU time of the cgroup's processes, exited ones included (v1 cpuacct.usage, v2 cpu.stat)."""
        if self.cpuacct is not None:
            return int((self.cpuacct / "cpuacct.usage").read_text())
        if self.version == 2:
            for line in (self.dir / "cpu.stat").read_text().splitlines():
                if line.startswith("usage_usec "):
                    return int(line.split()[1]) * 1000
        return None

    def pids(self) -> list[int]:
        try:
            return [int(pid) for pid in (self.dir / "cgroup.procs").read_text().split()]
        except OSError:
            return []


def process_cpu_ns(pids: list[int]) -> int:
    """utime + stime of ``pids`` and their threads, in nanoseconds (/proc/PID/stat)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return total * 1_000_000_000 // tick


# how long a freeze may take to reach every process, and a thaw to answer SSH again
FREEZE_TIMEOUT_S = 30.0
THAW_SSH_TIMEOUT_S = 60.0


# the instance index lifecycle timings use: the last one with a private address, apart from
# the instances benchmarks run in (0, 1, ...)
LIFECYCLE_INDEX = 19


class GuestPlatform(Platform):
    """A platform whose instances are guests started on the testbed host.

    Subclasses implement :meth:`launch`: prepare the guest's files in
    ``state.dir`` and return (command, stop/cleanup spec, ssh host, ssh port,
    alive-check). The guest then runs under a supervisor owned by
    ``$VIRTREPRO_TESTBED_OWNER`` (the Snakemake process) or, failing that, by
    this process, in which case it is torn down when the ``with`` block ends.

    On a remote testbed (``host.remote_state_dir`` set) the same code runs on the
    remote host, in its host agent (:mod:`virtrepro.testbed.hostagent`); this process then hands
    :meth:`instance` and :meth:`lifecycle` to :attr:`agent`, which whoever made the platform for
    a remote host sets (the testbed's ``platform``: :mod:`virtrepro.testbed.kinds`), and reaches the guest through the
    host (ProxyJump). Platforms never import the remote side: it is above them.
    """

    boot_timeout = 180.0
    failure_dir: Path | None = None  # where a failed boot's console log is kept (set by measure)
    # how this process reaches its guests: Fabric here, OpenSSH's client in the host agent
    ssh_client = "fabric"

    def __init__(self, host: Host, spec: dict | None = None):
        super().__init__(host, spec)
        self.applied: dict = {}
        self.remote = host is not None and host.remote_state_dir is not None
        self.extra_authorized_keys: list[str] = []  # set by the host agent: the controller's key
        self.owner_pid: int | None = None  # set by the host agent: its keeper, for lifecycle guests
        # on a remote host: what starts guests there (instance(platform, index), lifecycle(platform, out))
        self.agent = None
        self._frozen: dict[int, float] = {}  # instances this object froze and has not thawed: since when
        self._ahead: dict[int, tuple] = {}  # instances boot_ahead began: (supervisor process, start, endpoint)

    def guest_name(self, index: int) -> str:
        return f"{self.name}-{spec_hash(self.spec)}-{index}"

    def state(self, index: int) -> GuestState:
        return GuestState(self.testbed, self.guest_name(index))

    def host_state_dir(self, index: int) -> str:
        """The guest's state directory on the testbed host (for paths a command in an instance names)."""
        if self.remote:
            return f"{self.host.remote_state_dir}/guests/{self.testbed}/{self.guest_name(index)}"
        return str(self.state(index).dir)

    def private_address(self, index: int) -> str:
        """Where other instances reach instance ``index`` (the host-only bridge)."""
        from ..guests.network import address

        return address(self.name, index, self.testbed)

    def login_user(self) -> str:
        """Who the harness logs in to an instance as (its sshd's user)."""
        return "root"

    def launch(self, state: GuestState, name: str, seed: Path) -> tuple[list[str], dict, str, int]:
        """Prepare the guest's files; return (command, supervisor spec, SSH address, SSH port)."""
        raise NotImplementedError

    def console_log(self, state: GuestState) -> Path | None:
        return None

    tool = ""  # the program the guest runs under (its output is in the supervisor's log)

    def tool_logs(self, state: GuestState) -> list[tuple[str, Path, str | None]]:
        """Where the platform tool's own output goes, for a failed boot's message: (what, file, regular
        expression of its meaningful lines or None). Its standard output and error are the
        supervisor's log; subclasses add their tool's own log file."""
        logs = [(f"{self.tool or self.name}'s output", state.dir / "supervisor.log", None)]
        console = self.console_log(state)
        if console is not None:
            logs.append(("the guest's console", console, None))
        return logs

    def failure_report(self, state: GuestState) -> str:
        """The last meaningful lines of each of :meth:`tool_logs` that has any, one block each."""
        blocks = []
        for what, path, only in self.tool_logs(state):
            try:
                lines = last_lines(path.read_text(errors="replace"), only=only)
            except OSError:
                continue
            if lines:
                blocks.append(f"\n  last lines of {what} ({path.name}):" + "".join(f"\n    {line}" for line in lines))
        return "".join(blocks) or "\n  (the platform's tool printed nothing)"

    def _provision(self, state: GuestState) -> tuple[list[str], dict, Host]:
        """Everything before the guest runs: seed, disk or container, configuration."""
        state.stop()
        if state.dir.exists():
            shutil.rmtree(state.dir)
        state.dir.mkdir(parents=True)
        seed = state.dir / "seed"
        public_key = make_seed(seed, state.name, self.host.identity, self.seed_network(state), self.extra_authorized_keys)
        command, spec, ssh_host, ssh_port = self.launch(state, state.name, seed)
        endpoint = Host(
            name=state.name,
            hostname=ssh_host,
            port=ssh_port,
            user=self.login_user(),
            identity=self.host.identity,
            known_hosts=str(write_known_hosts(state.dir / "known_hosts", ssh_host, ssh_port, public_key)),
        )
        return command, spec, endpoint

    def _boot(self, state: GuestState, command: list[str], spec: dict, endpoint: Host, owner: int) -> Host:
        """Start the guest under a supervisor and wait until it answers over SSH."""
        return self._ready(state, *self._launch(state, command, spec, owner), endpoint)

    def _launch(self, state: GuestState, command: list[str], spec: dict, owner: int) -> tuple:
        """The guest's command started under a supervisor owned by ``owner``: (its process, when)."""
        started = time.monotonic()
        return supervisor.start(command, owner, state.pid_file, state.dir / "supervisor.log", spec), started

    def _ready(self, state: GuestState, process, started: float, endpoint: Host) -> Host:
        """Wait until the guest ``process`` began at ``started`` answers over SSH; its boot times; _booted."""
        timing: dict = {}
        try:
            waited = wait_for_ssh(endpoint, self.boot_timeout, alive=lambda: process.poll() is None and self.alive(state),
                                  client=self.ssh_client, timing=timing)
        except GuestError as error:
            # read before the guest is stopped: what the tool said, not how it was stopped
            report = self.failure_report(state)
            kept = self._keep_console(state)
            state.stop()
            raise GuestError(f"{error}{f'; console log kept in {kept}' if kept else ''}{report}") from None
        # ready: the guest's sshd answered (its banner, polled every READY_POLL_S); the resolution
        # is the gap between the last probe that found nothing and the one that found it
        self.applied["boot_to_ssh_s"] = round(timing["ready_at"] - started, 3)
        self.applied["boot_ready_probe"] = timing["probe"]
        self.applied["boot_resolution_s"] = timing["resolution_s"]
        self.applied["boot_to_login_s"] = round(timing["login_at"] - started, 3)
        self.applied["ssh_wait_s"] = round(waited, 3)
        state.save_endpoint(endpoint)
        self.applied.pop("booted_ahead", None)
        self._booted(state)
        return endpoint

    def _booted(self, state: GuestState) -> None:
        """What the platform does once a guest it started answers (QEMU pins its vCPUs). Here: nothing."""

    def boot_ahead(self, indices) -> None:
        """Begin booting the instances ``indices`` not running, side by side; :meth:`acquire` waits for each.
        Nothing on a remote host (its agent starts its guests)."""
        if self.remote:
            return
        owner = self._owner()
        for index in indices:
            state = self.state(index)
            if index in self._ahead or state.running():
                continue
            command, spec, endpoint = self._provision(state)
            self._ahead[index] = (*self._launch(state, command, spec, owner), endpoint)

    def abandon_ahead(self) -> None:
        """Stop the instances :meth:`boot_ahead` began that nobody acquired (a job that failed before)."""
        while self._ahead:
            index, _ = self._ahead.popitem()
            self.state(index).stop()

    @staticmethod
    def _owner() -> int:
        """Who owns the guests this process starts: $VIRTREPRO_TESTBED_OWNER while it lives, else this process."""
        owner = int(os.environ.get("VIRTREPRO_TESTBED_OWNER") or os.getpid())
        return owner if supervisor.pid_alive(owner) else os.getpid()

    # --- operational flexibility (thesis Tables 5.1-5.3) -----------------------------------

    reboot_supported = True

    def clone(self, state: GuestState, target: Path) -> None:
        """Copy the running guest's root file system or disk to ``target`` (a new guest's start)."""
        raise NotImplementedError

    def reboot(self, endpoint: Host) -> float:
        """Reboot the guest from inside; return seconds until the new boot's sshd answers (its
        banner, as for a boot; the resolution goes to ``applied["reboot_resolution_s"]``)."""
        probe = "cat /proc/sys/kernel/random/boot_id; cut -d' ' -f22 /proc/1/stat"
        before = guest_run(endpoint, probe, client=self.ssh_client)
        start = time.monotonic()
        try:
            guest_run(endpoint, "systemctl reboot", timeout=10, client=self.ssh_client)
        except Exception:  # the connection may drop while the guest goes down
            pass
        deadline = start + self.boot_timeout
        while time.monotonic() < deadline:
            timing: dict = {}
            try:
                wait_for_ssh(endpoint, max(1.0, deadline - time.monotonic()), client=self.ssh_client, timing=timing)
                if guest_run(endpoint, probe, timeout=10, client=self.ssh_client) != before:
                    self.applied["reboot_resolution_s"] = timing["resolution_s"]
                    return timing["ready_at"] - start
            except Exception:
                pass
            time.sleep(READY_POLL_S)  # the old boot's sshd still answered: it goes down soon
        raise GuestError(f"guest {endpoint.name} did not come back within {self.boot_timeout:.0f} s of a reboot")

    def lifecycle(self, out) -> None:
        """Provision, boot, reboot, clone and destroy a fresh guest, timing each step into ``out``.

        On a remote testbed the host agent does it on the host (the same steps, timed there)."""
        if self.remote:
            return self._agent().lifecycle(self, out)
        state = self.state(LIFECYCLE_INDEX)
        print(f"virtrepro lifecycle platform={self.name} guest={state.name}", file=out, flush=True)
        try:
            start = time.monotonic()
            command, spec, endpoint = self._provision(state)
            print(f"provision_s={time.monotonic() - start:.3f}", file=out, flush=True)
            self._boot(state, command, spec, endpoint, self.owner_pid or os.getpid())
            # boot and reboot end at the guest's first SSH banner, polled every READY_POLL_S
            print(f"ready_probe={self.applied['boot_ready_probe']} poll_interval_s={READY_POLL_S}", file=out)
            print(f"boot_s={self.applied['boot_to_ssh_s']:.3f}", file=out)
            print(f"boot_resolution_s={self.applied['boot_resolution_s']:.4f}", file=out, flush=True)
            if self.reboot_supported:
                print(f"reboot_s={self.reboot(endpoint):.3f}", file=out)
                print(f"reboot_resolution_s={self.applied['reboot_resolution_s']:.4f}", file=out, flush=True)
            else:
                print(f"reboot=not-applicable ({self.name} runs sshd as the container's only process)", file=out)
            target = state.dir / "clone"
            start = time.monotonic()
            self.clone(state, target)
            print(f"clone_s={time.monotonic() - start:.3f}", file=out, flush=True)
            start = time.monotonic()
            state.stop()
            print(f"destroy_s={time.monotonic() - start:.3f}", file=out)
            # destroy ends at the first look that finds the guest's supervisor gone
            print(f"destroy_resolution_s={supervisor.STOP_POLL_S:.4f}", file=out, flush=True)
            shutil.rmtree(target, ignore_errors=True) if target.is_dir() else target.unlink(missing_ok=True)
            print("lifecycle complete", file=out, flush=True)
        finally:
            state.stop()

    def _keep_console(self, state: GuestState) -> Path | None:
        console = self.console_log(state)
        if console is None or not console.exists() or self.failure_dir is None:
            return None
        self.failure_dir.mkdir(parents=True, exist_ok=True)
        kept = self.failure_dir / f"console-{state.name}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.log"
        shutil.copy(console, kept)
        return kept

    def cpu_assignment(self, index: int) -> dict:
        """The host CPUs instance ``index`` gets: ``vcpus`` of them, capped at the host's; with
        ``cpu_partition`` each instance its own block (instance i the i-th, wrapping around)."""
        cpus = host_cpus()
        vcpus = int(self.spec.get("vcpus") or len(cpus))
        count = min(vcpus, len(cpus))
        start = (index * count) % len(cpus) if self.spec.get("cpu_partition") else 0
        chosen = sorted(cpus[(start + k) % len(cpus)] for k in range(count))
        return {"vcpus_requested": vcpus, "host_cpus": len(cpus), "cpuset": ",".join(map(str, chosen)),
                "capped_at_host_cpus": vcpus > len(cpus), "cpu_partition": bool(self.spec.get("cpu_partition"))}

    def spec_applied(self, index: int) -> dict:
        """What instance ``index`` gets from the spec (cpuset, limits, oversubscription), for the sidecar."""
        return {}

    def container_limits(self, index: int, directory: Path) -> dict:
        """What a container platform applies from the spec (cgroup v1 values): cpuset, memory, disk bandwidth."""
        limits = self.cpu_assignment(index)
        if self.spec.get("memory_mb"):
            limits["memory_limit_mb"] = int(self.spec["memory_mb"])
        if self.spec.get("disk_bps"):
            device = block_device(directory)
            if device is None:
                raise PlatformError(f"{self.name}: disk_bps needs a block device under {directory}, found none to throttle")
            limits.update(disk_bps=int(self.spec["disk_bps"]), disk_device=device[0], disk_device_path=device[1])
        return limits

    def seed_network(self, state: GuestState) -> dict[str, str] | None:
        return None

    def alive(self, state: GuestState) -> bool:
        return True

    def acquire(self, index: int, owner: int) -> Host:
        """Instance ``index`` up (the running one of this testbed, or a new one owned by ``owner``)."""
        state = self.state(index)
        ahead = self._ahead.pop(index, None)
        if ahead is not None:  # booting since boot_ahead
            try:
                endpoint = self._ready(state, *ahead)
            except BaseException:  # whatever went wrong (a GuestError has stopped it already)
                state.stop()
                raise
            self.applied["booted_ahead"] = True  # its boot times: an upper bound (probed only when acquired)
        elif state.running():
            if self.freezable and self._left_frozen(state):  # by a process that died while it was frozen
                self._set_frozen(state, index, False)
                self._await_frozen(state, index, False)
            endpoint = state.endpoint()
            self.applied["reused_running_guest"] = True
        else:
            endpoint = self._boot(state, *self._provision(state), owner)
        if index == 0:  # what the spec sets for the instance the benchmark runs in (also when reused)
            self.applied.update(self.spec_applied(index))
        return endpoint

    @contextmanager
    def instance(self, index: int = 0) -> Iterator[Host]:
        if self.remote:
            with self._agent().instance(self, index) as endpoint:
                try:
                    yield endpoint
                finally:
                    self._thaw_on_exit(index)
            return
        owner = self._owner()
        own = owner == os.getpid()
        endpoint = self.acquire(index, owner)
        try:
            yield endpoint
        finally:
            try:
                self._thaw_on_exit(index)
            finally:
                if own:
                    self.state(index).stop()

    def _thaw_on_exit(self, index: int) -> None:
        """Thaw an instance this object left frozen: whoever uses or stops it next finds it running
        (a frozen container's processes cannot even be killed). A thaw that fails is reported and
        teardown goes on (the supervisor's stop commands thaw it again)."""
        if index not in self._frozen:
            return
        try:
            self.thaw(index)
        except Exception as error:
            self._frozen.pop(index, None)
            print(f"virtrepro: {self.name} instance {index}: thaw before teardown failed: {error}", file=sys.stderr)

    # --- freeze and thaw (issue 40: idle platforms cost nothing) -----------------------------

    freezable = True

    def _freeze_failed(self, index: int, what: str, detail: str) -> PlatformError:
        lines = last_lines(detail or "", count=1)
        return PlatformError(f"{self.name} instance {index} ({self.guest_name(index)}): {what} failed: "
                             f"{lines[-1] if lines else 'no output'}")

    def _run_freezer(self, index: int, what: str, argv: list[str], timeout: float = FREEZE_TIMEOUT_S) -> str:
        """Run a freeze or thaw command; PlatformError with its last line if it fails."""
        try:
            result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise self._freeze_failed(index, what, str(error)) from None
        if result.returncode != 0:
            raise self._freeze_failed(index, what, result.stderr.strip() or result.stdout.strip()
                                      or f"{argv[0]} exited {result.returncode}")
        return result.stdout

    def _set_frozen(self, state: GuestState, index: int, frozen: bool) -> None:
        """Ask the platform's tool to freeze (or thaw) the instance: lxc-freeze, podman pause, QMP stop..."""
        raise PlatformError(f"{self.name}: freezing its instances is not implemented")

    def _frozen_now(self, state: GuestState) -> bool:
        """Whether the platform reports the instance frozen (FROZEN, paused)."""
        return False

    def _left_frozen(self, state: GuestState) -> bool:
        try:
            return self._frozen_now(state)
        except (OSError, ValueError, subprocess.SubprocessError, PlatformError):
            return False  # no state to read: whatever the guest does next says more

    def _await_frozen(self, state: GuestState, index: int, frozen: bool) -> None:
        """Wait until the platform reports the instance (un)frozen; PlatformError after FREEZE_TIMEOUT_S."""
        deadline = time.monotonic() + FREEZE_TIMEOUT_S
        while True:
            try:
                if self._frozen_now(state) == frozen:
                    return
                last = "still " + ("running" if frozen else "frozen")
            except PlatformError as error:
                last = str(error)
            except OSError as error:
                last = f"{type(error).__name__}: {error}"
            if time.monotonic() > deadline:
                wanted = "frozen" if frozen else "thawed"
                raise self._freeze_failed(index, "freeze" if frozen else "thaw",
                                          f"not {wanted} after {FREEZE_TIMEOUT_S:.0f} s ({last})")
            time.sleep(0.05)

    def frozen(self, index: int = 0) -> bool:
        if not self.freezable:
            return False
        if self.remote:
            return self._agent().frozen(self, index)
        state = self.state(index)
        return state.running() and self._frozen_now(state)

    def freeze(self, index: int = 0) -> None:
        if not self.freezable:
            return
        started = time.monotonic()
        if self.remote:
            self._agent().freeze(self, index)
        else:
            state = self.state(index)
            if not state.running():
                raise self._freeze_failed(index, "freeze", "the instance is not running (start it with instance())")
            self._set_frozen(state, index, True)
            self._await_frozen(state, index, True)
        self._frozen[index] = time.monotonic()
        record = self.applied.setdefault("freeze", {"mechanism": self.freeze_mechanism, "freezes": 0, "thaws": 0,
                                                    "frozen_s": 0.0})
        record["freezes"] += 1
        record["last_freeze_s"] = round(time.monotonic() - started, 3)

    def thaw(self, index: int = 0, login: bool = True) -> None:
        if not self.freezable:
            return
        started = time.monotonic()
        if self.remote:
            self._agent().thaw(self, index)
        else:
            state = self.state(index)
            if not state.running():
                self._frozen.pop(index, None)
                raise self._freeze_failed(index, "thaw", "the instance is not running any more")
            try:
                frozen = self._frozen_now(state)
            except (OSError, ValueError, PlatformError) as error:
                raise self._freeze_failed(index, "thaw", f"cannot read its state: {error}") from None
            if frozen:  # thawing a running instance only verifies it
                self._set_frozen(state, index, False)
                self._await_frozen(state, index, False)
            if login:
                try:  # verified: its sshd answers a login again
                    wait_for_ssh(state.endpoint(), THAW_SSH_TIMEOUT_S, client=self.ssh_client)
                except GuestError as error:
                    raise self._freeze_failed(index, "thaw", f"thawed but no SSH login: {error}") from None
        since = self._frozen.pop(index, None)
        record = self.applied.setdefault("freeze", {"mechanism": self.freeze_mechanism, "freezes": 0, "thaws": 0,
                                                    "frozen_s": 0.0})
        record["thaws"] += 1
        if since is not None:
            record["frozen_s"] = round(record["frozen_s"] + (started - since), 3)
        # a remote host's agent thaws with a login whatever is asked
        record["last_thaw_to_ssh_s" if login or self.remote else "last_thaw_s"] = round(time.monotonic() - started, 3)

    def cpu_time_ns(self, index: int = 0) -> int:
        """CPU time (user + system, ns) the processes of running instance ``index`` have used so far on
        this host: what a frozen instance must not add to (bench/frozen_guest.py)."""
        raise PlatformError(f"{self.name}: no CPU accounting for its instances")

    def _agent(self):
        if self.agent is None:
            raise PlatformError(f"{self.name} on {self.host.name}: the guests of a remote host are started by its host "
                                "agent; make the platform with its testbed's platform()")
        return self.agent

    def describe(self) -> dict:
        return {**super().describe(), "applied": dict(self.applied)}
