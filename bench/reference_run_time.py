"""How long did a testbed's measurement take, from its committed sidecars alone?

    .venv/bin/python bench/reference_run_time.py [--data-dir data] [--testbed reference-vm] [--gap-min 15] [--write]

A long run (the reference run: hours) is measured in parts, days apart. Every repetition's sidecar
records when it started and ended (``started_utc``, ``ended_utc``) and how long the benchmark
ran (``duration_s``). The repetitions' spans are merged into parts wherever the gap between one
repetition's end and the next one's start is at most ``--gap-min`` minutes (guest boots, image
and set-up steps between jobs fall inside such gaps; a pause between sessions does not). It prints
each part (start, end, wall time, repetitions), the total wall time of the parts, the time the
benchmarks themselves ran, per platform, and the largest gap counted inside a part. The wall
time so measured leaves out what happened before a part's first repetition (set-up, the image
build, the probes) and after its last.

``--write`` keeps the result in ``bench/results/<testbed>_run_time.json`` (docs/artifact.md and
docs/reference-data.md read the reference run's).
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _time(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def spans(data_dir: Path, testbed: str) -> list[dict]:
    """(start, end, platform, duration) of every complete repetition of the testbed, by start."""
    out = []
    for sidecar in sorted((data_dir / "raw" / testbed).glob("*/*/*/rep-*.json")):
        record = json.loads(sidecar.read_text())
        if not record.get("started_utc") or not record.get("ended_utc"):
            continue
        platform = record["platform"]["name"] if isinstance(record.get("platform"), dict) else record.get("platform")
        out.append({"start": _time(record["started_utc"]), "end": _time(record["ended_utc"]),
                    "platform": platform, "duration_s": float(record.get("duration_s") or 0)})
    return sorted(out, key=lambda s: s["start"])


def parts(runs: list[dict], gap_min: float) -> list[dict]:
    """The runs merged into parts: a gap longer than ``gap_min`` minutes starts a new part."""
    merged: list[dict] = []
    for run in runs:
        last = merged[-1] if merged else None
        if last is not None and (run["start"] - last["end"]).total_seconds() <= gap_min * 60:
            last["largest_gap_s"] = max(last["largest_gap_s"], (run["start"] - last["end"]).total_seconds())
            last["end"] = max(last["end"], run["end"])
            last["repetitions"] += 1
        else:
            merged.append({"start": run["start"], "end": run["end"], "repetitions": 1, "largest_gap_s": 0.0})
    return merged


def summary(data_dir: Path, testbed: str, gap_min: float) -> dict:
    runs = spans(data_dir, testbed)
    if not runs:
        raise SystemExit(f"no sidecars with start and end times under {data_dir / 'raw' / testbed}")
    merged = parts(runs, gap_min)
    per_platform: dict = collections.defaultdict(float)
    for run in runs:
        per_platform[run["platform"]] += run["duration_s"]
    return {
        "testbed": testbed,
        "gap_min": gap_min,
        "repetitions": len(runs),
        "parts": [{"start": p["start"].strftime("%Y-%m-%dT%H:%MZ"), "end": p["end"].strftime("%Y-%m-%dT%H:%MZ"),
                   "wall_h": round((p["end"] - p["start"]).total_seconds() / 3600, 2), "repetitions": p["repetitions"],
                   "largest_gap_min": round(p["largest_gap_s"] / 60, 1)} for p in merged],
        "wall_h": round(sum((p["end"] - p["start"]).total_seconds() for p in merged) / 3600, 2),
        "benchmarks_h": round(sum(per_platform.values()) / 3600, 2),
        "benchmarks_h_per_platform": {p: round(s / 3600, 2) for p, s in sorted(per_platform.items())},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(REPO / "data"))
    parser.add_argument("--testbed", default="reference-vm")
    parser.add_argument("--gap-min", type=float, default=15.0,
                        help="a longer pause between two repetitions starts a new part (default 15 min)")
    parser.add_argument("--write", action="store_true", help="keep the result in bench/results/<testbed>_run_time.json")
    args = parser.parse_args(argv)
    result = summary(Path(args.data_dir), args.testbed, args.gap_min)
    for p in result["parts"]:
        print(f"part {p['start']} .. {p['end']}: {p['wall_h']:.2f} h, {p['repetitions']} repetitions "
              f"(largest pause inside: {p['largest_gap_min']} min)")
    print(f"{len(result['parts'])} parts, {result['repetitions']} repetitions: wall time {result['wall_h']:.2f} h, "
          f"of which the benchmarks ran {result['benchmarks_h']:.2f} h ("
          + ", ".join(f"{p} {h:.2f} h" for p, h in result["benchmarks_h_per_platform"].items()) + ")")
    if args.write:
        out = REPO / "bench" / "results" / f"{args.testbed}_run_time.json"
        out.write_text(json.dumps(result, indent=2) + "\n")
        print(f"written: {out.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
