"""Does a testbed of several hosts measure on all of them at once, and never two things on one host?

Makes 4 hosts on this machine (network, UTS and mount namespaces, each with its own sshd and state
directory: the hosts of the remote-testbed tests, ``tests/remotehost.py``) and runs the same plan
through the workflow (Snakemake, real SSH) on a testbed of 1, 2 and 4 of them. For each it prints
the wall time of the measurement jobs and, from the raw logs' sidecars, how many repetitions each
host measured and the overlap of measurements per host (seconds during which two ran on one host:
must be 0). Needs root. All hosts share this machine's CPUs: on a 2-core machine, more than two
hosts cannot make CPU-bound runs faster, so the plan mixes CPU, memory and disk runs.

    PYTHONPATH=workflow .venv/bin/python bench/parallel_hosts.py [--hosts 1 2 4]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from remotehost import RemoteHost  # noqa: E402  (tests/remotehost.py: the namespace host)

TESTBED = "bench-hosts"
# the plan: quick-scale runs of one second, on the hosts themselves (native), 2 repetitions each
PLAN = {
    "sysbench_cpu": {"repetitions": 2, "threads": [1, "all"], "cpu_max_prime": 20000, "seconds": 1},
    "sysbench_memory": {"repetitions": 2, "operations": ["read", "write"], "block_sizes": ["4K", "1M"], "threads": [1],
                        "total_size": "10G", "seconds": 1},
    "fio": {"repetitions": 2, "modes": ["read", "write", "randread", "randwrite"], "seq_block_size": "1m",
            "rand_block_size": "4k", "file_size": "64m", "seconds": 1, "direct": True},
    "ioping": {"repetitions": 2, "count": 10, "interval": "100ms", "direct": False},
}


def parse_utc(text: str) -> float:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def overlaps(data: Path) -> dict[str, tuple[int, float]]:
    """Per host: (repetitions measured, seconds during which two of its measurements overlapped)."""
    spans = defaultdict(list)
    for sidecar in (data / "raw" / TESTBED).glob("*/*/*/rep-*.json"):
        record = json.loads(sidecar.read_text())
        if record.get("status") == "complete":
            spans[record["host_name"]].append((parse_utc(record["started_utc"]), parse_utc(record["ended_utc"])))
    found = {}
    for host, intervals in spans.items():
        intervals.sort()
        overlap, end = 0.0, intervals[0][1]
        for start, stop in intervals[1:]:
            overlap += max(0.0, min(end, stop) - start)
            end = max(end, stop)
        found[host] = (len(intervals), overlap)
    return found


def run(hosts: list[RemoteHost], work: Path) -> tuple[float, dict]:
    work.mkdir(parents=True)
    known = work / "known_hosts"
    known.write_text("".join(h.known_hosts.read_text() for h in hosts))
    config = {
        "testbed": TESTBED, "platforms": ["native"], "benchmarks": list(PLAN), "notebooks": [], "scale": "quick",
        "data_dir": str(work / "data"), "figures_dir": str(work / "figures"),
        "testbeds": {TESTBED: {"kind": "ssh", "known_hosts": str(known),
                               "hosts": [{"hostname": h.address, "identity": str(h.identity), "state_dir": str(h.state_dir)}
                                         for h in hosts]}},
        "scales": {"quick": PLAN},
    }
    (work / "config.yaml").write_text(yaml.safe_dump(config))
    env = {**os.environ, "VIRTREPRO_STATE": str(work / "state")}
    for name in ("VIRTREPRO_CONFIG", "VIRTREPRO_TESTBED_OWNER", "VIRTREPRO_INVOCATION"):
        env.pop(name, None)
    snakemake = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(work),
                 "--configfile", str(work / "config.yaml"), "--cores", "4"]
    # the probes first (which platforms the hosts allow: not what is timed)
    probes = subprocess.run([*snakemake, "prepare"], capture_output=True, text=True, env=env, timeout=600)
    if probes.returncode != 0:
        raise SystemExit(f"the probes failed on {len(hosts)} hosts:\n{probes.stderr[-3000:]}")
    start = time.monotonic()
    # measurement jobs only (the table and notebooks are not what is timed)
    targets = subprocess.run([*snakemake, "measurements"], capture_output=True, text=True, env=env, timeout=1800)
    seconds = time.monotonic() - start
    if targets.returncode != 0:
        raise SystemExit(f"the workflow failed on {len(hosts)} hosts:\n{targets.stderr[-3000:]}")
    return seconds, overlaps(work / "data")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, nargs="+", default=[1, 2, 4])
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("needs root (network namespaces)")
    with tempfile.TemporaryDirectory(prefix="vr-hosts-") as tmp:
        root = Path(tmp)
        hosts = [RemoteHost(root / f"host{i}", Path(f"/var/tmp/vrb{i}"), netns=f"vrbench-{i}", subnet=f"10.250.{90 + i}",
                            hostname=f"vr-bench-{i}") for i in range(max(args.hosts))]
        try:
            for host in hosts:
                host.up()
            rows, ok = [], True
            for count in args.hosts:
                seconds, found = run(hosts[:count], root / f"run-{count}")
                rows.append((count, seconds, found))
                ok &= all(overlap == 0 for _, overlap in found.values()) and len(found) == count
            total = sum(n for n, _ in rows[0][2].values())
            print(f"plan: {total} repetitions (2 a variant) of {', '.join(PLAN)} on native; "
                  f"this machine has {os.cpu_count()} CPUs")
            for count, seconds, found in rows:
                per_host = ", ".join(f"{host.split('/')[-1]}: {n} reps, overlap {overlap:.3f} s"
                                     for host, (n, overlap) in sorted(found.items()))
                print(f"{count} host{'s' if count > 1 else ' '}: wall {seconds:6.1f} s "
                      f"(x{rows[0][1] / seconds:.2f} of one host)   {per_host}")
            print("every host used, zero overlap on every host" if ok else "OVERLAP OR AN UNUSED HOST")
            return 0 if ok else 1
        finally:
            for host in hosts:
                host.down()
            subprocess.run(["rm", "-rf"] + [str(h.state_dir) for h in hosts])


if __name__ == "__main__":
    raise SystemExit(main())
