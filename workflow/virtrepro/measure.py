"""Run the repetitions of one benchmark variant on one platform of a testbed, over SSH.

This is what a Snakemake measurement job calls (one job per variant; it measures only
the repetitions whose complete raw log is missing). The steps are kept apart:
``ensure_tools`` (install), ``run_command`` (run), the benchmark's parser
(parse), and :mod:`virtrepro.rawlog` (keep).
"""

from __future__ import annotations

import datetime as dt
import dataclasses
import json
import os
import shlex
import subprocess
import sys
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

from . import __version__, adaptive, builds, datalayout, machines, placement, rawlog
from .platforms import catalog as platform_catalog
from .benchmarks import BENCHMARKS, BUILT, HOSTS, SCRATCH, SCRATCH_DIR, Benchmark, peer
from .benchmarks.base import MPIRUN_SCHEDULED, across_hosts
from .benchmarks.base import PEER_KNOWN_HOSTS, PEER_SSH_KEY
from .config import QEMU_AUTO, Run, VariantPlan, repetition_rule, run_sequence
from .errors import VirtreproError
from .hostagent import install_command
from .parsers import ParseError
from .sidecar import Sidecar
from .testbed import testbed_from_config
from .hosts import Host, TestbedError, connect


class MeasurementError(VirtreproError, RuntimeError):
    """A run failed; the message names the kept log and the reason."""


def provenance() -> dict:
    """Where this run was started from: the command line and the repository commit."""
    repo = Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=10,
        ).stdout.strip() != ""
    except (OSError, subprocess.SubprocessError):
        commit, dirty = "", False
    import json
    import os

    workflow_argv = json.loads(os.environ.get("VIRTREPRO_INVOCATION", "null")) or sys.argv
    return {
        "invocation": [Path(workflow_argv[0]).name, *workflow_argv[1:]],
        "virtrepro_commit": commit or None,
        "virtrepro_tree_modified": dirty,
        "python": sys.version.split()[0],
    }


CODE_DIRS = ("workflow", "config", "scripts")  # what measures: a reference testbed needs them committed


def require_clean_tree(config: dict, testbed: str, repo: Path = Path(__file__).resolve().parents[2]) -> None:
    """Refuse to measure a testbed whose configuration says ``require_clean_tree`` (reference
    data) while tracked files of the code (CODE_DIRS) differ from the commit: the sidecars name
    the commit, which must be the code that measured."""
    if not config["testbeds"][testbed].get("require_clean_tree"):
        return
    try:
        changed = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no", "--",
                                  *CODE_DIRS], capture_output=True, text=True, timeout=10, check=True).stdout.split("\n")
    except (OSError, subprocess.SubprocessError) as error:
        raise MeasurementError(f"testbed {testbed} requires a committed tree, and git cannot tell ({error})") from None
    changed = [line[3:] for line in changed if line.strip()]
    if changed:
        raise MeasurementError(f"testbed {testbed} holds reference data (require_clean_tree): commit or stash "
                               f"{len(changed)} modified files first ({', '.join(changed[:3])}{' ...' if len(changed) > 3 else ''})")


def image_record(platform: str) -> dict | None:
    """The guest image a guest platform ran (its record, image.json, lists the packages installed
    in it with their versions): the record's recipe and sha256. None for a platform without guests (native)."""
    return current_image() if platform_catalog.runs_in_guest(platform) else None


def current_image() -> dict:
    """The record of this code's guest image (the current recipe's; its sha256 None where not built here)."""
    from .guests import image_dir

    record = image_dir() / "image.json"
    if not record.exists():  # a remote testbed's hosts build the same recipe
        return {"recipe": record.parent.name, "record_sha256": None}
    return {"recipe": record.parent.name, "record_sha256": _sha256(str(record))}


def package_versions(connection, packages) -> dict:
    """The installed versions of Debian ``packages`` where ``connection`` leads (dpkg-query -W;
    asked once per connection)."""
    if not packages:
        return {}
    asked = getattr(connection, "virtrepro_packages", None)
    if asked is None:
        asked = {}
        try:
            connection.virtrepro_packages = asked
        except AttributeError:  # an object that takes no attributes: ask every time
            pass
    if tuple(packages) in asked:
        return dict(asked[tuple(packages)])
    names = " ".join(shlex.quote(p) for p in packages)
    result = connection.run(f"dpkg-query -W -f '${{Package}}=${{Version}}\\n' {names}", hide=True, warn=True,
                            in_stream=False)
    versions = dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)
    asked[tuple(packages)] = {package: versions.get(package) for package in packages}
    return dict(asked[tuple(packages)])


def utc_now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def host_facts(connection) -> dict:
    """Facts about the machine at the other end of ``connection`` (one round trip, cached per
    connection; a cached answer gets the load average read again: it changes between repetitions)."""
    if getattr(connection, "facts", None) is not None:
        facts = dict(connection.facts)
        load = connection.run("cat /proc/loadavg", hide=True, warn=True, in_stream=False).stdout.split()
        facts["loadavg"] = " ".join(load[:3])
        return facts
    facts = machines.parse_facts(connection.run(machines.HOST_FACTS_COMMAND, hide=True, warn=True, in_stream=False).stdout)
    if hasattr(connection, "facts"):
        connection.facts = dict(facts)
    return facts


