"""How much does running a benchmark through the workflow's SSH runner cost?

Runs the same short sysbench command N times directly (subprocess on this
machine) and N times through the SSH runner on the embedded local testbed
(the code path every measurement job uses), and prints the median wall time
per run, the fixed cost per run (median difference) and the ratio.

    .venv/bin/python bench/harness_overhead.py [--runs 10] [--events 2000]
"""

from __future__ import annotations

import argparse
import io
import statistics
import subprocess
import tempfile
import time

from virtrepro.measure import ensure_tools, host_facts, run_command
from virtrepro.benchmarks import BENCHMARKS
from virtrepro.testbed import LocalTestbed, connect


def timed(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--events", type=int, default=2000, help="sysbench cpu events per run (fixed work)")
    args = parser.parse_args()
    command = f"sysbench cpu --cpu-max-prime=2000 --threads=1 --events={args.events} --time=0 run"

    direct = [timed(lambda: subprocess.run(["sh", "-c", command], capture_output=True, check=True)) for _ in range(args.runs)]

    with tempfile.TemporaryDirectory() as state:
        testbed = LocalTestbed("bench-overhead", state)
        host = testbed.up()
        try:
            with connect(host) as connection:
                connection.run("true", hide=True, in_stream=False)  # connection set up outside the timing
                over_ssh = [timed(lambda: run_command(connection, command, io.StringIO(), 600)) for _ in range(args.runs)]

            def whole_job_path():
                # what one measurement job adds: a new connection, host facts, tool check, the run
                with connect(host) as connection:
                    host_facts(connection)
                    ensure_tools(connection, BENCHMARKS["sysbench_cpu"], host)
                    run_command(connection, command, io.StringIO(), 600)

            per_job = [timed(whole_job_path) for _ in range(args.runs)]
        finally:
            testbed.down()

    base = statistics.median(direct)
    print(f"command: {command}  ({args.runs} runs each)")
    print(f"{'path':<34}{'median s':>10}{'fixed cost s':>14}{'ratio':>8}")
    for name, times in [("direct (subprocess)", direct), ("SSH runner, open connection", over_ssh), ("SSH, full job path", per_job)]:
        median = statistics.median(times)
        print(f"{name:<34}{median:>10.4f}{median - base:>14.4f}{median / base:>8.2f}")


if __name__ == "__main__":
    main()
