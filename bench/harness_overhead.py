"""How much does running a benchmark through the workflow's SSH runner cost?

Runs the same short sysbench command N times each way on the embedded local testbed and
prints the median wall time per run and the fixed cost per run (median minus the direct
run's median):

- directly (subprocess on this machine): the floor;
- OpenSSH's client, a new connection per run, and over a ControlMaster connection (the
  user's ssh config is not read; the remote login shell runs for every command);
- the workflow's path over an open connection (``run_command``: the connection's runner);
- a measurement job's whole path: a new connection, host facts, the tool check, the run.

    .venv/bin/python bench/harness_overhead.py [--runs 20] [--events 2000]
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from virtrepro.benchmarks import BENCHMARKS
from virtrepro.measurement.instance import ensure_tools, host_facts, run_command
from virtrepro.testbed.kinds import LocalTestbed
from virtrepro.testbed.hosts import connect

# the targets of the issue "Harness overhead near the physical limit"
TARGET_COMMAND_S = 0.010
TARGET_JOB_S = 0.050


def timed(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def openssh(host, control: Path | None = None) -> list[str]:
    argv = ["ssh", "-F", "/dev/null", "-i", str(host.identity), "-p", str(host.port), "-o", "IdentitiesOnly=yes",
            "-o", "BatchMode=yes", "-o", f"UserKnownHostsFile={host.known_hosts}", "-o", "LogLevel=ERROR"]
    if control is not None:
        argv += ["-o", "ControlMaster=auto", "-o", f"ControlPath={control}", "-o", "ControlPersist=60"]
    return argv + [f"{host.user}@{host.hostname}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--events", type=int, default=2000, help="sysbench cpu events per run (fixed work)")
    args = parser.parse_args()
    command = f"sysbench cpu --cpu-max-prime=2000 --threads=1 --events={args.events} --time=0 run"

    def repeat(function) -> list[float]:
        return [timed(function) for _ in range(args.runs)]

    rows = [("direct (subprocess)", repeat(lambda: subprocess.run(["sh", "-c", command], capture_output=True, check=True)))]
    with tempfile.TemporaryDirectory() as state:
        testbed = LocalTestbed("bench-overhead", state)
        host = testbed.up()
        control = Path(state) / "control"
        try:
            ssh = openssh(host)
            rows.append(("OpenSSH, new connection", repeat(lambda: subprocess.run([*ssh, command], capture_output=True,
                                                                                    check=True))))
            master = openssh(host, control)
            subprocess.run([*master, "true"], capture_output=True, check=True)  # the master, outside the timing
            rows.append(("OpenSSH, ControlMaster", repeat(lambda: subprocess.run([*master, command], capture_output=True,
                                                                                   check=True))))
            subprocess.run([*master[:-1], "-O", "exit", master[-1]], capture_output=True)
            with connect(host) as connection:
                connection.run("true", hide=True, in_stream=False)  # connection and runner set up outside the timing
                rows.append(("runner, open connection", repeat(lambda: run_command(connection, command, io.StringIO(), 600))))

            def whole_job_path():
                # what one measurement job adds: a new connection, host facts, tool check, the run
                with connect(host) as connection:
                    host_facts(connection)
                    ensure_tools(connection, BENCHMARKS["sysbench_cpu"], host)
                    run_command(connection, command, io.StringIO(), 600)

            rows.append(("runner, whole job path", repeat(whole_job_path)))
        finally:
            testbed.down()

    base = statistics.median(rows[0][1])
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"command: {command}  ({args.runs} runs each, medians; load average {load})")
    print(f"{'path':<28}{'median s':>10}{'fixed cost s':>14}{'ratio':>8}")
    for name, times in rows:
        median = statistics.median(times)
        print(f"{name:<28}{median:>10.4f}{median - base:>14.4f}{median / base:>8.2f}")
    per_command = statistics.median(rows[3][1]) - base
    per_job = statistics.median(rows[4][1]) - base
    print(f"fixed cost per command {per_command * 1000:.1f} ms (target <= {TARGET_COMMAND_S * 1000:.0f} ms), "
          f"per job {per_job * 1000:.1f} ms (target <= {TARGET_JOB_S * 1000:.0f} ms)")


if __name__ == "__main__":
    main()