def scratch_fs(connection, directory: str) -> dict:
    """The file system ``directory`` is on, as the instance sees it (type, source, mount options)."""
    found = connection.run(f"findmnt -no FSTYPE,SOURCE,OPTIONS -T {shlex.quote(directory)}", hide=True, warn=True,
                           in_stream=False).stdout.split()
    if len(found) != 3:
        return {"directory": directory, "error": "findmnt gave no answer"}
    return {"directory": directory, "fstype": found[0], "source": found[1], "options": found[2]}


# endpoint -> its open connection, while one variant's repetitions run (reused_connections)
_POOL: dict[tuple, object] | None = None


@contextmanager
def reused_connections():
    """Keep every SSH connection a variant's repetitions open (each with its runner process,
    cached host facts and tool check) for the next repetition in this process; all are closed
    when the block ends. Outside the block every repetition connects anew. In a TCG guest a
    connection costs about 1.5 s (handshake, runner start, host facts); the guest, its spec and
    the command are the same from one repetition of a variant to the next."""
    global _POOL
    if _POOL is not None:  # nested: the outer block owns the connections
        yield
        return
    _POOL = {}
    try:
        yield
    finally:
        pool, _POOL = _POOL, None
        for connection in pool.values():
            try:
                connection.close()
            except Exception:  # a connection lost with its guest: nothing left to close
                pass


def open_connection(stack: ExitStack, host: Host):
    """``host``'s connection for this repetition: the variant's open one (:func:`reused_connections`)
    while it is still connected, else a new one (closed with ``stack`` outside the block)."""
    if _POOL is None:
        return stack.enter_context(connect(host))
    key = _instance_key(host)
    connection = _POOL.get(key)
    if connection is not None and not _answers(connection):  # its instance was stopped or restarted
        try:
            connection.close()
        except Exception:
            pass
        connection = None
    if connection is None:
        connection = _POOL[key] = connect(host)
    return connection


def _answers(connection) -> bool:
    """A kept connection still reaches a running shell (one round trip). An instance may be gone
    between repetitions though its TCP connection looks open: every measurement first stops the
    guests it does not use, a network namespace of `native` among them."""
    if not connection.is_connected:
        return False
    try:
        return connection.run("true", hide=True, warn=True, in_stream=False).exited == 0
    except Exception:
        return False


def forget_connection(host: Host) -> None:
    """Close ``host``'s kept connection, if any: after a timeout or a lost link its runner's state
    is unknown, so the next repetition connects anew."""
    connection = _POOL.pop(_instance_key(host), None) if _POOL is not None else None
    if connection is not None:
        try:
            connection.close()
        except Exception:
            pass


def drop_page_cache(host: Host, connection, platform) -> dict:
    """Write back and drop the testbed host's page cache before a disk run, and a VM's own too;
    a container shares the host's kernel, so the host's drop is its drop. Says what was done."""
    drop = "sync && echo 3 > /proc/sys/vm/drop_caches"
    with ExitStack() as stack:
        host_connection = open_connection(stack, host)
        done = host_connection.run(drop, hide=True, warn=True, in_stream=False).exited == 0
    state = {"host": "dropped" if done else "not dropped (drop_caches refused)"}
    if platform.family == "full-vm":
        done = connection.run(drop, hide=True, warn=True, in_stream=False).exited == 0
        state["instance"] = "dropped" if done else "not dropped (drop_caches refused)"
    else:
        state["instance"] = "the host's kernel"
    return state


TOOL_PRESENT = "virtrepro:tool-present"


# (instance, benchmark) -> the tool's version, found present by this process: a job's later
# repetitions run in the same instance (the same guest, of the same image), so they skip the check
# (in a TCG guest a version command that starts Python takes seconds)
_TOOLS_PRESENT: dict[tuple, str] = {}


def _instance_key(host: Host) -> tuple:
    return (host.hostname, host.port, host.user, host.known_hosts,
            _instance_key(host.gateway) if host.gateway is not None else None)


def ensure_tools(connection, benchmark: Benchmark, host: Host) -> str:
    """Make sure the benchmark's tool is on the host; install its Debian packages if not.

    Returns the tool's version string. The check and the version are one round trip, once per
    instance and benchmark in a process (:data:`_TOOLS_PRESENT`).
    """
    key = (_instance_key(host), benchmark.name)
    if key not in _TOOLS_PRESENT:
        _TOOLS_PRESENT[key] = _ensure_tools(connection, benchmark, host)
    return _TOOLS_PRESENT[key]


def _ensure_tools(connection, benchmark: Benchmark, host: Host) -> str:
    if benchmark.check_command == benchmark.version_command:  # one run answers both
        probe = f"v=$({benchmark.version_command}\n) || exit 0; echo {TOOL_PRESENT}; printf '%s\\n' \"$v\""
    else:
        probe = (f"{{ {benchmark.check_command}\n}} >/dev/null 2>&1 || exit 0; echo {TOOL_PRESENT}; "
                 f"{benchmark.version_command}")
    check = connection.run(probe, hide=True, warn=True, in_stream=False)
    _, present, version = check.stdout.partition(f"{TOOL_PRESENT}\n")
    if not present:
        packages = " ".join(benchmark.packages)
        install = connection.run(
            install_command(benchmark.packages),
            hide=True,
            warn=True,
            in_stream=False,
        )
        if install.exited != 0:
            raise MeasurementError(
                f"{benchmark.tool} is not installed on {host.name} and installing {packages} failed "
                f"(exit {install.exited}): {install.stderr.strip()[-500:]}. "
                "On the local testbed, run the set-up script (scripts/setup.sh)."
            )
        version = connection.run(benchmark.version_command, hide=True, warn=True, in_stream=False).stdout
    return version.strip().splitlines()[0] if version.strip() else "unknown"


