"""GNU coreutils ``dd`` (9.x, ``LC_ALL=C``): the transfer statistics it prints on stderr.

Every completed copy ends with three lines::

    256+0 records in
    256+0 records out
    268435456 bytes (268 MB, 256 MiB) copied, 1.19578 s, 224 MB/s

(``0 bytes copied, 2.9221e-05 s, 0.0 kB/s`` when nothing was copied: no
parenthesis). The rate dd prints is rounded to two or three digits and its unit
changes (``kB/s``, ``MB/s``, ``GB/s``; SI, 1 MB = 10^6 bytes), so the throughput
is computed here from the exact byte count and the seconds (``%g``, possibly in
``e-05`` notation). Several copies in one log (a write, then a read) give one
record each, in order (label ``copy``).

Traps:

* SIGTERM kills dd silently (empty log); SIGINT makes it print **complete looking
  statistics** for the part it copied and exit 130. Only the byte count shows the
  cut: pass ``expected_bytes`` (what ``bs`` x ``count`` asked for).
* Errors start with ``dd: `` (``invalid conversion``, ``unrecognized option``,
  ``failed to open``, ``error writing ...: No space left on device``); a full
  device still prints statistics for what was written before.
* ``0+0 records`` / ``0 bytes copied``: nothing was copied (empty input).
"""

from __future__ import annotations

import re

from .errors import ParseError, ToolReportedError, TruncatedLogError, finite_records

_NUM = r"[0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?"
_RECORDS = re.compile(r"^(?P<full>\d+)\+(?P<partial>\d+) records (?P<dir>in|out)\s*$")
_COPIED = re.compile(
    rf"^(?P<bytes>\d+) bytes (?:\([^)]*\) )?copied, (?P<seconds>{_NUM}) s, (?P<rate>{_NUM}|Infinity) (?P<unit>[kMGTPEZY]?B)/s\s*$"
)
_ERRORS = [
    re.compile(r"^dd: .*$", re.M),
    re.compile(r"^.*No space left on device.*$", re.M),
    re.compile(r"^Try 'dd --help'.*$", re.M),
]


@finite_records
def parse_dd(text: str, source: str = "<dd log>", expected_bytes=None) -> list[dict]:
    """Return one ``throughput`` record (MB/s, 10^6 bytes/s) per completed dd copy in ``text``.

    Labels: ``copy`` (0-based order in the log), ``bytes``, ``seconds``,
    ``records_in``/``records_out`` (``full+partial`` as dd prints them) and
    ``reported_rate`` (dd's own rounded rate, e.g. ``224 MB/s``). ``expected_bytes``
    (an int for every copy, or a list with one int per copy) makes a copy of
    another size, or another number of copies, an error.
    """
    for pattern in _ERRORS:
        match = pattern.search(text)
        if match:
            raise ToolReportedError(source, f"dd reported an error: {match.group(0).strip()}")
    records: list[dict] = []
    pending: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        counts = _RECORDS.match(line)
        if counts:
            direction = counts.group("dir")
            if direction in pending or (direction == "out" and "in" not in pending):
                raise TruncatedLogError(source, f"line {number}: dd 'records {direction}' out of order (cut or mixed log)")
            pending[direction] = f"{counts.group('full')}+{counts.group('partial')}"
            continue
        copied = _COPIED.match(line)
        if copied:
            if set(pending) != {"in", "out"}:
                raise ParseError(source, f"line {number}: dd 'copied' line without 'records in/out' lines above it")
            size, seconds = int(copied.group("bytes")), float(copied.group("seconds"))
            if size == 0 or pending["out"] == "0+0":
                raise TruncatedLogError(source, f"line {number}: dd copied nothing ({pending['in']} records in, 0 bytes)")
            if seconds <= 0:
                raise ParseError(source, f"line {number}: dd reports {seconds} s: no rate can be computed")
            records.append(
                {
                    "metric": "throughput",
                    "unit": "MB/s",
                    "value": size / seconds / 1e6,
                    "copy": len(records),
                    "bytes": size,
                    "seconds": seconds,
                    "records_in": pending["in"],
                    "records_out": pending["out"],
                    "reported_rate": f"{copied.group('rate')} {copied.group('unit')}/s",
                }
            )
            pending = {}
            continue
    if pending:
        raise TruncatedLogError(source, "dd log ends after 'records' lines without the 'bytes ... copied' line")
    if not records:
        if not text.strip():
            raise TruncatedLogError(source, "dd output is empty (killed before it printed its statistics?)")
        raise ParseError(source, "not dd output (no 'records in/out' and 'bytes ... copied' lines)")
    if expected_bytes is not None:
        wanted = list(expected_bytes) if isinstance(expected_bytes, (list, tuple)) else [expected_bytes] * len(records)
        if len(wanted) != len(records):
            raise TruncatedLogError(source, f"dd log has {len(records)} completed copies, {len(wanted)} were run")
        for record, size in zip(records, wanted):
            if record["bytes"] != int(size):
                raise TruncatedLogError(
                    source,
                    f"dd copy {record['copy']} moved {record['bytes']} bytes, {int(size)} were asked for"
                    " (interrupted: dd prints complete looking statistics on SIGINT)",
                )
    return records
