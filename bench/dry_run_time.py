"""How long does Snakemake take to plan the `paper` profile (a dry run)?

Runs `snakemake -n` with the paper scale (all configured benchmarks, every
platform, the papers' repetition counts) and prints the number of jobs it
plans and the wall time. Planning must take seconds, not minutes.

    .venv/bin/python bench/dry_run_time.py [--platforms native lxc podman qemu-tcg] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--platforms", nargs="+", default=["native", "lxc", "podman", "qemu-tcg"],
                        help="concrete platforms (qemu-kvm/qemu-tcg rather than qemu, so no probe is needed)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    empty = tempfile.mkdtemp(prefix="virtrepro-dry-run-")  # no raw logs yet: the whole plan is listed
    command = [
        sys.executable, "-m", "snakemake", "-n", "--quiet", "rules", "--cores", "all",
        "--snakefile", str(REPO / "Snakefile"), "--directory", empty,
        "--config", "scale=paper", f"data_dir={empty}/data", f"figures_dir={empty}/figures",
        f"platforms=[{','.join(args.platforms)}]",
    ]
    times, jobs = [], None
    for _ in range(args.repeat):
        start = time.monotonic()
        result = subprocess.run(command, capture_output=True, text=True, cwd=REPO, env={**os.environ, "VIRTREPRO_STATE": str(REPO / ".state")})
        times.append(time.monotonic() - start)
        if result.returncode != 0:
            raise SystemExit(result.stdout[-2000:] + result.stderr[-2000:])
        match = re.search(r"^total\s+(\d+)$", result.stdout + result.stderr, re.M)
        jobs = int(match.group(1)) if match else None
    print(f"paper profile, platforms {' '.join(args.platforms)}: {jobs} jobs planned")
    print(f"dry run wall time: median {statistics.median(times):.1f} s (min {min(times):.1f}, max {max(times):.1f}, {args.repeat} runs)")


if __name__ == "__main__":
    main()