def run_command(connection, command: str, log_handle, timeout: float | None) -> int:
    """Run ``command`` with stderr folded into stdout, streaming into ``log_handle``.

    With a ``timeout``, the remote side enforces it (the connection's runner signals the
    command's whole process group, e.g. mpirun and its ranks, as coreutils ``timeout -k``
    does), so a hung run leaves nothing running; the exit status is then 124 (or 137),
    which makes the run a failed one."""
    from invoke.exceptions import CommandTimedOut

    try:
        result = connection.run(command, hide=True, warn=True, pty=False, in_stream=False, out_stream=log_handle,
                                merge_stderr=True, timeout=timeout)
    except CommandTimedOut as timed_out:
        return timed_out.result.exited
    return result.exited


def measure(
    run: Run,
    config: dict,
    data_dir: str | Path,
    owner_pid: int | None = None,
    timeout: float | None = 3600,
    progress=None,
    host_name: str | None = None,
) -> Path:
    """Run ``run`` unless its complete log exists; return the log path. ``host_name``: which of the
    testbed's hosts (default: its first; :mod:`virtrepro.placement` chooses in the workflow).

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
    benchmark = BENCHMARKS[run.benchmark]
    testbed = testbed_from_config(run.testbed, config)
    host = testbed.up(owner_pid=owner_pid, host=host_name)
    in_guest = platform_catalog.runs_in_guest(run.platform)
    spec = {**config.get("guest", {}), **benchmark.guest_overrides(run.variant)} if in_guest else None
    platform = testbed.platform(host, run.platform, spec)
    platform.failure_dir = log.parent
    # no other platform's guest idles beside this measurement
    keep = platform.guest_name(0).rsplit("-", 1)[0] + "-" if in_guest and not benchmark.host_side else None
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
    sidecar = {
        "virtrepro_version": __version__,
        "testbed": run.testbed,
        "host_name": host.name,  # which of the testbed's hosts measured (virtrepro.placement)
        # the scheduler that gave the host (a slurm testbed: job id, partition, nodes, this node), or none
        **({"scheduler": scheduled} if (scheduled := testbed.scheduler(host)) else {}),
        "platform": platform.describe(),
        "benchmark": run.benchmark,
        "variant": run.variant.key,
        "parameters": run.variant.param_dict,
        "repetition": run.repetition,
        "order": run_order(config, run),
        "scale": config.get("scale"),
        "repetition_rule": rule.as_dict() if (rule := repetition_rule(config, run.benchmark, run.platform, run.variant)) else None,
        "command": command,
        "scratch": scratch if SCRATCH in benchmark.run(run.variant) else None,
        "image": image_record(run.platform),
        **({"uploads": [{"local": _portable_path(local), "remote": remote, "sha256": _sha256(local)}
                        for local, remote in uploads]}
           if uploads else {}),
        **built,  # the source build the run used (its record: builds)
        # instances on different hosts: which hosts, and what started MPI there (the scheduler)
        **({"spanned_hosts": [each.name for each in spanned], "mpi_launch": scheduled.get("kind")}
           if len(spanned) > 1 else {}),
        **provenance(),
    }
    partial = rawlog.temporary_path(log)
    say(f"{run.testbed}/{run.platform}/{run.benchmark}/{run.variant.key} rep {run.repetition}: {command}")
    if benchmark.host_side:
        status, error = _measure_on_host(platform, host, sidecar, partial)
    else:
        instances = None
        if len(spanned) > 1:  # instance i is the platform on host i (its first instance: the host itself)
            instances = [(testbed.platform(each, run.platform, spec), each.hostname) for each in spanned]
        status, error = _measure_in_instances(platform, benchmark, run.variant, count, command, sidecar, partial, timeout, scratch,
                                              uploads, host, owner_pid=owner_pid or _owner_from_environment(),
                                              on_hosts=instances, preparation=preparation)
    text = rawlog.read_log(partial)  # as the table reads it
    if error is None:
        try:
            records = benchmark.parse(text, str(log), run.variant.param_dict)
        except ParseError as exc:
            error = str(exc)
    if status not in (0, None):  # the exit status often says more than the parser's complaint
        exited = f"{benchmark.tool} exited with status {status}{_status_meaning(status)}"
        error = f"{log}: {exited}" if error is None else f"{error} ({exited})"
    if error is not None:
        failed = rawlog.keep_failed(partial, log, Sidecar.new(**sidecar, error=error), sidecar["ended_utc"].replace(":", ""))
        say(f"FAILED: {error} (output kept in {failed})")
        raise MeasurementError(f"run failed, output kept in {failed}: {error}")
    sidecar["records"] = len(records)
    try:
        rawlog.commit(partial, log, Sidecar.new(**sidecar))
    except rawlog.RawLogExists as exc:  # another job committed this repetition meanwhile
        failed = rawlog.keep_failed(partial, log, Sidecar.new(**sidecar, error=str(exc)),
                                    sidecar["ended_utc"].replace(":", ""))
        raise MeasurementError(f"run not kept as {log.name}, output kept in {failed}: {exc}") from None
    say(f"done in {sidecar['duration_s']} s: {log} ({len(records)} records)")
    return log


def _status_meaning(status: int) -> str:
    """What a shell's exit status above 128 says: the signal that ended the command."""
    if status == 137:
        return ": killed (SIGKILL: the out-of-memory killer when a run needs more memory than it may have, or a time limit)"
    if status == 124:
        return ": stopped by its time limit"
    if 128 < status < 160:
        return f": ended by signal {status - 128}"
    return ""


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


