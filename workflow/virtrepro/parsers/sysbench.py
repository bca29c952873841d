"""sysbench 1.0 text output (cpu, memory, fileio, threads, mutex).

A complete run prints a ``General statistics:`` block and ends with the
``Threads fairness:`` block; a run killed early stops after the interval lines.
``FATAL:`` goes to stdout and ``invalid option`` to stderr, both exit 1; both
are rejected here whatever the exit status says. A log holds exactly one run
(one banner, one summary). The options a run echoes (threads, prime limit,
block and total size, operation, file count and size, test mode) and its total
time can be checked against what the run asked for (``expected``).
"""

from __future__ import annotations

import re

from .errors import ParseError, ToolReportedError, TruncatedLogError, finite_records, require_one_run, unreadable

_NUMBER = r"([0-9]+(?:\.[0-9]+)?)"

_LABELS = ("threads", "cpu_max_prime", "block_size_kib", "operation")  # the echoed options kept with each record

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


_SIZE = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(B|KiB|MiB|GiB|TiB)$")
_KIB = {"B": 1 / 1024, "KiB": 1, "MiB": 1024, "GiB": 1024**2, "TiB": 1024**3}
# what ``Doing ... test`` says -> --file-test-mode
_FILE_TEST_MODES = {
    "sequential write (creation)": "seqwr",
    "sequential rewrite": "seqrewr",
    "sequential read": "seqrd",
    "random read": "rndrd",
    "random write": "rndwr",
    "random r/w": "rndrw",
}
# echoed option -> (its line, how to read the captured text)
_ECHOED = {
    "threads": (r"^Number of threads: (\d+)$", int),
    "cpu_max_prime": (r"^Prime numbers limit: (\d+)$", int),
    "block_size_kib": (r"^\s*block size: (\S+)$", lambda size: _kib(size)),  # memory
    "total_size_kib": (r"^\s*total size: (\S+)$", lambda size: _kib(size)),  # memory
    "operation": (r"^\s*operation: (\w+)$", str),  # memory
    "file_num": (r"^(\d+) files, \S+ each$", int),
    "file_total_size_kib": (r"^(\S+) total file size$", lambda size: _kib(size)),
    "file_block_size_kib": (r"^Block size (\S+)$", lambda size: _kib(size)),
    "file_test_mode": (r"^Doing (.+) test$", lambda what: _FILE_TEST_MODES.get(what, what)),
}


def _kib(size: str) -> float:
    match = _SIZE.match(size)
    if match is None:
        raise ValueError(f"not a sysbench size: {size!r}")
    return float(match.group(1)) * _KIB[match.group(2)]


def _echoed(text: str, source: str) -> dict:
    """The options the run printed before it started, each at most once."""
    options = {}
    for name, (pattern, read) in _ECHOED.items():
        found = re.findall(pattern, text, re.M)
        if len(found) > 1:
            raise ParseError(source, f"sysbench log shows {len(found)} values of {name}: {found}")
        if found:
            try:
                options[name] = read(found[0])
            except ValueError as error:
                raise ParseError(source, f"sysbench log: {error}") from None
    return options


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
def parse_sysbench(text: str, source: str = "<sysbench log>", expected: dict | None = None) -> list[dict]:
    """Return the records of one complete sysbench run.

    Raises ToolReportedError for FATAL/invalid option output, TruncatedLogError
    when the final summary is missing, ParseError for anything unrecognised, for
    a log of more than one run, and for a run other than ``expected``: its keys are
    ``test`` (cpu, memory, fileio), the echoed options of ``_ECHOED`` (sizes in
    KiB) and ``seconds`` (--time: the run must not take longer, nor stop earlier
    unless a memory run moved its whole total size).
    """
    for pattern in _ERROR_PATTERNS:
        match = pattern.search(text)
        if match:
            raise ToolReportedError(source, f"sysbench reported an error: {match.group(0).strip()}")
    if not text.lstrip().startswith("sysbench "):
        raise ParseError(source, "not a sysbench log (no 'sysbench <version>' banner)")
    require_one_run(text, source, r"^sysbench \d", "sysbench")
    require_one_run(text, source, r"^General statistics:$", "sysbench")
    kind = _test_kind(text)
    if kind == "unknown":
        raise ParseError(source, "sysbench log shows no test options: the run did not start")
    if "General statistics:" not in text or "execution time (avg/stddev):" not in text:
        raise TruncatedLogError(
            source, "sysbench log ends before its 'General statistics'/'Threads fairness' summary"
        )

    options = _echoed(text, source)
    # echoed lines that are there but unreadable (a value cut or replaced) are a damaged log
    _optional(text, r"^Prime numbers limit: (\d+)$", r"^Prime numbers limit:", source)
    _optional(text, r"^\s*block size: (\d+)KiB$", r"^\s*block size:", source)
    if "threads" not in options:
        raise ParseError(source, "sysbench log has no 'Number of threads:' line")
    labels: dict = {"test": kind, **{name: options[name] for name in _LABELS if name in options}}
    if "block_size_kib" in labels:
        labels["block_size_kib"] = int(labels["block_size_kib"])

    if expected is not None:
        _check(text, source, {"test": kind, **options}, expected)
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


def _check(text: str, source: str, ran: dict, expected: dict) -> None:
    """Refuse a run whose echoed options or total time are not what ``expected`` asked for."""
    for name, wanted in expected.items():
        if name == "seconds":
            continue
        if name not in ran:
            raise ParseError(source, f"sysbench log does not show its {name} ({wanted!r} was asked for)")
        if ran[name] != wanted:
            raise ParseError(source, f"sysbench ran with {name} {ran[name]!r}, {wanted!r} was asked for")
    if "seconds" not in expected:
        return
    seconds = float(expected["seconds"])
    took = _value(text, "total time", source)
    if took > seconds * 1.05 + 0.5:
        raise ParseError(source, f"sysbench ran for {took} s, longer than the {seconds:g} s asked for")
    if took < seconds * 0.95:
        moved = re.search(r"^" + _NUMBER + r" MiB transferred", text, re.M)
        if ran["test"] != "memory" or moved is None or float(moved.group(1)) * 1024 != ran.get("total_size_kib"):
            raise ParseError(source, f"sysbench stopped after {took} s, {seconds:g} s were asked for "
                                     "(and it did not finish a total size first)")
