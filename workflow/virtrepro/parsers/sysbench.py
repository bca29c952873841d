"""sysbench 1.0 text output (cpu, memory, fileio, threads, mutex).

A complete run prints a ``General statistics:`` block and ends with the
``Threads fairness:`` block; a run killed early stops after the interval lines.
``FATAL:`` goes to stdout and ``invalid option`` to stderr, both exit 1; both
are rejected here whatever the exit status says.
"""

from __future__ import annotations

import re

from .errors import ParseError, ToolReportedError, TruncatedLogError, finite_records, unreadable

_NUMBER = r"([0-9]+(?:\.[0-9]+)?)"

_ERROR_PATTERNS = [
    re.compile(r"^FATAL: .*$", re.M),
    re.compile(r"^invalid option: .*$", re.M),
]

# label in the log -> (metric, unit)
_CPU = {"events per second": ("events_per_second", "events/s")}
_FILEIO = {
    "reads/s": ("reads_per_second", "ops/s"),
    "writes/s": ("writes_per_second", "ops/s"),
    "fsyncs/s": ("fsyncs_per_second", "ops/s"),
    "read, MiB/s": ("read_throughput", "MiB/s"),
    "written, MiB/s": ("write_throughput", "MiB/s"),
}


def _value(text: str, label: str, source: str) -> float:
    match = re.search(r"^\s*" + re.escape(label) + r":\s+" + _NUMBER + r"s?\s*$", text, re.M)
    if match is None:
        raise ParseError(source, f"sysbench summary has no '{label}:' line")
    return float(match.group(1))


def _optional(text: str, pattern: str, start: str, source: str) -> re.Match | None:
    """An optional line: absent is fine, present but unreadable (a value cut or replaced) is not."""
    match = re.search(pattern, text, re.M)
    if match is None:
        line = re.search(start + ".*$", text, re.M)
        if line:
            raise unreadable(line.group(0), source, "sysbench line")
    return match


def _test_kind(text: str) -> str:
    if "CPU speed:" in text or "Prime numbers limit:" in text:
        return "cpu"
    if "Running memory speed test" in text:
        return "memory"
    if "File operations:" in text or "total file size" in text:
        return "fileio"
    if "Running the test with following options" in text:
        return "other"
    return "unknown"


@finite_records
def parse_sysbench(text: str, source: str = "<sysbench log>") -> list[dict]:
    """Return the records of one complete sysbench run.

    Raises ToolReportedError for FATAL/invalid option output, TruncatedLogError
    when the final summary is missing, ParseError for anything unrecognised.
    """
    for pattern in _ERROR_PATTERNS:
        match = pattern.search(text)
        if match:
            raise ToolReportedError(source, f"sysbench reported an error: {match.group(0).strip()}")
    if not text.lstrip().startswith("sysbench "):
        raise ParseError(source, "not a sysbench log (no 'sysbench <version>' banner)")
    kind = _test_kind(text)
    if kind == "unknown":
        raise ParseError(source, "sysbench log shows no test options: the run did not start")
    if "General statistics:" not in text or "execution time (avg/stddev):" not in text:
        raise TruncatedLogError(
            source, "sysbench log ends before its 'General statistics'/'Threads fairness' summary"
        )

    labels: dict = {"test": kind}
    threads = re.search(r"^Number of threads: (\d+)$", text, re.M)
    if threads is None:
        raise ParseError(source, "sysbench log has no 'Number of threads:' line")
    labels["threads"] = int(threads.group(1))
    prime = _optional(text, r"^Prime numbers limit: (\d+)$", r"^Prime numbers limit:", source)
    if prime:
        labels["cpu_max_prime"] = int(prime.group(1))
    block = _optional(text, r"^\s*block size: (\d+)KiB$", r"^\s*block size:", source)
    if block:
        labels["block_size_kib"] = int(block.group(1))
    operation = re.search(r"^\s*operation: (\w+)$", text, re.M)
    if operation:
        labels["operation"] = operation.group(1)

    records = []

    def add(metric: str, unit: str, value: float) -> None:
        records.append({"metric": metric, "unit": unit, "value": value, **labels})

    if kind == "cpu":
        for label, (metric, unit) in _CPU.items():
            add(metric, unit, _value(text, label, source))
    elif kind == "memory":
        ops = re.search(r"^Total operations: (\d+) \(\s*" + _NUMBER + r" per second\)$", text, re.M)
        moved = re.search(r"^" + _NUMBER + r" MiB transferred \(" + _NUMBER + r" MiB/sec\)$", text, re.M)
        if ops is None or moved is None:
            raise ParseError(source, "sysbench memory log lacks 'Total operations' or 'MiB transferred'")
        add("operations_per_second", "ops/s", float(ops.group(2)))
        add("throughput", "MiB/s", float(moved.group(2)))
    elif kind == "fileio":
        for label, (metric, unit) in _FILEIO.items():
            add(metric, unit, _value(text, label, source))

    add("total_time", "s", _value(text, "total time", source))
    add("total_events", "events", _value(text, "total number of events", source))
    add("latency_avg", "ms", _value(text, "avg", source))
    add("latency_max", "ms", _value(text, "max", source))
    percentile = _optional(text, r"^\s*(\d+)th percentile:\s+" + _NUMBER + r"$", r"^\s*\S+ percentile:", source)
    if percentile:
        add(f"latency_p{percentile.group(1)}", "ms", float(percentile.group(2)))
    return records
