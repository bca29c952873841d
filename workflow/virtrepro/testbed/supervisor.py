"""Own a long-running process (an sshd, a VM, a container) on behalf of another process.

    python -m virtrepro.testbed.supervisor --owner PID --pid-file FILE [--spec FILE] -- COMMAND...

Starts COMMAND in its own session and keeps it running until the owner process
exits, the supervisor gets SIGTERM/SIGINT, or COMMAND exits by itself. Then it
runs the spec's ``stop`` commands (graceful shutdown), terminates COMMAND's
whole process group, and runs the spec's ``cleanup`` commands (remove
containers, network devices, directories). So whatever happens to the owner (a
Snakemake run that finishes, fails or is killed), nothing is left behind.

The spec file is JSON: ``{"stop": [[argv...], ...], "cleanup": [[argv...], ...]}``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from ..cli import count


def pid_alive(pid: int) -> bool:
    """True if ``pid`` runs and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def _run_all(commands: list[list[str]], timeout: float) -> None:
    for argv in commands:
        try:
            subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
        except (OSError, subprocess.SubprocessError) as error:
            print(f"supervisor: {argv[0]}: {error}", file=sys.stderr)


def supervise(command: list[str], owner: int, pid_file: str, spec: dict) -> int:
    child = subprocess.Popen(command, stdin=subprocess.DEVNULL, start_new_session=True)
    stopping = False

    def stop(*_):
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        while not stopping and child.poll() is None and pid_alive(owner):
            time.sleep(0.2)
    finally:
        if child.poll() is None:
            _run_all(spec.get("stop", []), timeout=60)
        if child.poll() is None:
            try:
                os.killpg(child.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                child.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()
        _run_all(spec.get("cleanup", []), timeout=120)
        try:
            if int(Path(pid_file).read_text()) == os.getpid():
                Path(pid_file).unlink()
        except (OSError, ValueError):
            pass
    return 0


def start(command: list[str], owner: int, pid_file: Path, log_file: Path, spec: dict | None = None) -> subprocess.Popen:
    """Start a supervisor for ``command`` in the background; return its Popen."""
    spec_file = Path(pid_file).with_suffix(".spec.json")
    spec_file.write_text(json.dumps(spec or {}))
    log = open(log_file, "ab")
    process = subprocess.Popen(
        [sys.executable, "-m", "virtrepro.testbed.supervisor", "--owner", str(owner), "--pid-file", str(pid_file),
         "--spec", str(spec_file), "--", *command],
        stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    Path(pid_file).write_text(str(process.pid))
    return process


# how often stop() looks whether the supervisor is gone: the resolution of a timed stop (the lifecycle's destroy)
STOP_POLL_S = 0.01


def stop(pid_file: Path, timeout: float = 120) -> None:
    """Ask the supervisor behind ``pid_file`` to stop and wait until it is gone."""
    try:
        pid = int(Path(pid_file).read_text())
    except (OSError, ValueError):
        return
    if pid_alive(pid):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(STOP_POLL_S)
        if pid_alive(pid):
            os.kill(pid, signal.SIGKILL)
    Path(pid_file).unlink(missing_ok=True)


def running(pid_file: Path) -> bool:
    try:
        return pid_alive(int(Path(pid_file).read_text()))
    except (OSError, ValueError):
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtrepro.testbed.supervisor", description=__doc__.splitlines()[0])
    parser.add_argument("--owner", type=count(1), required=True, help="the process id whose end ends the command")
    parser.add_argument("--pid-file", required=True)
    parser.add_argument("--spec")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    spec = json.loads(Path(args.spec).read_text()) if args.spec else {}
    return supervise(command, args.owner, args.pid_file, spec)


if __name__ == "__main__":
    sys.exit(main())
