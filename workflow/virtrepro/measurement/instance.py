"""What the measurement asks of an instance before and while a benchmark runs: its facts, its
scratch file system, its page cache, the benchmark's tool (installed if missing) and the command."""

from __future__ import annotations

import json
import os
import shlex
import time
from contextlib import ExitStack
from pathlib import Path

from ..rawdata import machines
from ..benchmarks import Benchmark
from ..testbed.hostagent import install_command
from ..testbed.hosts import Host, default_state_dir
from .connections import instance_key, open_connection
from .provenance import MeasurementError


class BootFacts:
    """What one boot of a VM answered, kept for the jobs after the first: its facts, the benchmarks'
    tool versions and package versions, in ``<state>/facts/<boot id>.json``. A job is a process of its
    own and its connections are new, so each job asked them again: about a second a job in a TCG
    guest, which the default run's 40-odd jobs repeat. The boot id (the kernel's, random per boot)
    names that boot alone: a VM rebooted or of another spec has another. Not for containers, which
    share the host's boot id while their limits change from one job to the next."""

    def __init__(self, boot: str):
        self.boot = boot
        self.path = default_state_dir() / "facts" / f"{boot}.json"
        try:
            self.data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            self.data = {}

    def get(self, kind: str, key: str):
        return self.data.get(kind, {}).get(key)

    def put(self, kind: str, key: str, value) -> None:
        self.data.setdefault(kind, {})[key] = value
        if not self.path.parent.is_dir():
            self.path.parent.mkdir(parents=True, exist_ok=True)
        elif not self.path.exists():  # a new boot: the records of boots over a week old go
            for old in self.path.parent.iterdir():
                try:
                    if time.time() - old.stat().st_mtime > 7 * 86400:
                        old.unlink()
                except OSError:
                    pass
        partial = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        partial.write_text(json.dumps(self.data, sort_keys=True))
        partial.replace(self.path)


def boot_facts(connection) -> BootFacts:
    """The :class:`BootFacts` of the VM at the other end of ``connection`` (its boot id read once per
    connection)."""
    found = getattr(connection, "virtrepro_boot", None)
    if found is None:
        boot = connection.run("cat /proc/sys/kernel/random/boot_id", hide=True, in_stream=False).stdout.strip()
        if not boot or "/" in boot:
            raise MeasurementError(f"the instance gave no boot id: {boot!r}")
        found = BootFacts(boot)
        try:
            connection.virtrepro_boot = found
        except AttributeError:  # an object that takes no attributes: read every time
            pass
    return found


def package_versions(connection, packages, boot: BootFacts | None = None) -> dict:
    """The installed versions of Debian ``packages`` where ``connection`` leads (dpkg-query -W;
    asked once per connection, and once per ``boot`` of a VM)."""
    if not packages:
        return {}
    if boot is not None and (kept := boot.get("packages", " ".join(packages))) is not None:
        return dict(kept)
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
    if boot is not None:
        boot.put("packages", " ".join(packages), asked[tuple(packages)])
    return dict(asked[tuple(packages)])



def host_facts(connection, boot: BootFacts | None = None) -> dict:
    """Facts about the machine at the other end of ``connection`` (one round trip, cached per
    connection, and per ``boot`` of a VM; a cached answer gets the load average read again: it
    changes between repetitions)."""
    known = getattr(connection, "facts", None)
    if known is None and boot is not None:
        known = boot.get("host", "facts")
        if known is not None and hasattr(connection, "facts"):
            connection.facts = dict(known)
    if known is not None:
        facts = dict(known)
        load = connection.run("cat /proc/loadavg", hide=True, warn=True, in_stream=False).stdout.split()
        facts["loadavg"] = " ".join(load[:3])
        return facts
    facts = machines.parse_facts(connection.run(machines.HOST_FACTS_COMMAND, hide=True, warn=True, in_stream=False).stdout)
    if hasattr(connection, "facts"):
        connection.facts = dict(facts)
    if boot is not None:
        boot.put("host", "facts", dict(facts))
    return facts



def scratch_fs(connection, directory: str) -> dict:
    """The file system ``directory`` is on, as the instance sees it (type, source, mount options)."""
    found = connection.run(f"findmnt -no FSTYPE,SOURCE,OPTIONS -T {shlex.quote(directory)}", hide=True, warn=True,
                           in_stream=False).stdout.split()
    if len(found) != 3:
        return {"directory": directory, "error": "findmnt gave no answer"}
    return {"directory": directory, "fstype": found[0], "source": found[1], "options": found[2]}



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
_TOOLS_PRESENT: dict[tuple, str | None] = {}



def ensure_tools(connection, benchmark: Benchmark, host: Host, boot: BootFacts | None = None) -> str:
    """Make sure the benchmark's tool is on the host; install its Debian packages if not.

    Returns the tool's version string. The check and the version are one round trip, once per
    instance and benchmark in a process (:data:`_TOOLS_PRESENT`), and once per ``boot`` of a VM.
    """
    key = (instance_key(host), benchmark.name)
    if key not in _TOOLS_PRESENT and boot is not None:
        _TOOLS_PRESENT[key] = boot.get("tools", benchmark.name)
    if _TOOLS_PRESENT.get(key) is None:
        _TOOLS_PRESENT[key] = _ensure_tools(connection, benchmark, host)
        if boot is not None:
            boot.put("tools", benchmark.name, _TOOLS_PRESENT[key])
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



def status_meaning(status: int) -> str:
    """What a shell's exit status above 128 says: the signal that ended the command."""
    if status == 137:
        return ": killed (SIGKILL: the out-of-memory killer when a run needs more memory than it may have, or a time limit)"
    if status == 124:
        return ": stopped by its time limit"
    if 128 < status < 160:
        return f": ended by signal {status - 128}"
    return ""