def with_addresses(command: str, platform, count: int) -> str:
    """Replace the peer placeholders of a multi-instance command with private addresses."""
    if count <= 1:
        return command
    addresses = [platform.private_address(i) for i in range(count)]
    for index in range(count - 1, 0, -1):  # @PEER10@ before @PEER1@
        command = command.replace(peer(index), addresses[index])
    return command.replace(HOSTS, ",".join(addresses))


def _measure_in_instances(platform, benchmark: Benchmark, variant, count: int, command: str, sidecar: dict,
                          partial: Path, timeout, scratch: str, uploads=(), host: Host | None = None,
                          owner_pid: int | None = None, on_hosts: list | None = None, preparation=None):
    """Run the benchmark's command over SSH in instance 0 of the platform, into ``partial``.

    With ``count`` > 1 every instance is a network instance; instances 1.. run the
    benchmark's peer command (a server) first, and its stop command afterwards,
    whatever happened in between. ``on_hosts``: (the platform on a host, the host's address) for
    each instance of a run across hosts, the first instance of the platform on each.
    """
    preparation = preparation or benchmark.prepare(variant)
    with ExitStack() as stack:
        if on_hosts:
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
        sidecar["host"] = host_facts(connection)
        sidecar["tool_version"] = ensure_tools(connection, benchmark, endpoints[0])
        sidecar["benchmark_packages"] = package_versions(connection, benchmark.packages)
        if peers:
            sidecar["peers"] = [
                {"endpoint": endpoint.describe(),
                 "address": addresses[i + 1] if addresses else platform.private_address(i + 1),
                 "tool_version": ensure_tools(peer_connection, benchmark, endpoint),
                 **({"host": host_facts(peer_connection)} if addresses else {})}  # another machine
                for i, (endpoint, peer_connection) in enumerate(zip(endpoints[1:], peers))
            ]
            # peer commands may name the instances too (@PEERn@)
            stack.callback(_stop_peers, peers, with_addresses(benchmark.cleanup(variant) or "", platform, count))
            _start_peers(peers, with_addresses(preparation.peer_start or "", platform, count),
                         preparation.peer_start_timeout)
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
        if peers and preparation.peer_ssh:
            sidecar["peer_ssh"] = _trust_peers(stack, platform, connection, peers, endpoints, scratch)
        if benchmark.scratch == "peers" and peers:
            sidecar["peer_scratch_fs"] = [scratch_fs(peer_connection, SCRATCH_DIR) for peer_connection in peers]
        sidecar["placement"] = benchmark.placement(variant)
        if benchmark.scratch == "instance" and host is not None:
            sidecar["page_cache"] = drop_page_cache(host, connection, platform)
        if platform.family == "full-vm" and host is not None:  # a guest's caches run on the host's (regimes)
            sidecar["testbed_host"] = host_facts(open_connection(stack, host))
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
    if error is not None:  # the runner's state is unknown after a timeout or a lost link
        for endpoint in endpoints:
            forget_connection(endpoint)
    return status, error


def _owner_from_environment() -> int | None:
    owner = os.environ.get("VIRTREPRO_TESTBED_OWNER")
    return int(owner) if owner and owner.isdigit() else None


