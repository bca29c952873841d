"""One repetition: the benchmark's stages (prepare, run, parse, cleanup) in the platform's instances,
its log streamed into a temporary file, its sidecar, and the log kept only when it parses."""

from __future__ import annotations

import os
import shlex
import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from .. import __version__
from ..builds import registry as builds
from ..testbed import placement
from ..rawdata import rawlog
from ..benchmarks import BENCHMARKS, BUILT, SCRATCH, SCRATCH_DIR, Benchmark
from ..benchmarks.base import MPIRUN_SCHEDULED, Preparation, across_hosts
from ..planning.config import Run, repetition_rule
from ..errors import VirtreproError
from ..testbed.hosts import Host, connect
from ..parsers import ParseError
from ..platforms import catalog as platform_catalog
from ..sidecar import Sidecar
from ..testbed.kinds import testbed_from_config
from .connections import forget_connection, open_connection
from .cpu import harness_cpu, harness_cpu_used, owner_from_environment
from .instance import (boot_facts, drop_page_cache, ensure_tools, host_facts, package_versions, run_command, scratch_fs,
                       status_meaning)
from .peers import start_peers, stop_peers, trust_peers, with_addresses
from .provenance import MeasurementError, image_record, portable_path, provenance, sha256, utc_now


@dataclass
class Kept:
    """A platform's instances that a measurement job keeps up across its rounds (started once for the
    job), frozen (:meth:`Platform.freeze`) while another platform measures; ``keep_prefixes``: the
    names of every guest of the job, which a run's set-up leaves running."""

    platform: object
    endpoints: list
    keep_prefixes: tuple
    frozen: bool = False
    # the job's own ExitStack (what ends with the job), and the server of a job-scoped peer_start
    # (Preparation.peer_scope "job") once started: the sidecar's record of it
    job_stack: ExitStack | None = None
    server: dict | None = None

    def freeze(self) -> None:
        for index in range(len(self.endpoints)):
            self.platform.freeze(index)
        self.frozen = True

    def thaw(self) -> None:
        """The instances thawed; their sshd is not logged in to again here: the run's first command over
        the job's connection to each (:func:`open_connection` checks it answers) verifies it."""
        if self.frozen:
            for index in range(len(self.endpoints)):
                self.platform.thaw(index, login=False)
            self.frozen = False

    def start_server(self, peers_of, command: str, cleanup: str, timeout: int, started: dict) -> dict:
        """The job-scoped server of ``command`` in instances 1.. (``peers_of(stack)``: their connections
        opened on a stack), started once for the job and stopped by ``cleanup`` when the job ends (the
        instances thawed first: a frozen instance answers nothing); what it records (``started``: the
        round it started in, its time)."""
        if self.server is None:
            stack = self.job_stack
            peers = peers_of(stack)
            stack.callback(self._stop_server, peers, cleanup)  # unwound before the instances stop
            start_peers(peers, command, timeout)
            self.server = {"scope": "job", **started}
        return dict(self.server)

    def _stop_server(self, peers, cleanup: str) -> None:
        try:
            self.thaw()
        except Exception as error:  # the supervisor stops the instance anyway; its server goes with it
            print(f"virtrepro: {self.platform.name}: thaw before stopping the job's server failed: {error}",
                  file=sys.stderr)
            return
        stop_peers(peers, cleanup)


@dataclass
class _Setup:
    """What one repetition runs, where: the benchmark, the testbed's host(s) and the platform on it,
    the command with its placeholders resolved, and what the prepare stage uploads."""

    benchmark: Benchmark
    testbed: object
    host: Host
    platform: object
    spec: dict | None
    spanned: list
    count: int
    scratch: str
    command: str
    preparation: Preparation
    uploads: list
    built: dict


