"""IOZone 3.x text output (``iozone -a ...`` or ``iozone -s ...``), kBytes/sec.

The result table is right-aligned under a two-line header; a cell belongs to the
header word whose last character it ends under. Only tests that ran have
values, so a row can stop after any column. A run is complete only when
``iozone test complete.`` follows the table: a run killed by a signal prints
``iozone: interrupted`` and its rows look complete, so rows alone prove nothing.
"""

from __future__ import annotations

import re

from .errors import ParseError, ToolReportedError, TruncatedLogError, finite_records, require_one_run

# Column names in the order iozone prints them, as (metric, header word).
_COLUMNS = [
    ("file_size_kb", "kB"),
    ("record_kb", "reclen"),
    ("write", "write"),
    ("rewrite", "rewrite"),
    ("read", "read"),
    ("reread", "reread"),
    ("random_read", "read"),
    ("random_write", "write"),
    ("backward_read", "read"),
    ("record_rewrite", "rewrite"),
    ("stride_read", "read"),
    ("fwrite", "fwrite"),
    ("frewrite", "frewrite"),
    ("fread", "fread"),
    ("freread", "freread"),
]

_ERRORS = [
    re.compile(r"^Can not open temp file.*$", re.M),
    re.compile(r"^Can not open temporary file.*$", re.M),
    re.compile(r"^iozone: interrupted$", re.M),
    re.compile(r"^Usage: .*$", re.M),
    re.compile(r"^iozone: .*(?:invalid|illegal|unknown) option.*$", re.M | re.I),
    re.compile(r"^Error .*$", re.M),
]

# Modes whose numbers are not plain file-system bandwidth: refuse rather than
# mix them with read/write results of the default mode.
_UNSUPPORTED_MODES = {
    "Enable mmap & file I/O mixing.": "mmap & file I/O mixing (-Z)",
    "Using mmap files": "mmap files (-B)",
}


# iozone -i N -> the columns that test fills
_TESTS = {
    "0": ("write", "rewrite"),
    "1": ("read", "reread"),
    "2": ("random_read", "random_write"),
    "3": ("backward_read",),
    "4": ("record_rewrite",),
    "5": ("stride_read",),
    "6": ("fwrite", "frewrite"),
    "7": ("fread", "freread"),
}


def _requested(text: str) -> set[str] | None:
    """The result columns the 'Command line used:' asks for (-i N; -a alone runs every test)."""
    line = re.search(r"^\s*Command line used: (.*)$", text, re.M)
    if line is None:
        return None
    tests = re.findall(r"(?:^|\s)-i\s*([0-9]+)", line.group(1))
    if not tests:
        return {metric for columns in _TESTS.values() for metric in columns}
    return {metric for test in tests for metric in _TESTS.get(test, ())}


def _header(lines: list[str], source: str) -> tuple[int, list[int]]:
    for index, line in enumerate(lines):
        words = line.split()
        if words[:3] == ["kB", "reclen", "write"]:
            ends = [match.end() for match in re.finditer(r"\S+", line)]
            if len(ends) != len(_COLUMNS):
                raise ParseError(source, f"iozone table header has {len(ends)} columns, expected {len(_COLUMNS)}")
            return index, ends
    raise ParseError(source, "iozone log has no result table header ('kB  reclen  write ...')")


@finite_records
def parse_iozone(text: str, source: str = "<iozone log>") -> list[dict]:
    """Return one record per (file size, record size, test) of a complete iozone run."""
    if "Iozone: Performance Test of File I/O" not in text:
        raise ParseError(source, "not an iozone log (no 'Iozone: Performance Test of File I/O' banner)")
    require_one_run(text, source, r"Iozone: Performance Test of File I/O", "iozone")
    for pattern in _ERRORS:
        match = pattern.search(text)
        if match:
            kind = TruncatedLogError if "interrupted" in match.group(0) else ToolReportedError
            raise kind(source, f"iozone reported: {match.group(0).strip()}")
    for line, mode in _UNSUPPORTED_MODES.items():
        if line in text:
            raise ToolReportedError(source, f"iozone ran in {mode} mode, which this parser does not report")
    if "Output is in kBytes/sec" not in text:
        raise ParseError(source, "iozone log does not say 'Output is in kBytes/sec' (other units are not supported)")

    lines = text.splitlines()
    header_index, ends = _header(lines, source)
    try:
        complete_index = next(i for i, line in enumerate(lines) if line.strip() == "iozone test complete.")
    except StopIteration:
        raise TruncatedLogError(source, "iozone log ends without 'iozone test complete.'") from None

    labels = {
        "o_direct": "O_DIRECT feature enabled" in text,
        "fsync_in_timing": "Include fsync in write timing" in text,
    }
    requested = _requested(text)
    columns: set[str] | None = None
    records = []
    for number, line in enumerate(lines[header_index + 1 : complete_index], start=header_index + 2):
        if not line.strip():
            continue
        cells = list(re.finditer(r"\S+", line))
        values: dict[str, float] = {}
        previous = -1
        for cell in cells:
            # right-aligned; a value wider than its column overflows by a few characters
            distance, column = min((abs(cell.end() - end), i) for i, end in enumerate(ends))
            if distance > 2 or column <= previous:
                raise ParseError(source, f"line {number}: value {cell.group()!r} is not under a column")
            previous = column
            if not re.fullmatch(r"[0-9]+", cell.group()):
                raise ParseError(source, f"line {number}: {cell.group()!r} is not a whole number of kB/s")
            values[_COLUMNS[column][0]] = float(cell.group())
        if "file_size_kb" not in values or "record_kb" not in values or len(values) < 3:
            raise ParseError(source, f"line {number}: result row without size, record size and a result: {line.strip()!r}")
        size, record = int(values.pop("file_size_kb")), int(values.pop("record_kb"))
        # every row holds the tests that were asked for (a cell lost to a cut or an edit shows here)
        wanted = requested if requested is not None else columns
        if wanted is not None and set(values) != wanted:
            raise ParseError(source, f"line {number}: results for {sorted(values)}, the run asked for {sorted(wanted)}")
        columns = set(values)
        for metric, value in values.items():
            records.append(
                {"metric": metric, "unit": "kB/s", "value": value, "file_size_kb": size, "record_kb": record, **labels}
            )
    if not records:
        raise TruncatedLogError(source, "iozone log has no result rows before 'iozone test complete.'")
    return records