def _process_cpu_s(pid: int) -> float | None:
    """CPU seconds (user + system, all threads, not its children) a process of this machine used so far."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def harness_cpu(owner_pid: int | None) -> dict:
    """CPU seconds used so far on this machine by the orchestrator (the Snakemake process that
    owns the run, ``owner_pid``), by this measurement process, and by the SSH servers and
    runners that carry the commands (every ``sshd`` and virtrepro runner process here; on the
    local testbed that is the harness's side of the connection, in the host or a native
    instance). Read before and after a benchmark runs (:func:`harness_cpu_used`)."""
    times = os.times()
    harness = times.user + times.system
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            comm = (entry / "comm").read_text().strip()
            if comm != "sshd" and not (comm.startswith("python") and b"virtrepro-runner" in (entry / "cmdline").read_bytes()):
                continue
        except OSError:
            continue
        used = _process_cpu_s(int(entry.name))
        harness += used or 0.0
    orchestrator = _process_cpu_s(owner_pid) if owner_pid and owner_pid != os.getpid() else None
    return {"orchestrator": orchestrator, "harness": harness}


def harness_cpu_used(before: dict, after: dict, seconds: float) -> dict:
    """What the orchestrator and the harness used while the benchmark ran: CPU seconds, and as a
    share of one core over the run (the target: under 1 %). A process that ended meanwhile is
    not counted (a share can only be too low by the sshd sessions that closed during the run)."""
    used = {"resolution_s": round(1 / os.sysconf("SC_CLK_TCK"), 4)}  # CPU times count in clock ticks
    for name in ("orchestrator", "harness"):
        if before.get(name) is None or after.get(name) is None:
            used[name] = None
            continue
        cpu = max(0.0, after[name] - before[name])
        used[f"{name}_cpu_s"] = round(cpu, 3)
        used[f"{name}_share_of_a_core"] = round(cpu / seconds, 4) if seconds > 0 else None
    return used


def _portable_path(path: str) -> str:
    """Where an uploaded file came from, without this machine's directories: relative to the
    repository, or to the Python environment's site-packages (pyperf, pyperformance); the
    sha256 beside it identifies the file."""
    resolved = Path(path).resolve()
    parts = resolved.parts
    if "site-packages" in parts:
        return str(Path(*parts[parts.index("site-packages"):]))
    try:
        return str(resolved.relative_to(Path(__file__).resolve().parents[2]))
    except ValueError:
        return resolved.name


def _sha256(path: str) -> str:
    import hashlib

    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _trust_peers(stack: ExitStack, platform, connection, peers, endpoints, scratch: str) -> dict:
    """Let instance 0 log in to instances 1.. over SSH for this run only.

    A key is made in instance 0 (in the run's scratch directory, so the private key
    never leaves it), authorised on each peer until the run ends, and a known_hosts
    file lists the peers' own host keys (the ones the harness pinned) at their private
    addresses: instance 0 trusts no unknown key. See PEER_SSH_KEY and PEER_KNOWN_HOSTS."""
    import io

    key = PEER_SSH_KEY.replace(SCRATCH, scratch)
    known_hosts = PEER_KNOWN_HOSTS.replace(SCRATCH, scratch)
    marker = f"virtrepro-run-{Path(scratch).name}"
    connection.run(f"mkdir -p -m 700 {Path(key).parent} && ssh-keygen -q -t ed25519 -N '' -C {marker} -f {key}",
                   hide=True, in_stream=False)
    public = connection.run(f"cat {key}.pub", hide=True, in_stream=False).stdout.strip()
    lines = []
    for index, endpoint in enumerate(endpoints):
        pinned = Path(endpoint.known_hosts).read_text().split()
        lines.append(f"{platform.private_address(index)} {pinned[1]} {pinned[2]}")
    connection.put(io.StringIO("\n".join(lines) + "\n"), known_hosts)
    for index, peer_connection in enumerate(peers, start=1):
        path = platform.authorized_keys_file(index)
        # registered first: the key goes away also when appending fails half-way
        stack.callback(peer_connection.run, f"f={path}; if [ -f $f ]; then grep -vF -- {shlex.quote(marker)} $f > $f.tmp; "
                       "cat $f.tmp > $f; rm -f $f.tmp; fi", hide=True, warn=True, in_stream=False)
        peer_connection.run(f"f={path}; mkdir -p $(dirname $f) && echo {shlex.quote(public)} >> $f",
                            hide=True, in_stream=False)
    return {"key_comment": marker, "known_hosts": lines}


def _start_peers(peers, command: str | None, timeout: float = 60) -> None:
    if not command:
        return
    for connection in peers:
        result = connection.run(f"sh -c {shlex.quote(command)} 2>&1", hide=True, warn=True, in_stream=False,
                                timeout=timeout)
        if result.exited != 0:
            raise MeasurementError(
                f"starting the peer side on {connection.host} failed (exit {result.exited}): {result.stdout.strip()[-500:]}"
            )


def _stop_peers(peers, command: str | None) -> None:
    if not command:
        return
    for connection in peers:
        try:
            connection.run(f"sh -c {shlex.quote(command)}", hide=True, warn=True, in_stream=False, timeout=60)
        except Exception:  # a lost peer is torn down with its instance anyway
            pass


def _measure_on_host(platform, host: Host, sidecar: dict, partial: Path):
    """A harness-side benchmark (lifecycle timings): the platform does the work, on the testbed host."""
    from .platforms.guest import GuestPlatform

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


def measure_variant(variant: VariantPlan, config: dict, data_dir: str | Path, owner_pid: int | None = None,
                    reps: list[int] | None = None, host: str | None = None) -> Path | None:
    """Measure every repetition of ``variant`` whose complete raw log is missing, in order.

    A failed repetition does not stop the others (its output is kept, it never becomes a
    number). Raises MeasurementError naming every failed repetition; otherwise writes the
    variant's marker (all repetitions, each log's sha256) and returns its path. With ``reps``
    only those repetitions are measured and no marker is written.
    """
    runs = variant.runs() if reps is None else [variant.run(rep) for rep in reps]
    where = f"{variant.testbed}/{variant.platform}/{variant.benchmark}/{variant.variant.key}"
    todo, broken = [], []
    for run in runs:
        try:
            if not is_complete(run.log_path(data_dir)):
                todo.append(run)
        except MeasurementError as error:
            broken.append(f"rep {run.repetition}: {error}")
    if broken:
        raise MeasurementError(f"{where}: nothing measured, {len(broken)} raw logs lack a complete sidecar:\n  "
                               + "\n  ".join(broken))
    print(f"{where}: {len(runs) - len(todo)} of {len(runs)} repetitions complete, "
          f"{len(todo)} to measure", file=sys.stderr, flush=True)
    checked = []

    def before_measuring() -> None:
        """The comparison's guards, once, before the first repetition this job really measures (a job
        whose logs are complete and whose rule has stopped measures nothing, so refuses nothing:
        Snakemake runs such jobs again when an input's path changes, e.g. a new guest image)."""
        if not checked:
            require_same_image(variant, data_dir)
            require_same_machine(variant, config, data_dir, owner_pid, host)
            checked.append(True)

    with reused_connections():
        return _measure_runs(variant, todo, where, config, data_dir, owner_pid, reps, host, before_measuring)


