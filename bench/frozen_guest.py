"""What a frozen guest costs: its CPU time, and a native benchmark's time beside frozen guests.

Issue 40 keeps every platform's instances up across the rounds of a variant and freezes those of
the platforms not measuring (``Platform.freeze``/``thaw``: lxc-freeze, podman pause, a freezer
cgroup for charliecloud, QMP ``stop`` for QEMU). This measures whether that is free:

(a) per platform, one instance started on the local testbed, then the CPU time its processes use
    over ``--interval`` seconds idle (running, nothing asked of it) and over as long frozen (the
    container's cpuacct cgroup; the QEMU process's utime + stime; charliecloud's freezer cgroup's
    processes). Target: frozen 0 (containers) or a small fraction of idle (QEMU's main loop keeps
    running while its vCPUs are stopped).
(b) a native CPU benchmark (``sysbench cpu``, every host CPU, a fixed number of events, its total
    time) in ``--rounds`` rounds, each measuring once with no guest at all and once with every
    platform's instance up and frozen, the order alternating per round; the paired Hodges-Lehmann
    ratio frozen / none with its exact signed-rank interval (``virtrepro.analysis.stats.hl_paired_ci``)
    and whether it includes 1. Target: it does (within noise).

    .venv/bin/python bench/frozen_guest.py [--platforms lxc podman charliecloud qemu-tcg]
        [--interval 20] [--rounds 10] [--events 4000]

Takes about 15 minutes on a 2-core machine with qemu-tcg (a boot per platform and round); look at
``uptime`` first: other load on the machine is noise in (b).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import subprocess
import tempfile
import time

from virtrepro.analysis.stats import hl_paired_ci
from virtrepro.guests import guest_run, image_dir
from virtrepro.platforms.base import get_platform
from virtrepro.testbed.kinds import LocalTestbed

TOOLS = {"lxc": "lxc-freeze", "podman": "podman", "charliecloud": "ch-run", "qemu-tcg": "qemu-system-x86_64"}
SPEC = {"qemu-tcg": {"vcpus": 2, "memory_mb": 1024}}


def load() -> str:
    return " ".join(open("/proc/loadavg").read().split()[:3])


def sysbench_seconds(events: int) -> float:
    """sysbench cpu on every host CPU for ``events`` events: its total time in seconds."""
    out = subprocess.run(["sysbench", "cpu", f"--threads={os.cpu_count()}", "--time=0", f"--events={events}",
                          "--cpu-max-prime=20000", "run"], capture_output=True, text=True, check=True).stdout
    return float(re.search(r"total time:\s+([0-9.]+)s", out).group(1))


def cpu_while(platform, seconds: float) -> float:
    before = platform.cpu_time_ns()
    time.sleep(seconds)
    return (platform.cpu_time_ns() - before) / 1e9


def frozen_cost(host, names: list[str], interval: float, settle: float) -> None:
    print(f"(a) CPU time of one instance over {interval:.0f} s, idle and frozen (load before: {load()}); 'busy 2 s':"
          " its CPU time while a loop runs in it for 2 s (the counter counts)")
    print(f"{'platform':<14}{'busy 2 s':>9}{'idle s':>9}{'idle %CPU':>11}{'frozen s':>10}{'frozen %CPU':>13}"
          f"{'freeze s':>10}{'thaw s':>8}   mechanism")
    for name in names:
        platform = get_platform(name)(host, SPEC.get(name, {}))
        with platform.instance() as endpoint:
            time.sleep(settle)  # the boot's own work done
            before = platform.cpu_time_ns()
            guest_run(endpoint, "timeout 2 sh -c 'while :; do :; done' || true", timeout=60)
            busy = (platform.cpu_time_ns() - before) / 1e9
            idle = cpu_while(platform, interval)
            platform.freeze()
            frozen = cpu_while(platform, interval)
            platform.thaw()
            record = platform.applied["freeze"]
            print(f"{name:<14}{busy:>9.3f}{idle:>9.3f}{100 * idle / interval:>11.2f}{frozen:>10.4f}"
                  f"{100 * frozen / interval:>13.3f}{record['last_freeze_s']:>10.2f}"
                  f"{record['last_thaw_to_ssh_s']:>8.2f}   {platform.freeze_mechanism}", flush=True)


def beside_frozen(host, names: list[str], rounds: int, events: int, settle: float) -> None:
    print(f"\n(b) sysbench cpu, {os.cpu_count()} threads, {events} events: no guests vs {', '.join(names)} "
          f"up and frozen (load before: {load()})")
    sysbench_seconds(events // 4)  # warm-up
    none, frozen = [], []
    print(f"{'round':>5}{'order':>16}{'none s':>9}{'frozen s':>10}{'ratio':>8}")
    for r in range(rounds):
        order = ["none", "frozen"] if r % 2 == 0 else ["frozen", "none"]
        times = {}
        for condition in order:
            if condition == "none":
                times["none"] = sysbench_seconds(events)
                continue
            with contextlib.ExitStack() as stack:
                platforms = [get_platform(name)(host, SPEC.get(name, {})) for name in names]
                for platform in platforms:
                    stack.enter_context(platform.instance())
                time.sleep(settle)
                for platform in platforms:
                    platform.freeze()
                times["frozen"] = sysbench_seconds(events)
        none.append(times["none"])
        frozen.append(times["frozen"])
        print(f"{r:>5}{'/'.join(order):>16}{times['none']:>9.3f}{times['frozen']:>10.3f}"
              f"{times['frozen'] / times['none']:>8.4f}", flush=True)
    ci = hl_paired_ci(frozen, none)
    if ci.method == "none":
        print(f"frozen / none: HL ratio {ci.estimate:.4f}, no interval ({ci.note}: more rounds needed)")
    else:
        inside = ci.low <= 1 <= ci.high
        print(f"frozen / none: HL ratio {ci.estimate:.4f}, interval [{ci.low:.4f}, {ci.high:.4f}] "
              f"({ci.method}, achieved {ci.achieved:.1%}); includes 1: "
              f"{'yes, within noise' if inside else 'no: the frozen guests cost time'}")
    print(f"load after: {load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--platforms", nargs="+", default=list(TOOLS))
    parser.add_argument("--interval", type=float, default=20.0, help="seconds of (a)'s idle and frozen intervals")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds after a start before measuring")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--events", type=int, default=4000, help="sysbench cpu events of one run of (b)")
    parser.add_argument("--skip", choices=["a", "b"], help="leave out part (a) or (b)")
    args = parser.parse_args()
    if not (image_dir() / "image.json").exists():
        raise SystemExit(f"no guest image in {image_dir()}: run the workflow once, or "
                         f"python -m virtrepro.guests.image build {image_dir()}")
    names = [name for name in args.platforms if shutil.which(TOOLS.get(name, name))]
    for name in sorted(set(args.platforms) - set(names)):
        print(f"{name}: its tool {TOOLS.get(name, name)} is missing here, left out")
    print(f"host: {os.cpu_count()} CPUs, load {load()}")
    with tempfile.TemporaryDirectory() as state:
        testbed = LocalTestbed("bench-frozen", state)
        host = testbed.up()
        try:
            if args.skip != "a":
                frozen_cost(host, names, args.interval, args.settle)
            if args.skip != "b":
                beside_frozen(host, names, args.rounds, args.events, args.settle)
        finally:
            testbed.down()


if __name__ == "__main__":
    main()