def measure(
    run: Run,
    config: dict,
    data_dir: str | Path,
    owner_pid: int | None = None,
    timeout: float | None = 3600,
    progress=None,
    host_name: str | None = None,
    kept: Kept | None = None,
    rounds: dict | None = None,
) -> Path:
    """Run ``run`` unless its complete log exists; return the log path. ``host_name``: which of the
    testbed's hosts (default: its first; :mod:`virtrepro.testbed.placement` chooses in the workflow);
    ``kept``: the platform's instances the job keeps up (thawed now), run in instead of starting
    them; ``rounds``: the run's place in the job's rounds (``round``, ``position``, ``round_order``,
    ``frozen``), recorded in the sidecar.

    Raises MeasurementError (naming the kept failed log) if the tool fails or
    its output does not parse. Progress lines go to stderr and to ``progress``.
    """

    def say(message: str) -> None:
        for stream in (sys.stderr, progress):
            if stream is not None:
                print(message, file=stream, flush=True)

    log = run.log_path(data_dir)
    if is_complete(log):
        say(f"kept {log}: complete raw logs are never re-measured")
        return log
    log.parent.mkdir(parents=True, exist_ok=True)
    setup = _set_up(run, config, log, owner_pid, host_name, kept)
    sidecar = {**_sidecar(run, config, setup), **(rounds or {})}
    partial = rawlog.temporary_path(log)
    say(f"{run.testbed}/{run.platform}/{run.benchmark}/{run.variant.key} rep {run.repetition}: {setup.command}")
    if setup.benchmark.host_side:
        status, error = _measure_on_host(setup.platform, setup.host, sidecar, partial)
    else:
        instances = None
        if len(setup.spanned) > 1:  # instance i is the platform on host i (its first instance: the host itself)
            instances = [(setup.testbed.platform(each, run.platform, setup.spec), each.hostname) for each in setup.spanned]
        status, error = _measure_in_instances(setup.platform, setup.benchmark, run.variant, setup.count, setup.command,
                                              sidecar, partial, timeout, setup.scratch, setup.uploads, setup.host,
                                              owner_pid=owner_pid or owner_from_environment(), on_hosts=instances,
                                              preparation=setup.preparation, kept=kept)
    records = _parsed(run, setup.benchmark, log, partial, sidecar, status, error, say)
    sidecar["records"] = len(records)
    try:
        rawlog.commit(partial, log, Sidecar.new(**sidecar))
    except rawlog.RawLogExists as exc:  # another job committed this repetition meanwhile
        failed = rawlog.keep_failed(partial, log, Sidecar.new(**sidecar, error=str(exc)),
                                    sidecar["ended_utc"].replace(":", ""))
        raise MeasurementError(f"run not kept as {log.name}, output kept in {failed}: {exc}") from None
    say(f"done in {sidecar['duration_s']} s: {log} ({len(records)} records)")
    return log


def _set_up(run: Run, config: dict, log: Path, owner_pid: int | None, host_name: str | None,
            kept: Kept | None = None) -> _Setup:
    """The testbed's host up, the platform on it (the job's kept one), no guest beside it but the
    job's own (frozen), and the benchmark's command and uploads with their placeholders resolved
    (refused before anything runs when a built file is missing)."""
    benchmark = BENCHMARKS[run.benchmark]
    testbed = testbed_from_config(run.testbed, config)
    host = testbed.up(owner_pid=owner_pid, host=host_name)
    in_guest = platform_catalog.runs_in_guest(run.platform)
    spec = {**config.get("guest", {}), **benchmark.guest_overrides(run.variant)} if in_guest else None
    platform = kept.platform if kept is not None else testbed.platform(host, run.platform, spec)
    platform.failure_dir = log.parent
    # no other guest idles beside this measurement (the job's own are frozen)
    keep = platform.guest_name(0).rsplit("-", 1)[0] + "-" if in_guest and not benchmark.host_side else None
    if kept is not None:
        keep = kept.keep_prefixes or None
    scratch = f"{SCRATCH_DIR}/{run.testbed}.{run.platform}.{run.benchmark}.{run.repetition}.{os.getpid()}"
    count = benchmark.instances(run.variant)
    spanned = [host]  # the hosts the run holds: one, or one per instance (MPI across hosts)
    if across_hosts(run.variant):
        spanned = _spanned_hosts(testbed, run, host, count)
    for each in spanned:
        testbed.stop_guests(keep_prefix=keep, host=each.name)  # the other hosts may be measuring
    command = benchmark.run(run.variant).replace(SCRATCH, scratch)
    if len(spanned) > 1:  # the scheduler knows where the instances are: no addresses in the command
        command = command.replace(MPIRUN_SCHEDULED, testbed.mpi_launcher(spanned))
    else:
        command = with_addresses(command, platform, count)
    try:
        preparation = benchmark.prepare(run.variant, config)
        uploads = [(built_path(local, run.benchmark, config), remote.replace(SCRATCH, scratch))
                   for local, remote in preparation.uploads]
        build = builds.of(run.benchmark)
        built = {benchmark.build: build.record(config, run.benchmark)} if build is not None else {}
    except (OSError, ValueError, VirtreproError) as error:
        raise MeasurementError(f"{run.benchmark}/{run.variant.key}: {error}") from None
    return _Setup(benchmark, testbed, host, platform, spec, spanned, count, scratch, command, preparation, uploads, built)


