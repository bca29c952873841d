"""The harness's own CPU use while a benchmark runs (the orchestrator, this process, the SSH servers
and runners), recorded in each sidecar."""

from __future__ import annotations

import os
from pathlib import Path


def owner_from_environment() -> int | None:
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