def require_same_image(variant: VariantPlan, data_dir: str | Path) -> None:
    """Refuse, before anything runs, to measure ``variant`` of a guest platform in another guest image
    than the complete guest runs of its benchmark already in the data (any guest platform, any
    variant): the containers and VMs of one comparison run one image, and a rebuild of the same
    recipe (Debian's archive may have moved on) counts as another image."""
    wanted = image_record(variant.platform)
    if wanted is None:
        return
    found = machines.other_images(wanted, data_dir, variant.testbed, variant.benchmark)
    if not found:
        return
    path, other = found[0]
    directory = datalayout.testbed_dir(data_dir, variant.testbed)

    def name(record: dict) -> str:
        return record["recipe"] + (f" (image.json sha256 {record['record_sha256'][:12]})" if record.get("record_sha256") else "")

    raise MeasurementError(
        f"{variant.benchmark} on testbed {variant.testbed}: {len(found)} of its complete guest runs in {directory} "
        f"ran in guest image {name(other)} (for example {path}), this one would run in {name(wanted)}. "
        f"A benchmark's containers and VMs are compared in one image only: measure it with the image its runs "
        f"used (the commit they name), or move that benchmark's logs out of {directory} (git keeps them) and "
        f"measure it again, or measure into another data_dir.")


def require_same_machine(variant: VariantPlan, config: dict, data_dir: str | Path, owner_pid: int | None = None,
                         host: str | None = None) -> None:
    """Refuse, before anything runs, to measure ``variant`` on another machine than the complete runs
    of its benchmark already in the data (any platform, any variant: :mod:`virtrepro.machines`): a
    platform's difference from native must not be a difference between machines."""
    runs = machines.recorded(data_dir, variant.testbed, variant.benchmark)
    if not runs:
        return
    measuring = testbed_from_config(variant.testbed, config).up(owner_pid=owner_pid, host=host)
    with ExitStack() as stack:
        here = machines.identity({"host": host_facts(open_connection(stack, measuring))})
    found = machines.conflicts(here, runs)
    if not found:
        return
    path, other, facts = found[0]
    directory = datalayout.testbed_dir(data_dir, variant.testbed)
    raise MeasurementError(
        f"{variant.benchmark} on testbed {variant.testbed}: {len(found)} of its {len(runs)} complete runs in "
        f"{directory} were measured on another machine ({', '.join(facts)} differ; for example {path}: "
        f"{machines.describe(other)}) than this one ({machines.describe(here)}). A benchmark's platforms are "
        f"compared on one machine only: move that benchmark's logs out of {directory} (git keeps them) and "
        f"measure it again here, or measure into another data_dir.")


def _measure_runs(variant: VariantPlan, todo: list[Run], where: str, config: dict, data_dir: str | Path,
                  owner_pid: int | None, reps: list[int] | None, host: str | None = None,
                  before_measuring=lambda: None) -> Path | None:
    failures = []
    if todo:
        before_measuring()
    for number, run in enumerate(todo, 1):
        print(f"[{number}/{len(todo)}] {where} rep {run.repetition}", file=sys.stderr, flush=True)
        try:
            measure(run, config, data_dir, owner_pid=owner_pid, host_name=host)
        except (MeasurementError, rawlog.RawLogExists) as error:
            failures.append(f"rep {run.repetition}: {error}")
        except TestbedError as error:  # the host cannot be reached: the other repetitions cannot either
            raise MeasurementError(f"{where}: rep {run.repetition}: {error}") from None
    if failures:
        raise MeasurementError(f"{where}: {len(failures)} of {len(todo)} repetitions failed:\n  "
                               + "\n  ".join(failures))
    if reps is not None:
        return None
    decision = continue_by_rule(variant, config, data_dir, owner_pid, host, before_measuring) if variant.continues else None
    return write_marker(variant, data_dir, decision)


def continue_by_rule(variant: VariantPlan, config: dict, data_dir: str | Path, owner_pid: int | None = None,
                     host: str | None = None, before_measuring=lambda: None):
    """The last part of a variant with a repetition rule (:mod:`virtrepro.adaptive`): decide on
    every complete log of the variant (rep-0, rep-1, ... up to the first missing one) and measure
    the next repetition until the rule stops; return its decision. A resumed job continues from
    the logs that are there (a complete log is never measured again). Every repetition below the
    minimum must be complete first (the first part's too). ``before_measuring`` is called before each
    repetition it adds (the comparison's guards, which run once)."""
    where = f"{variant.testbed}/{variant.platform}/{variant.benchmark}/{variant.variant.key}"
    while True:
        logs = variant_records(variant, data_dir)
        try:
            decision = adaptive.decide(variant.rule, logs)
        except ValueError as error:
            raise MeasurementError(f"{where}: {error}") from None
        print(f"{where}: {decision.n} repetitions, widest relative half-width "
              f"{decision.rel_half_width:.4g} (target {_targets_text(variant.rule)}): {decision.reason}",
              file=sys.stderr, flush=True)
        if decision.stop:
            return decision
        before_measuring()
        measure(variant.run(decision.n), config, data_dir, owner_pid=owner_pid, host_name=host)


def _targets_text(rule) -> str:
    """The rule's targets in the progress line: ``0.03`` or ``latency 0.0177, else 0.03 (log)``."""
    if rule.interval == adaptive.T_INTERVAL:
        return f"{rule.rel_half_width:g}"
    return ", ".join([*(f"{t.metric} {t.half_width:.3g}" for t in rule.targets), f"else {rule.rel_half_width:g}"]) + " (log)"


