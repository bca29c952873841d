"""How long does the default run take, and where does the time go?

Two modes:

    .venv/bin/python bench/default_run_time.py --fresh-clone [-- SNAKEMAKE ARGS]
        clones this repository's committed HEAD into a temporary directory, runs
        `bash scripts/reproduce.sh` there (set-up, image, probes, every measurement, table,
        notebooks) and prints its wall time, then the breakdown below. Takes the run's time.

    .venv/bin/python bench/default_run_time.py LOG [LOG ...]
        prints the breakdown of finished runs from their Snakemake logs
        (.snakemake/log/*.snakemake.log, or the captured output of scripts/reproduce.sh).

The breakdown: per rule kind and per platform, the jobs' wall time, and for measurement jobs
how much of it the benchmarks themselves ran ("done in X s" lines) and how much went to the
harness (job start, connections, guest boots, peer servers).
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
START = re.compile(r"^(?:local)?rule (\w+):$")
FINISHED = re.compile(r"^Finished jobid: (\d+) \(Rule: (\w+)\)$")
JOBID = re.compile(r"^\s+jobid: (\d+)$")
WILDCARDS = re.compile(r"^\s+wildcards: .*\bbenchmark=([\w-]+)")
DONE = re.compile(r"done in ([0-9.]+) s: ")


def _stamp(text: str) -> datetime.datetime:
    return datetime.datetime.strptime(text, "%a %b %d %H:%M:%S %Y")


def breakdown(lines: list[str]) -> dict:
    """Per (rule kind, platform): jobs, wall seconds, benchmark seconds; and the log's first and last stamp.

    Measurement jobs run one at a time, so the "done in" lines between a measurement job's
    start and its end belong to it."""
    now = first = last = None
    started: dict[str, tuple[datetime.datetime, str, str]] = {}
    pending: tuple[datetime.datetime, str] | None = None
    running_measure: str | None = None
    bench: dict[str, float] = collections.defaultdict(float)
    totals: dict[tuple[str, str], list[float]] = collections.defaultdict(lambda: [0, 0.0, 0.0])
    per_benchmark: dict[tuple[str, str], list[float]] = collections.defaultdict(lambda: [0, 0.0, 0.0])
    benchmark_of: dict[str, str] = {}
    for line in lines:
        if match := STAMP.match(line.strip()):
            now = _stamp(match.group(1))
            first = first or now
            last = now
        elif (match := START.match(line.strip())) and now is not None:
            pending = (now, match.group(1))
        elif (match := JOBID.match(line)) and pending is not None:
            # measure: one variant on all its platforms, in rounds ("all"); before rounds measure_<platform>
            # (qemu_tcg: qemu-tcg)
            measuring = pending[1] == "measure" or pending[1].startswith("measure_")
            platform = ("all" if pending[1] == "measure" else pending[1].removeprefix("measure_").replace("_", "-")
                        ) if measuring else ""
            started[match.group(1)] = (pending[0], pending[1], platform)
            if measuring:
                running_measure = match.group(1)
            pending = None
        elif (match := WILDCARDS.match(line)) and running_measure is not None:
            benchmark_of.setdefault(running_measure, match.group(1))
        elif (match := DONE.search(line)) and running_measure is not None:
            bench[running_measure] += float(match.group(1))
        elif (match := FINISHED.match(line.strip())) and now is not None:
            jobid = match.group(1)
            if jobid in started:
                when, rule, platform = started.pop(jobid)
                kind = ("measure" if rule == "measure" or rule.startswith("measure_")
                        else rule.split("_")[0] if rule.startswith("notebook_") else rule)
                entry = totals[(kind, platform if kind == "measure" else "")]
                entry[0] += 1
                entry[1] += (now - when).total_seconds()
                entry[2] += bench.get(jobid, 0.0)
                if kind == "measure":
                    item = per_benchmark[(platform, benchmark_of.pop(jobid, "?"))]
                    item[0] += 1
                    item[1] += (now - when).total_seconds()
                    item[2] += bench.get(jobid, 0.0)
                bench.pop(jobid, None)
                if jobid == running_measure:
                    running_measure = None
    return {"totals": dict(totals), "per_benchmark": dict(per_benchmark), "first": first, "last": last}


def report(result: dict, top: int = 15) -> str:
    rows = [f"{'rule':<14} {'platform':<10} {'jobs':>5} {'wall min':>9} {'bench min':>10} {'harness min':>12}"]
    for (kind, platform), (jobs, wall, bench) in sorted(result["totals"].items(), key=lambda item: -item[1][1]):
        harness = f"{(wall - bench) / 60:12.1f}" if kind == "measure" else f"{'':>12}"
        benchmark = f"{bench / 60:10.1f}" if kind == "measure" else f"{'':>10}"
        rows.append(f"{kind:<14} {platform:<10} {jobs:5d} {wall / 60:9.1f} {benchmark} {harness}")
    heavy = sorted(result.get("per_benchmark", {}).items(), key=lambda item: -item[1][1])[:top]
    if heavy:
        rows.append(f"\nthe {len(heavy)} heaviest (platform, benchmark) pairs of measurement jobs:")
        rows.append(f"{'platform':<10} {'benchmark':<16} {'jobs':>5} {'wall min':>9} {'bench min':>10} {'harness s/job':>14}")
        for (platform, benchmark), (jobs, wall, bench) in heavy:
            rows.append(f"{platform:<10} {benchmark:<16} {jobs:5d} {wall / 60:9.1f} {bench / 60:10.1f} "
                        f"{(wall - bench) / jobs:14.1f}")
    if result["first"] and result["last"]:
        rows.append(f"from the first to the last job: {(result['last'] - result['first']).total_seconds() / 60:.1f} min "
                    "(the notebooks run in parallel, so their rows add up to more than their share)")
    return "\n".join(rows)


def fresh_clone(extra: list[str]) -> int:
    # a short path: podman's run directory under .state/ must stay within 50 characters
    with tempfile.TemporaryDirectory(prefix="vr-", dir="/tmp") as tmp:
        clone = Path(tmp) / "v"
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
        log = Path(tmp) / "reproduce.log"
        start = time.monotonic()
        with log.open("w") as handle:
            status = subprocess.run(["bash", "scripts/reproduce.sh", *extra], cwd=clone, stdout=handle,
                                    stderr=subprocess.STDOUT).returncode
        wall = time.monotonic() - start
        lines = log.read_text(errors="replace").splitlines()
        print(report(breakdown(lines)))
        print(f"scripts/reproduce.sh in a fresh clone: exit {status}, {wall / 60:.1f} min wall "
              "(set-up of Debian packages and .venv included)")
        if status != 0:
            print("\n".join(lines[-30:]), file=sys.stderr)
        elif not extra:  # the default run as a user starts it: docs/artifact.md reads this record
            record(breakdown(lines), wall, subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"],
                                                          capture_output=True, text=True).stdout.strip())
        return status


RECORD = REPO / "bench" / "results" / "default_run_time.json"


def record(result: dict, wall: float, commit: str) -> None:
    """Keep the measured default run (bench/results/default_run_time.json; commit it)."""
    per_platform = {platform: round(total[1] / 60, 1) for (kind, platform), total in result["totals"].items()
                    if kind == "measure"}
    RECORD.parent.mkdir(parents=True, exist_ok=True)
    RECORD.write_text(json.dumps({"date": datetime.date.today().isoformat(), "commit": commit, "wall_min": round(wall / 60, 1),
                                  "per_platform_min": dict(sorted(per_platform.items())),
                                  "note": "bash scripts/reproduce.sh in a fresh clone, on a machine doing nothing else, "
                                          "its Debian packages installed"}, indent=2) + "\n")
    print(f"recorded in {RECORD.relative_to(REPO)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", nargs="*", type=Path, help="Snakemake logs of finished runs")
    parser.add_argument("--fresh-clone", action="store_true", help="clone HEAD and time scripts/reproduce.sh")
    args, extra = parser.parse_known_args(argv)
    if args.fresh_clone:
        return fresh_clone([a for a in extra if a != "--"])
    if not args.logs:
        parser.error("give Snakemake logs, or --fresh-clone")
    for path in args.logs:
        print(f"== {path}")
        print(report(breakdown(path.read_text(errors="replace").splitlines())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
