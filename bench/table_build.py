"""How long does the tidy table take at cluster scale?

Makes a testbed of ``--logs`` raw logs (default 50,000: the paper scale of about 11,000 logs a
testbed, several testbeds' worth) from copies of the committed reference logs, in a temporary
directory: every variant's logs are copied to further repetitions (the log with a blank line more
each round, so that no two repetitions are one run, which the table refuses; its sidecar with the
repetition, log name and digest of its new place), so each parses exactly as a real log does.
Then prints the wall time of (each after ``sync``: a user's logs and table were written long before
the step, so the writeback of what this script has just written is not the step's)

- a full build (every log parsed: ``write_table(reparse=True)``),
- an up-to-date ``load`` (nothing changed: the checksums are checked, nothing is parsed),
- an incremental build after one new log (the table's rows of every other log are kept),
- a build after one log changed (its rows and its variant's stopping facts made anew),

against the targets of the issue "From one machine to a cluster": one new log updates the table
in at most 2 s, a full build of 50,000 logs takes at most 30 s. Each result is checked against a
full build of the same logs (the incremental table must equal it).

    PYTHONPATH=workflow .venv/bin/python bench/table_build.py [--logs 50000] [--source data/raw/reference-vm]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from virtrepro.rawdata import rawlog
from virtrepro import results

TARGET_FULL_S = 30.0
TARGET_ONE_LOG_S = 2.0
TESTBED = "bench"


def generate(source: Path, data: Path, count: int) -> int:
    """``count`` raw logs under ``data/raw/bench`` from the variants under ``source`` (a testbed's raw
    directory), each variant's logs repeated in turn as further repetitions. Returns the count made."""
    variants = sorted({log.parent for log in source.glob("*/*/*/rep-*.log") if rawlog.LOG_NAME.match(log.name)})
    if not variants:
        raise SystemExit(f"no raw logs under {source}")
    originals = {v: sorted((p for p in v.glob("rep-*.log") if rawlog.LOG_NAME.match(p.name)),
                           key=lambda p: int(rawlog.LOG_NAME.match(p.name).group(1))) for v in variants}
    made = 0
    copies = 0
    while made < count:
        for variant in variants:
            target = data / "raw" / TESTBED / variant.relative_to(source)
            target.mkdir(parents=True, exist_ok=True)
            for log in originals[variant]:
                if made >= count:
                    break
                repetition = copies * len(originals[variant]) + int(rawlog.LOG_NAME.match(log.name).group(1))
                name = f"rep-{repetition}.log"
                sidecar = copy_log(log, target / name, b"\n" * copies)
                sidecar.update(testbed=TESTBED)
                rawlog.sidecar_path(target / name).write_text(json.dumps(sidecar))
                made += 1
            if made >= count:
                break
        copies += 1
    return made


def copy_log(log: Path, new: Path, blank: bytes) -> dict:
    """Copy ``log`` to ``new`` with ``blank`` lines added (every parser reads them as the log), and
    return its sidecar for the new place: repetition, log name and the new bytes' digest."""
    data = log.read_bytes() + blank
    new.write_bytes(data)
    sidecar = json.loads(rawlog.sidecar_path(log).read_text())
    sidecar.update(repetition=int(rawlog.LOG_NAME.match(new.name).group(1)), log=new.name,
                   **rawlog.digest_record(data, rawlog.TAKEN_AT_COMMIT))
    return sidecar


def timed(function):
    os.sync()  # the files written before (the copies, the last table) reach the disk first, not during the step
    start = time.perf_counter()
    value = function()
    return time.perf_counter() - start, value


def add_log(data: Path) -> Path:
    """One more repetition of the first variant (a copy of its first log, with more blank lines than any)."""
    variant = sorted((data / "raw" / TESTBED).glob("*/*/*"))[0]
    logs = sorted(variant.glob("rep-*.log"), key=lambda p: int(rawlog.LOG_NAME.match(p.name).group(1)))
    repetition = int(rawlog.LOG_NAME.match(logs[-1].name).group(1)) + 1
    new = variant / f"rep-{repetition}.log"
    rawlog.sidecar_path(new).write_text(json.dumps(copy_log(logs[0], new, b"\n" * (len(logs) + 1))))
    return new


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=int, default=50_000)
    parser.add_argument("--source", type=Path, default=Path("data/raw/reference-vm"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="virtrepro-table-") as tmp:
        data = Path(tmp)
        seconds, made = timed(lambda: generate(args.source, data, args.logs))
        print(f"{made} raw logs copied from {args.source} in {seconds:.1f} s")
        full_s, full = timed(lambda: results.write_table(data, TESTBED, reparse=True))
        print(f"full build:                {full_s:6.2f} s  ({len(full)} rows)   target <= {TARGET_FULL_S:.0f} s")
        load_s, loaded = timed(lambda: results.load(TESTBED, data))
        assert loaded.equals(full), "the up-to-date load differs from the full build"
        print(f"load (reads; checks it is current): {load_s:6.2f} s")
        new = add_log(data)
        one_s, incremental = timed(lambda: results.write_table(data, TESTBED, csv=False))
        print(f"build after one new log:   {one_s:6.2f} s  ({len(incremental) - len(full)} rows more)   "
              f"target <= {TARGET_ONE_LOG_S:.0f} s")
        changed_sidecar = json.loads(rawlog.sidecar_path(new).read_text())
        changed_sidecar["note"] = "changed"
        rawlog.sidecar_path(new).write_text(json.dumps(changed_sidecar))
        changed_s, changed = timed(lambda: results.write_table(data, TESTBED, csv=False))
        print(f"build after one changed log:{changed_s:5.2f} s")
        reference = results.write_table(data, TESTBED, reparse=True)
        same = changed.equals(reference)
        print(f"incremental table equals a full build of the same logs: {same}")
        csv_s, _ = timed(lambda: reference.to_csv(data / "check.csv", index=False))
        print(f"(the CSV copy for people, which the table rule writes too: {csv_s:.2f} s)")
        ok = same and full_s <= TARGET_FULL_S and one_s <= TARGET_ONE_LOG_S
        print("targets met" if ok else "TARGETS NOT MET")
        return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
