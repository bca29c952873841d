"""How long executing every notebook takes (goal: under a minute for all of them).

Executes each notebook of notebooks/ with papermill, as the workflow's notebook rules do (same kernel,
working directory notebooks/, parameters testbed, data_dir and figures_dir), against the committed
reference data; executed copies and figures go to a temporary directory, so the repository is not
touched (the data's table cache is only rewritten if it is stale). Prints the wall time of each
notebook (kernel start included) and the total.

    .venv/bin/python bench/notebook_time.py [--testbed reference-vm] [--data data] [notebook ...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import papermill

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--testbed", default="reference-vm")
    parser.add_argument("--data", default=str(REPO / "data"), help="data directory (raw/ and tables/)")
    parser.add_argument("notebooks", nargs="*", help="notebook names (default: every notebook in notebooks/)")
    args = parser.parse_args()
    names = args.notebooks or sorted(p.stem for p in (REPO / "notebooks").glob("*.ipynb"))
    total = 0.0
    with tempfile.TemporaryDirectory(prefix="notebook-time-") as tmp:
        for name in names:
            started = time.perf_counter()
            papermill.execute_notebook(
                str(REPO / "notebooks" / f"{name}.ipynb"),
                str(Path(tmp) / f"{name}.ipynb"),
                parameters={"testbed": args.testbed, "data_dir": str(Path(args.data).resolve()), "figures_dir": str(Path(tmp) / "figures")},
                kernel_name="python3",
                cwd=str(REPO / "notebooks"),
                progress_bar=False,
            )
            elapsed = time.perf_counter() - started
            total += elapsed
            print(f"{name:20s} {elapsed:6.1f} s", flush=True)
    print(f"{'total':20s} {total:6.1f} s ({len(names)} notebooks{', goal under 60 s' if total < 60 else ', over the 60 s goal'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