def variant_records(variant: VariantPlan, data_dir: str | Path) -> list[list[dict]]:
    """The parsed records of each complete log rep-0, rep-1, ... of a variant, up to the first
    missing one, by the benchmark's own parser (as the table parses them); MeasurementError if
    a repetition below the rule's minimum is missing."""
    benchmark = BENCHMARKS[variant.benchmark]
    logs = []
    for repetition in range(variant.rule.max if variant.rule else variant.repetitions):
        log = variant.run(repetition).log_path(data_dir)
        if not is_complete(log):
            if repetition < variant.repetitions:
                raise MeasurementError(f"{log}: missing; repetitions beyond the minimum are decided on "
                                       f"complete logs of all {variant.repetitions} first")
            break
        sidecar = rawlog.complete_sidecar(log)
        try:
            logs.append(benchmark.parse(rawlog.read_log(log), str(log), sidecar["parameters"]))
        except ParseError as error:
            raise MeasurementError(str(error)) from None
    return logs


def write_marker(variant: VariantPlan, data_dir: str | Path, decision=None) -> Path:
    """Record that all repetitions of one part of ``variant`` are complete (written after the
    part's last log, so that it is newer than the variant's directory; a log deleted later makes
    the directory newer and Snakemake re-runs the variant's jobs, which measure just that log).

    The parts of a variant share its directory: a part's logs make the directory newer than the
    other part's marker, so that marker is checked again here (its logs still complete, with the
    checksums it lists) and its time renewed; without that a second run would re-run the other
    part's job for nothing.

    A continuing part (a repetition rule) lists its repetitions beyond the minimum too, and the
    rule's ``decision``: n, the widest relative half-width and why it stopped."""
    marker = variant.marker_path(data_dir)
    logs = _complete_logs(variant, data_dir, marker)
    for stale in datalayout.markers_of(variant.directory(data_dir)):
        if not datalayout.is_marker_of(stale, variant.directory(data_dir), variant.reps_label):
            stale.unlink()  # the marker of another repetition count or rule (or of the layout before parts)
    if variant.continues or variant.rule is None:
        write_rule_record(variant, data_dir, decision)
    rawlog.write_json(marker, {
        "testbed": variant.testbed,
        "platform": variant.platform,
        "benchmark": variant.benchmark,
        "variant": variant.variant.key,
        "repetitions": variant.repetitions,
        "part": variant.part,
        "parts": variant.parts,
        "logs_sha256": logs,
        **({"repetition_rule": decision.as_dict(variant.rule)} if decision is not None else {}),
        "written_utc": utc_now(),
    })
    for part in range(1, variant.parts + 1):
        sibling = dataclasses.replace(variant, part=part)
        path = sibling.marker_path(data_dir)
        if part == variant.part or not path.exists():
            continue
        try:
            recorded = json.loads(path.read_text()).get("logs_sha256")
            if recorded == _complete_logs(sibling, data_dir, path):
                os.utime(path)
        except (OSError, ValueError, MeasurementError):
            pass  # left older than the directory: its job runs again and checks it
    return marker


def write_rule_record(variant: VariantPlan, data_dir: str | Path, decision=None) -> Path | None:
    """Keep the rule that decided a variant beside its logs when their sidecars do not say it: a rule
    given to a variant measured at a fixed count whose logs already meet it measures nothing, and
    the table's stopping facts (:func:`results.recorded_rule`) come from the raw data alone. Removed
    again when the variant has no rule (a fixed count), or its latest log's sidecar names the rule."""
    path = datalayout.rule_record_path(variant.directory(data_dir))
    latest = variant.run(decision.n - 1).log_path(data_dir) if decision is not None and decision.n else None
    said = latest is not None and (rawlog.complete_sidecar(latest) or {}).get("repetition_rule") is not None
    if decision is None or said:
        path.unlink(missing_ok=True)
        return None
    rawlog.write_json(path, {"testbed": variant.testbed, "platform": variant.platform,
                             "benchmark": variant.benchmark, "variant": variant.variant.key,
                             "repetition_rule": variant.rule.as_dict()})
    return path


def _complete_logs(variant: VariantPlan, data_dir: str | Path, marker: Path) -> dict[str, str]:
    """The part's logs and their sha256: its own repetitions, and for a continuing part every
    complete one beyond the minimum that follows them without a gap."""
    logs = {}
    for run in variant.runs():
        log = run.log_path(data_dir)
        if not is_complete(log):
            raise MeasurementError(f"{log}: not complete; the marker {marker.name} is not written")
        logs[log.name] = _sha256(str(log))
    for repetition in range(variant.repetitions, variant.rule.max) if variant.continues else ():
        log = variant.run(repetition).log_path(data_dir)
        if not is_complete(log):
            break
        logs[log.name] = _sha256(str(log))
    return logs


def run_order(config: dict, run: Run) -> dict:
    """Where the run stands in the workflow's order of (platform, part), A B C D D C B A."""
    platforms = [run.platform if p == QEMU_AUTO and run.platform.startswith("qemu-") else p
                 for p in config.get("platforms", [run.platform])]
    sequence = run_sequence(platforms)
    slot = sequence.index((run.platform, run.part)) if (run.platform, run.part) in sequence else None
    return {"part": run.part, "parts": run.parts,
            "sequence": [f"{platform}:{part}" for platform, part in sequence], "slot": slot}