def _sidecar(run: Run, config: dict, setup: _Setup) -> dict:
    """The facts a repetition's sidecar records before it runs (the run adds what it finds)."""
    return {
        "virtrepro_version": __version__,
        "testbed": run.testbed,
        "host_name": setup.host.name,  # which of the testbed's hosts measured (virtrepro.testbed.placement)
        # the scheduler that gave the host (a slurm testbed: job id, partition, nodes, this node), or none
        **({"scheduler": scheduled} if (scheduled := setup.testbed.scheduler(setup.host)) else {}),
        "platform": setup.platform.describe(),
        "benchmark": run.benchmark,
        "variant": run.variant.key,
        "parameters": run.variant.param_dict,
        "repetition": run.repetition,
        "scale": config.get("scale"),
        "repetition_rule": rule.as_dict() if (rule := repetition_rule(config, run.benchmark, run.platform, run.variant)) else None,
        "command": setup.command,
        "scratch": setup.scratch if SCRATCH in setup.benchmark.run(run.variant) else None,
        "image": image_record(run.platform),
        **({"uploads": [{"local": portable_path(local), "remote": remote, "sha256": sha256(local)}
                        for local, remote in setup.uploads]}
           if setup.uploads else {}),
        **setup.built,  # the source build the run used (its record: builds)
        # instances on different hosts: which hosts, and what started MPI there (the scheduler)
        **({"spanned_hosts": [each.name for each in setup.spanned], "mpi_launch": scheduled.get("kind")}
           if len(setup.spanned) > 1 else {}),
        **provenance(),
    }


def _parsed(run: Run, benchmark: Benchmark, log: Path, partial: Path, sidecar: dict, status, error, say) -> list[dict]:
    """The parse stage: the run's records, if it exited 0 and its log parses; else its output is
    kept as a failed log and the run is a MeasurementError."""
    text = rawlog.read_log(partial)  # as the table reads it
    if error is None:
        try:
            records = benchmark.parse(text, str(log), run.variant.param_dict)
        except ParseError as exc:
            error = str(exc)
    if status not in (0, None):  # the exit status often says more than the parser's complaint
        exited = f"{benchmark.tool} exited with status {status}{status_meaning(status)}"
        error = f"{log}: {exited}" if error is None else f"{error} ({exited})"
    if error is not None:
        failed = rawlog.keep_failed(partial, log, Sidecar.new(**sidecar, error=error), sidecar["ended_utc"].replace(":", ""))
        say(f"FAILED: {error} (output kept in {failed})")
        raise MeasurementError(f"run failed, output kept in {failed}: {error}")
    return records



def built_path(local: str, benchmark: str, config: dict) -> str:
    """An upload's local file: as named, or (``@BUILT@/<path>``) the benchmark's built file, which must
    exist (the workflow's build rule of its source build makes it first)."""
    if not local.startswith(BUILT + "/"):
        return local
    build = builds.of(benchmark)
    if build is None:
        raise ValueError(f"{benchmark} uploads {local} but names no source build (Benchmark.build)")
    path = build.built_file(config, local.removeprefix(BUILT + "/"))
    if not path.exists():
        raise FileNotFoundError(f"{path} is not built: the workflow's build_{BENCHMARKS[benchmark].build} rule builds it "
                                f"(python -m {build.__name__} build)")
    return str(path)



def is_complete(log: Path) -> bool:
    """Whether ``log`` is complete (:func:`rawlog.is_complete`); a log that is there without a
    readable, complete sidecar is a MeasurementError saying what to do, checked before anything runs:
    such a log is never measured again over itself."""
    try:
        return rawlog.is_complete(log)
    except rawlog.RawLogError as error:
        raise MeasurementError(str(error)) from None



