"""mbw 1.2 output (memory copy bandwidth: MEMCPY, DUMB, MCBLOCK).

Pass **stdout** as ``text`` (or a ``2>&1`` log); ``stderr`` may be given separately,
it is only searched for errors. Rows are tab-separated::

    0\tMethod: MEMCPY\tElapsed: 0.04778\tMiB: 256.00000\tCopy: 5357.890 MiB/s
    AVG\tMethod: MEMCPY\tElapsed: 0.04722\tMiB: 256.00000\tCopy: 5421.581 MiB/s

mbw's AVG is the array size divided by the mean elapsed time (not the mean of the
per-run rates); it is reported as printed. ``-a`` drops AVG rows: then only the
per-run records exist. ``-q`` drops the header, so the number of runs per test
(``Doing N runs per test.``) is unknown: pass ``expected_runs``/``expected_methods``
to check a quiet log for completeness. stdout is block-buffered, so a killed run
often leaves an empty log; with line buffering it stops mid-test.
"""

from __future__ import annotations

import re

from .errors import ParseError, ToolReportedError, TruncatedLogError, finite_records, unreadable

_ERRORS = [
    re.compile(r"^Error.*$", re.M),
    re.compile(r"^mbw: .*$", re.M),
    re.compile(r"^Usage: .*$", re.M),
]
_ROW = re.compile(
    r"^(?P<run>\d+|AVG)\tMethod: (?P<method>[A-Z]+)\tElapsed: (?P<elapsed>[0-9.]+)\t"
    r"MiB: (?P<mib>[0-9.]+)\tCopy: (?P<rate>[0-9.]+|inf) MiB/s\s*$"
)
_METHODS = ("MEMCPY", "DUMB", "MCBLOCK")


@finite_records
def parse_mbw(
    text: str,
    source: str = "<mbw log>",
    stderr: str | None = None,
    expected_runs: int | None = None,
    expected_methods: list[str] | tuple[str, ...] | None = None,
    expected_averages: bool | None = None,
) -> list[dict]:
    """Return the records of one complete mbw run.

    Records (labels ``method`` MEMCPY/DUMB/MCBLOCK, ``array_mib``; MCBLOCK adds
    ``block_bytes`` when the header shows it):
    ``copy_bandwidth_avg`` MiB/s and ``elapsed_avg`` s from the AVG row (label ``runs``),
    ``copy_bandwidth`` MiB/s and ``elapsed`` s per run (label ``run``, 0-based).
    ``expected_averages``: True when mbw ran without ``-a`` (a log cut just before the
    only AVG row looks like a ``-a`` run otherwise), False when it ran with ``-a``.
    """
    for stream in (text, stderr or ""):
        for pattern in _ERRORS:
            match = pattern.search(stream)
            if match:
                raise ToolReportedError(source, f"mbw reported an error: {match.group(0).strip()}")
    if not text.strip():
        raise TruncatedLogError(source, "mbw output is empty (a killed mbw loses its block-buffered stdout)")

    header_runs = re.search(r"^Getting down to business\.\.\. Doing (\d+) runs per test\.$", text, re.M)
    runs_wanted = expected_runs if expected_runs is not None else (int(header_runs.group(1)) if header_runs else None)
    block = re.search(r"^Using (\d+) bytes as blocks for memcpy block copy test\.$", text, re.M)
    if block is None and re.search(r"^Using .*blocks", text, re.M):
        raise unreadable(re.search(r"^Using .*$", text, re.M).group(0), source, "mbw block size line")

    per_method: dict[str, dict] = {}
    order: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith(("Long uses", "Using ", "Getting down to business")):
            continue
        row = _ROW.match(line)
        if row is None:
            raise ParseError(source, f"line {number}: not an mbw result row: {line.strip()!r}")
        method = row.group("method")
        if method not in _METHODS:
            raise ParseError(source, f"line {number}: unknown mbw method {method!r}")
        if row.group("rate") == "inf":
            raise ParseError(source, f"line {number}: mbw rate is 'inf' (elapsed time too small to measure)")
        if method not in per_method:
            per_method[method] = {"runs": [], "avg": None, "mib": float(row.group("mib"))}
            order.append(method)
        elif order[-1] != method:
            raise ParseError(source, f"line {number}: mbw rows of {method} are not contiguous")
        entry = per_method[method]
        if entry["avg"] is not None:
            raise ParseError(source, f"line {number}: mbw row after the AVG row of {method}")
        values = (float(row.group("rate")), float(row.group("elapsed")))
        if row.group("run") == "AVG":
            entry["avg"] = values
        else:
            if int(row.group("run")) != len(entry["runs"]):
                raise ParseError(source, f"line {number}: mbw run {row.group('run')} of {method} is out of order")
            entry["runs"].append(values)

    if not order:
        raise TruncatedLogError(source, "mbw log has no result rows")
    with_avg = [m for m in order if per_method[m]["avg"] is not None]
    for method in order:
        entry = per_method[method]
        if with_avg and entry["avg"] is None:
            raise TruncatedLogError(source, f"mbw log ends before the AVG row of {method}")
        if runs_wanted is not None and len(entry["runs"]) != runs_wanted:
            raise TruncatedLogError(source, f"mbw log has {len(entry['runs'])} {method} runs, {runs_wanted} were requested")
    if expected_averages is not None and bool(with_avg) != expected_averages:
        state = "has no AVG row" if expected_averages else "has AVG rows although mbw ran with -a"
        raise TruncatedLogError(source, f"mbw log {state}")
    if block and "MCBLOCK" not in order:
        # mbw prints the block-size line only when the MCBLOCK test is selected
        raise TruncatedLogError(source, f"mbw announced the MCBLOCK test but the log stops after {order}")
    if expected_methods is not None:
        wanted = [m.upper() for m in expected_methods]
        if order != [m for m in _METHODS if m in wanted]:
            raise TruncatedLogError(source, f"mbw log has methods {order}, expected {wanted}")

    records: list[dict] = []
    for method in order:
        entry = per_method[method]
        labels = {"method": method, "array_mib": entry["mib"]}
        if method == "MCBLOCK" and block:
            labels["block_bytes"] = int(block.group(1))
        if entry["avg"] is not None:
            rate, elapsed = entry["avg"]
            records.append({"metric": "copy_bandwidth_avg", "unit": "MiB/s", "value": rate, "runs": len(entry["runs"]), **labels})
            records.append({"metric": "elapsed_avg", "unit": "s", "value": elapsed, "runs": len(entry["runs"]), **labels})
        for run, (rate, elapsed) in enumerate(entry["runs"]):
            records.append({"metric": "copy_bandwidth", "unit": "MiB/s", "value": rate, "run": run, **labels})
            records.append({"metric": "elapsed", "unit": "s", "value": elapsed, "run": run, **labels})
    return records