def _config_file(path: str) -> dict:
    """The configuration of ``--config-file`` (validated unless it is the one the workflow validated)."""
    from .config import config_from_json

    try:
        text = Path(path).read_text()
    except OSError as error:
        raise MeasurementError(f"--config-file {path}: {error.strerror or error}") from None
    return config_from_json(text, f"--config-file {path}")


def _measure_entry(args, config: dict) -> int:
    """Measure the job's plan entry (``--plan-entry``): the variant part the workflow planned, on the
    host it chose, without planning the configuration again."""
    try:
        entry = json.loads(args.plan_entry)
    except ValueError as error:
        raise MeasurementError(f"--plan-entry: not JSON ({error})") from None
    if not isinstance(entry, dict):
        raise MeasurementError("--plan-entry: not a JSON object")
    variant = VariantPlan.from_json(entry.get("variant_plan"))
    if args.expect_marker and Path(args.expect_marker) != variant.marker_path(args.data_dir):
        print(f"error: the plan entry has the marker {variant.marker_path(args.data_dir)}, "
              f"not the expected {args.expect_marker}", file=sys.stderr)
        return 2
    require_clean_tree(config, variant.testbed)
    owner = os.environ.get("VIRTREPRO_TESTBED_OWNER")
    measure_variant(variant, config, args.data_dir, owner_pid=int(owner) if owner else None, host=entry.get("host"))
    return 0


def plan_entry(variant: VariantPlan, host: str | None) -> str:
    """A measurement job's ``--plan-entry`` (:func:`_measure_entry` reads it)."""
    return json.dumps({"variant_plan": variant.to_json(), "host": host}, sort_keys=True)


def main(argv: list[str] | None = None) -> int:
    """Command line of one measurement job (what the Snakemake rule runs): every missing
    repetition of one benchmark variant on one platform."""
    import argparse

    from .cli import count
    from .config import given_config, plan_variants

    parser = argparse.ArgumentParser(prog="python -m virtrepro.measure", description=main.__doc__)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--plan-entry", help="the job's plan entry as the workflow planned it (JSON: its variant, "
                                             "platform, part and host); with --config-file, no other option is needed")
    parser.add_argument("--config-file", help="configuration as a JSON file (the workflow writes it)")
    parser.add_argument("--testbed")
    parser.add_argument("--platform")
    parser.add_argument("--benchmark")
    parser.add_argument("--variant")
    parser.add_argument("--part", type=count(1),
                        help="measure this part of the repetitions (1 or 2: see VariantPlan) and write its marker; "
                             "default: every part, one after the other")
    parser.add_argument("--rep", type=count(0), action="append",
                        help="measure only this repetition (repeatable; no marker is written)")
    parser.add_argument("--config", help="configuration as JSON (default: $VIRTREPRO_CONFIG)")
    parser.add_argument("--expect-marker", help="the marker path the caller expects (checked against the plan)")
    parser.add_argument("--host", help="which of the testbed's hosts measures (its name; default: the first)")
    args = parser.parse_args(argv)
    config = _config_file(args.config_file) if args.config_file else given_config(args.config)
    if config is None:
        parser.error("no configuration: pass --config-file or --config, or set VIRTREPRO_CONFIG")
    if args.plan_entry is not None:
        return _measure_entry(args, config)
    missing = [f"--{name}" for name in ("testbed", "platform", "benchmark", "variant") if getattr(args, name) is None]
    if missing:
        parser.error(f"the following arguments are required without --plan-entry: {', '.join(missing)}")
    wanted = (args.testbed, args.platform, args.benchmark, args.variant)
    configured = config["platforms"]
    allowed = args.platform in configured or platform_catalog.alias_of(args.platform) in configured
    matches = [v for v in plan_variants(config, [args.platform] if allowed else [])
               if (v.testbed, v.platform, v.benchmark, v.variant.key) == wanted]
    if not matches:
        print(f"error: the configuration plans no run {'/'.join(wanted)}", file=sys.stderr)
        return 2
    possible = {rep for v in matches for rep in v.possible_numbers()}
    if args.rep and not set(args.rep) <= possible:
        print(f"error: {'/'.join(wanted)} has repetitions 0..{max(possible)}, not {args.rep}", file=sys.stderr)
        return 2
    if args.part is not None:
        matches = [v for v in matches if v.part == args.part]
        if not matches:
            print(f"error: {'/'.join(wanted)} has no part {args.part}", file=sys.stderr)
            return 2
    if args.expect_marker and Path(args.expect_marker) not in {v.marker_path(args.data_dir) for v in matches}:
        print(f"error: {'/'.join(wanted)} has the marker {matches[0].marker_path(args.data_dir)}, "
              f"not the expected {args.expect_marker}", file=sys.stderr)
        return 2
    require_clean_tree(config, args.testbed)
    owner = os.environ.get("VIRTREPRO_TESTBED_OWNER")
    for variant in matches:
        reps = [rep for rep in args.rep if rep in variant.possible_numbers()] if args.rep else None
        if reps == []:
            continue
        measure_variant(variant, config, args.data_dir, owner_pid=int(owner) if owner else None, reps=reps,
                        host=args.host)
    return 0


if __name__ == "__main__":
    from .cli import run as run_cli  # not "run": a module may have a function of that name

    run_cli(main)