def _spanned_hosts(testbed, run: Run, host: Host, count: int) -> list[Host]:
    """The hosts of a run whose ``count`` instances are on different hosts, ``host`` first; refused
    (before anything runs) where the platform's instances cannot span hosts or no scheduler starts MPI."""
    where = f"{run.benchmark}/{run.variant.key} on {run.platform}"
    if platform_catalog.lacks(run.platform, "spans_hosts"):
        raise MeasurementError(f"{where}: {run.platform}'s instances cannot be on different hosts (across: hosts)")
    try:
        names = placement.spanned_hosts(testbed.host_names(), count, run.testbed)
    except ValueError as error:
        raise MeasurementError(f"{where}: {error}") from None
    if names[0] != host.name:
        raise MeasurementError(f"{where}: a run across hosts starts on {names[0]}, not {host.name}")
    hosts = [host] + [testbed.up(host=name) for name in names[1:]]
    if testbed.mpi_launcher(hosts) is None:
        raise MeasurementError(f"{where}: MPI across hosts starts through the testbed's scheduler (kind: slurm); "
                               f"testbed {run.testbed} has none")
    return hosts



def _measure_in_instances(platform, benchmark: Benchmark, variant, count: int, command: str, sidecar: dict,
                          partial: Path, timeout, scratch: str, uploads=(), host: Host | None = None,
                          owner_pid: int | None = None, on_hosts: list | None = None,
                          preparation: Preparation | None = None, kept: Kept | None = None):
    """Run the benchmark's command over SSH in instance 0 of the platform, into ``partial``.

    With ``count`` > 1 every instance is a network instance; instances 1.. run the prepare
    stage's peer command (a server) first, and the cleanup stage's command afterwards,
    whatever happened in between. ``on_hosts``: (the platform on a host, the host's address) for
    each instance of a run across hosts, the first instance of the platform on each. ``kept``: the
    instances the job keeps up (started once for its rounds), used as they are; a job-scoped server
    (``preparation.peer_scope`` "job") is started in them once for the job (:meth:`Kept.start_server`).
    """
    preparation = preparation or benchmark.prepare(variant)
    with ExitStack() as stack:
        if kept:
            endpoints = list(kept.endpoints)
        elif on_hosts:
            endpoints = [stack.enter_context(on_host.instance(0)) for on_host, _ in on_hosts]
        elif count == 1:
            endpoints = [stack.enter_context(platform.instance(0))]
        else:
            endpoints = [stack.enter_context(platform.network_instance(i)) for i in range(count)]
        addresses = [address for _, address in on_hosts] if on_hosts else None
        sidecar["platform"] = platform.describe()  # now with what was applied (accelerator, boot time, ...)
        sidecar["endpoint"] = endpoints[0].describe()
        connection = open_connection(stack, endpoints[0])
        peers = [open_connection(stack, endpoint) for endpoint in endpoints[1:]]
        _instance_facts(sidecar, platform, benchmark, connection, peers, endpoints, addresses)
        if peers:  # peer commands may name the instances too (@PEERn@)
            start = with_addresses(preparation.peer_start or "", platform, count)
            cleanup = with_addresses(benchmark.cleanup(variant) or "", platform, count)
            if preparation.peer_start and preparation.peer_scope == "job" and kept and kept.job_stack is not None:
                sidecar["server"] = kept.start_server(
                    lambda job_stack: [open_connection(job_stack, endpoint) for endpoint in endpoints[1:]], start,
                    cleanup, preparation.peer_start_timeout,
                    {"started_in_round": sidecar.get("round"), "started_utc": utc_now()})
            else:
                stack.callback(stop_peers, peers, cleanup)
                start_peers(peers, start, preparation.peer_start_timeout)
                if preparation.peer_start:
                    sidecar["server"] = {"scope": "run"}
        _prepare_files(stack, benchmark, preparation, connection, peers, scratch, uploads, addresses, sidecar)
        if peers and preparation.peer_ssh:
            sidecar["peer_ssh"] = trust_peers(stack, platform, connection, peers, endpoints, scratch)
        if benchmark.scratch == "peers" and peers:
            sidecar["peer_scratch_fs"] = [scratch_fs(peer_connection, SCRATCH_DIR) for peer_connection in peers]
        sidecar["placement"] = benchmark.placement(variant)
        if benchmark.scratch == "instance" and host is not None:
            sidecar["page_cache"] = drop_page_cache(host, connection, platform)
        if platform.family == "full-vm" and host is not None:  # a guest's caches run on the host's (regimes)
            sidecar["testbed_host"] = host_facts(open_connection(stack, host))
        status, error = _timed_run(connection, command, partial, timeout, owner_pid, sidecar)
    if error is not None:  # the runner's state is unknown after a timeout or a lost link
        for endpoint in endpoints:
            forget_connection(endpoint)
    return status, error


