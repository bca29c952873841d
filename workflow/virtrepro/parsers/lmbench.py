"""lmbench 3 output (Debian's ``lmbench``): lat_syscall, lat_ctx, lat_mem_rd and bw_mem.

lmbench prints its results on stderr, one line each, and never a summary; a log is the
``2>&1`` output of one or more program runs in a row (the benchmark's command)::

    Simple syscall: 0.1862 microseconds          lat_syscall null (also read, write, stat,
    Simple open/close: 2.2162 microseconds       fstat, open/close)

    "size=0k ovr=0.68                            lat_ctx -s 0 2 8: the size of each process's
    2 16.47                                      working set and lmbench's overhead for it (us),
    8 9.31                                       then processes and microseconds a switch

    "stride=128                                  lat_mem_rd 8 128: per stride (bytes), the array
    0.00049 1.100                                size (MiB) and nanoseconds a load; a blank line
    8.00000 5.313                                ends each stride

    "bw_mem rd                                   bw_mem 64m rd: the array size (10^6 bytes) and
    67.11 70133.76                               MB/s. bw_mem does not say which operation it
                                                 ran: the command prints a title before each, as
                                                 lmbench's own script does

Every line must be one of these: anything else (a usage line, a shell's ``not found``) is
an error. A line cut short has no newline: the log must end with one. A log cut between two
lines looks complete, so the caller passes ``expected`` (what the run asked for) and the
parser checks that the log holds exactly that.
"""

from __future__ import annotations

import re

from .errors import ParseError, ToolReportedError, TruncatedLogError, count, finite_records, number, unreadable

SYSCALLS = {"syscall": "null", "read": "read", "write": "write", "stat": "stat", "fstat": "fstat",
            "open/close": "open"}
OPERATIONS = ("rd", "wr", "rdwr", "cp", "fwr", "frd", "fcp", "bzero", "bcopy")

_SIMPLE = re.compile(r"^Simple (?P<name>[a-z/]+): (?P<value>\S*) microseconds$")
_CTX = re.compile(r'^"size=(?P<size>\S*)k ovr=(?P<overhead>\S*)$')
_STRIDE = re.compile(r'^"stride=(?P<stride>\S*)$')
_BW_MEM = re.compile(r'^"bw_mem (?P<operation>\S*)$')
_PAIR = re.compile(r"^(?P<x>\S+) (?P<y>\S+)$")
# what lmbench and the shell print when a run fails (tests/data/lmbench/bad-*)
_ERRORS = re.compile(r"^(Usage: .*|.*: not found|.*must be larger than.*|.*: No such file or directory|"
                     r"(lat|bw)_\w+: .*|Killed|Terminated)$")


@finite_records
def parse_lmbench(text: str, source: str = "<lmbench log>", expected: dict | None = None) -> list[dict]:
    """Return the records of one complete log, in the log's order.

    Records: ``syscall_latency`` us (label ``syscall``: null, read, write, stat, fstat, open),
    ``context_switch`` us (labels ``size_kb``, ``processes``), ``memory_latency`` ns (labels
    ``stride``, ``size_mib``), ``memory_bandwidth`` MB/s (labels ``operation``, ``size_mb``).

    ``expected`` (what the command asked for) holds any of ``syscalls`` (in order), ``ctx``
    ((size_kb, processes) pairs in order), ``mem_rd`` (``strides`` in order and the largest
    size ``mib``) and ``bw_mem`` ((operation, size_mb) pairs in order): the log must hold
    exactly these, and nothing of a program that ``expected`` does not name.
    """
    errors = [line for line in text.splitlines() if _ERRORS.match(line.strip())]
    if errors:
        raise ToolReportedError(source, f"lmbench reported an error: {errors[0].strip()}")
    if not text.strip():
        raise TruncatedLogError(source, "lmbench log is empty")
    if not text.endswith("\n"):
        raise TruncatedLogError(source, f"lmbench log ends inside a line: {text.splitlines()[-1]!r}")

    records: list[dict] = []
    section: dict | None = None  # the title a data line belongs to
    for lineno, line in enumerate(text.splitlines(), start=1):
        where = f"line {lineno}"
        if not line.strip():
            if section is not None and section["kind"] == "stride":
                _close_stride(section, source)
                section = None
        elif line.startswith("Simple "):
            match = _SIMPLE.match(line)
            if match is None or match.group("name") not in SYSCALLS:
                raise unreadable(line, source, f"{where}: lat_syscall line")
            value = number(match.group("value"), source, f"{where}: lat_syscall {match.group('name')}")
            records.append({"metric": "syscall_latency", "unit": "us", "value": value,
                            "syscall": SYSCALLS[match.group("name")]})
            _unclosed(section, source)
            section = None
        elif line.startswith('"'):
            _unclosed(section, source)
            section = _title(line, source, where)
        else:
            pair = _PAIR.match(line)
            if pair is None or section is None:
                raise ParseError(source, f"{where}: not an lmbench result line: {line.strip()!r}")
            record = _point(section, pair, source, where)
            section["points"].append(record)
            records.append(record)
    _unclosed(section, source)
    if expected is not None:
        _check_expected(records, expected, source)
    return records