def _instance_facts(sidecar: dict, platform, benchmark: Benchmark, connection, peers, endpoints, addresses) -> None:
    """Instance 0's facts, tool version and packages, and each peer's endpoint, address and tool
    (a VM's asked once per boot: :class:`BootFacts`, whose boot the sidecar names)."""
    vm = platform.family == platform_catalog.FULL_VM
    boot = boot_facts(connection) if vm else None
    if boot is not None:
        sidecar["facts_of_boot"] = boot.boot
    sidecar["host"] = host_facts(connection, boot)
    sidecar["tool_version"] = ensure_tools(connection, benchmark, endpoints[0], boot)
    sidecar["benchmark_packages"] = package_versions(connection, benchmark.packages, boot)
    if peers:
        sidecar["peers"] = [
            {"endpoint": endpoint.describe(),
             "address": addresses[i + 1] if addresses else platform.private_address(i + 1),
             "tool_version": ensure_tools(peer_connection, benchmark, endpoint, boot_facts(peer_connection) if vm else None),
             **({"host": host_facts(peer_connection)} if addresses else {})}  # another machine
            for i, (endpoint, peer_connection) in enumerate(zip(endpoints[1:], peers))
        ]


def _prepare_files(stack: ExitStack, benchmark: Benchmark, preparation: Preparation, connection, peers, scratch: str,
                   uploads, addresses, sidecar: dict) -> None:
    """The run's scratch directory (removed after the run) and the prepare stage's uploads, in every
    instance that needs them."""
    if benchmark.scratch == "instance":
        connection.run(f"mkdir -p {scratch}", hide=True, in_stream=False)
        sidecar["scratch_fs"] = scratch_fs(connection, scratch)
        stack.callback(connection.run, f"rm -rf {scratch}", hide=True, warn=True, in_stream=False)
        # the same paths in every instance: MPI starts the same binary, its ranks start in that directory
        if uploads or (peers and (preparation.peer_ssh or addresses)):
            for peer_connection in peers:  # the same paths in every instance (MPI starts the same binary)
                peer_connection.run(f"mkdir -p {scratch}", hide=True, in_stream=False)
                stack.callback(peer_connection.run, f"rm -rf {scratch}", hide=True, warn=True, in_stream=False)
    for instance in [connection, *peers] if uploads else []:
        directories = sorted({str(Path(remote).parent) for _, remote in uploads})
        instance.run("mkdir -p " + " ".join(map(shlex.quote, directories)), hide=True, in_stream=False)
        for local, remote in uploads:
            instance.put(local, remote)  # SFTP; keeps the file's mode


def _timed_run(connection, command: str, partial: Path, timeout, owner_pid: int | None, sidecar: dict):
    """The run stage: the command in instance 0, its output streamed into ``partial``, timed, with the
    harness's CPU use beside it; (exit status, error or None)."""
    sidecar["started_utc"] = utc_now()
    start = time.monotonic()
    before = harness_cpu(owner_pid)
    with open(partial, "w") as handle:
        try:
            status = run_command(connection, command, handle, timeout)
            error = None
        except Exception as exc:  # timeout, lost connection: keep what arrived
            status, error = None, f"{type(exc).__name__}: {exc}"
    sidecar["ended_utc"] = utc_now()
    sidecar["duration_s"] = round(time.monotonic() - start, 3)
    sidecar["harness_cpu"] = harness_cpu_used(before, harness_cpu(owner_pid), sidecar["duration_s"])
    sidecar["exit_status"] = status
    return status, error



def _measure_on_host(platform, host: Host, sidecar: dict, partial: Path):
    """A harness-side benchmark (lifecycle timings): the platform does the work, on the testbed host."""
    from ..platforms.guest import GuestPlatform

    if not isinstance(platform, GuestPlatform):
        return None, f"{platform.name} has no guest lifecycle to time"
    with connect(host) as connection:
        sidecar["host"] = host_facts(connection)
    sidecar["tool_version"] = f"virtrepro {__version__}"
    sidecar["started_utc"] = utc_now()
    start = time.monotonic()
    error = None
    with open(partial, "w") as handle:
        try:
            platform.lifecycle(handle)
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
    sidecar["platform"] = platform.describe()
    sidecar["ended_utc"] = utc_now()
    sidecar["duration_s"] = round(time.monotonic() - start, 3)
    sidecar["exit_status"] = 0 if error is None else None
    return sidecar["exit_status"], error