def _title(line: str, source: str, where: str) -> dict:
    if match := _CTX.match(line):
        size = count(match.group("size"), source, f"{where}: lat_ctx size")
        number(match.group("overhead"), source, f"{where}: lat_ctx overhead")  # read, not reported
        return {"kind": "ctx", "size_kb": size, "points": []}
    if match := _STRIDE.match(line):
        return {"kind": "stride", "stride": count(match.group("stride"), source, f"{where}: lat_mem_rd stride"), "points": []}
    if (match := _BW_MEM.match(line)) and match.group("operation") in OPERATIONS:
        return {"kind": "bw_mem", "operation": match.group("operation"), "points": []}
    raise unreadable(line, source, f"{where}: lmbench title")


def _point(section: dict, pair, source: str, where: str) -> dict:
    kind = section["kind"]
    if kind == "ctx":
        return {"metric": "context_switch", "unit": "us",
                "value": number(pair.group("y"), source, f"{where}: lat_ctx microseconds"),
                "size_kb": section["size_kb"], "processes": count(pair.group("x"), source, f"{where}: lat_ctx processes")}
    if kind == "stride":
        return {"metric": "memory_latency", "unit": "ns",
                "value": number(pair.group("y"), source, f"{where}: lat_mem_rd nanoseconds"),
                "stride": section["stride"], "size_mib": number(pair.group("x"), source, f"{where}: lat_mem_rd size")}
    return {"metric": "memory_bandwidth", "unit": "MB/s",
            "value": number(pair.group("y"), source, f"{where}: bw_mem MB/s"),
            "operation": section["operation"], "size_mb": number(pair.group("x"), source, f"{where}: bw_mem size")}


def _close_stride(section: dict, source: str) -> None:
    """A lat_mem_rd stride ends with a blank line: its sizes must have grown, one by one."""
    sizes = [p["size_mib"] for p in section["points"]]
    if not sizes:
        raise TruncatedLogError(source, f"lat_mem_rd stride {section['stride']} has no sizes")
    if sizes != sorted(set(sizes)):
        raise ParseError(source, f"lat_mem_rd stride {section['stride']}: sizes do not grow: {sizes}")


def _unclosed(section: dict | None, source: str) -> None:
    """Another line (or the end) where a section ends: a lat_mem_rd stride without its blank line
    was cut short; any other title must have had data lines."""
    if section is None:
        return
    if section["kind"] == "stride":
        sizes = [p["size_mib"] for p in section["points"]]
        raise TruncatedLogError(source, f"lat_mem_rd stride {section['stride']} stops at "
                                        f"{sizes[-1] if sizes else 'no size'} MiB without its closing blank line")
    if not section["points"]:
        what = f"lat_ctx size {section['size_kb']}k" if section["kind"] == "ctx" else f"bw_mem {section['operation']}"
        raise TruncatedLogError(source, f"{what} has a title and no result")


def _check_expected(records: list[dict], expected: dict, source: str) -> None:
    def found(metric: str, *labels: str) -> list:
        return [tuple(r[label] for label in labels) if len(labels) > 1 else r[labels[0]]
                for r in records if r["metric"] == metric]

    checks = {
        "syscalls": (found("syscall_latency", "syscall"), list(expected.get("syscalls", ())), "lat_syscall calls"),
        "ctx": (found("context_switch", "size_kb", "processes"), [tuple(p) for p in expected.get("ctx", ())],
                "lat_ctx (size_kb, processes)"),
        "bw_mem": (found("memory_bandwidth", "operation", "size_mb"), [tuple(p) for p in expected.get("bw_mem", ())],
                   "bw_mem (operation, size MB)"),
    }
    for key, (have, want, what) in checks.items():
        if have != want:
            raise TruncatedLogError(source, f"the log has {what} {have}, the run asked for {want}")
    mem_rd = expected.get("mem_rd", {"strides": [], "mib": None})
    points = [(r["stride"], r["size_mib"]) for r in records if r["metric"] == "memory_latency"]
    strides = list(dict.fromkeys(stride for stride, _ in points))
    if strides != list(mem_rd["strides"]):
        raise TruncatedLogError(source, f"the log has lat_mem_rd strides {strides}, the run asked for {list(mem_rd['strides'])}")
    for stride in strides:
        largest = max(size for s, size in points if s == stride)
        if largest != float(mem_rd["mib"]):
            raise TruncatedLogError(source, f"lat_mem_rd stride {stride} stops at {largest} MiB, the run asked for {mem_rd['mib']}")
