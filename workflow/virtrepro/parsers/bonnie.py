"""bonnie++ 2.00a output: the CSV line(s) and the human-readable table.

Pass **stdout** of bonnie++ as ``text`` (the table and the CSV line are on stdout;
progress lines and every error message go to stderr). A combined ``2>&1`` log
works too, and ``stderr`` may be given separately so its errors are seen.

* When CSV data rows (``1.98,2.00a,...``) are present they are used: throughput is
  exact KiB/s there. ``-q`` prints a 48-name header first although data rows have
  50 fields (two unnamed fields, seeks and seek processes, follow io_chunk_size);
  the header is ignored and fields are read by position (bon_csv2txt layout).
* Otherwise, for ``bon_csv2txt`` output (``csv2txt=True``), the text table is read; in
  bonnie++'s own stdout a table without the CSV line after it is a cut log. Its
  throughput cells carry a unit suffix ``k``/``m``/``g`` (KiB/s, MiB/s, GiB/s) and
  are normalised to KiB/s; they are rounded (``1.3g``), so prefer the CSV line.
  A value wider than its cell pushes every later cell of the row to the right,
  so cells are matched to columns from left to right with a growing offset.
* ``+++++`` (too fast to measure), ``0k +++`` (the same, as rendered by bon_csv2txt)
  and empty cells (test skipped, e.g. per-char tests with ``-f``) give no throughput
  or %CPU record; the test's latency, which bonnie++ still measures, is kept.
* Latencies (``us``/``ms``/``s`` suffix) are normalised to microseconds.

Errors (all bonnie++ errors exit 1 and print ``usage:``) raise ToolReportedError;
a log with progress lines but no results (killed) raises TruncatedLogError.
"""

from __future__ import annotations

import re

from .errors import ParseError, ToolReportedError, TruncatedLogError, count, finite_records, unreadable

_ERRORS = [
    re.compile(r"^.*invalid option.*$", re.M),
    re.compile(r'^You must use the "-u" switch.*$', re.M),
    re.compile(r"^File size should be double RAM.*$", re.M),
    re.compile(r"^Can't .*$", re.M),
    re.compile(r"^Can not .*$", re.M),
    re.compile(r"^usage:$", re.M),
]

# (metric, unit) of the I/O columns in table order; CSV fields 10..21 hold (value, cpu) pairs.
_IO = [
    ("putc", "KiB/s"),  # sequential output, per character
    ("put_block", "KiB/s"),  # sequential output, block
    ("rewrite", "KiB/s"),
    ("getc", "KiB/s"),  # sequential input, per character
    ("get_block", "KiB/s"),  # sequential input, block
    ("seeks", "seeks/s"),  # random seeks
]
# file operations, CSV fields 27..38; the table calls stat "Read".
_FILES = [
    ("seq_create", "files/s"),
    ("seq_stat", "files/s"),
    ("seq_del", "files/s"),
    ("ran_create", "files/s"),
    ("ran_stat", "files/s"),
    ("ran_del", "files/s"),
]

_THROUGHPUT_SUFFIX = {"k": 1.0, "m": 1024.0, "g": 1024.0 * 1024.0}
_LATENCY_SUFFIX = {"us": 1.0, "ms": 1000.0, "s": 1_000_000.0}


def _too_fast(cell: str) -> bool:
    return cell == "" or set(cell) == {"+"}


def _throughput(cell: str, source: str) -> float:
    """``2719k``/``277m``/``1.3g`` -> KiB/s; a bare number (CSV) is already KiB/s."""
    match = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)([kmg]?)", cell)
    if match is None:
        raise unreadable(cell, source, "bonnie++ throughput (a number with a k/m/g suffix)")
    return float(match.group(1)) * _THROUGHPUT_SUFFIX.get(match.group(2), 1.0)


def _plain(cell: str, source: str) -> float:
    if not re.fullmatch(r"[0-9]+(?:\.[0-9]+)?", cell):
        raise ParseError(source, f"bonnie++ value {cell!r} is not a number")
    return float(cell)


def _latency(cell: str, source: str) -> float:
    match = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)(us|ms|s)", cell)
    if match is None:
        raise ParseError(source, f"bonnie++ latency {cell!r} has no us/ms/s unit")
    return float(match.group(1)) * _LATENCY_SUFFIX[match.group(2)]


def _add_test(records, labels, metric, unit, value_cell, cpu_cell, latency_cell, source, table):
    """One test: throughput/rate and %CPU unless skipped or too fast; latency whenever printed.

    A skipped test leaves value, %CPU and latency empty; a test that ran prints all three
    (``+++++``/``+++`` when too fast). Anything else is a damaged cell.
    """
    skipped = value_cell == "" and cpu_cell == ""
    if (value_cell == "") != (cpu_cell == "") or skipped != (latency_cell == ""):
        raise ParseError(
            source, f"bonnie++ {metric}: value {value_cell!r}, %CPU {cpu_cell!r}, latency {latency_cell!r} do not belong"
            " together (a test that ran prints all three, a skipped one none)"
        )
    too_fast = _too_fast(value_cell) or (table and value_cell == "0k" and cpu_cell == "+++")
    if not too_fast:
        value = _throughput(value_cell, source) if unit == "KiB/s" else _plain(value_cell, source)
        records.append({"metric": metric, "unit": unit, "value": value, **labels})
        if cpu_cell and not _too_fast(cpu_cell):
            records.append({"metric": f"{metric}_cpu", "unit": "%", "value": _plain(cpu_cell, source), **labels})
    if latency_cell:
        records.append({"metric": f"{metric}_latency", "unit": "us", "value": _latency(latency_cell, source), **labels})


def _parse_csv(rows: list[str], source: str) -> list[dict]:
    records: list[dict] = []
    for run, row in enumerate(rows):
        fields = row.split(",")
        if len(fields) != 50:
            raise ParseError(source, f"bonnie++ CSV row {run + 1} has {len(fields)} fields, expected 50 (format 1.98)")
        labels = {
            "run": run,
            "bonnie_version": fields[1],
            "machine": fields[2],
            "concurrency": count(fields[3], source, "bonnie++ CSV concurrency"),
            "file_size": fields[5],
            "num_files_k": count(fields[21], source, "bonnie++ CSV number of files") if fields[21] else None,
            "from": "csv",
        }
        if fields[21] == "" and any(fields[26:38]):
            raise ParseError(source, f"bonnie++ CSV row {run + 1} has file-creation results but no number of files")
        for i, (metric, unit) in enumerate(_IO):
            _add_test(records, labels, metric, unit, fields[9 + 2 * i], fields[10 + 2 * i], fields[38 + i], source, False)
        for i, (metric, unit) in enumerate(_FILES):
            _add_test(records, labels, metric, unit, fields[26 + 2 * i], fields[27 + 2 * i], fields[44 + i], source, False)
    return records


def _cells(line: str, ends: list[int], first: int, number: int, source: str) -> list[str]:
    """Right-aligned cells of a row, matched to column ends left to right.

    A value wider than its column (``188106`` in a 5-wide cell) pushes the rest of
    the row right by the overflow, so the allowed offset grows as we go.
    """
    cells = [""] * len(ends)
    shift = 0
    previous = -1
    for match in re.finditer(r"\S+", line):
        if match.end() <= first:
            continue
        for column in range(previous + 1, len(ends)):
            overflow = match.end() - (ends[column] + shift)
            if overflow <= 3:
                break
        else:
            raise ParseError(source, f"line {number}: {match.group()!r} is right of the last bonnie++ column")
        if overflow < 0:
            raise ParseError(source, f"line {number}: {match.group()!r} is not under a bonnie++ column")
        shift += overflow
        previous = column
        cells[column] = match.group()
    return cells


def _no_latency(number: int, source: str) -> TruncatedLogError:
    # bonnie++ 2.00 (and bon_csv2txt) print a Latency row under every result row
    return TruncatedLogError(source, f"line {number}: bonnie++ result row without the Latency row under it (cut?)")


def _parse_table(lines: list[str], source: str) -> list[dict]:
    records: list[dict] = []
    section = None  # ("io"|"files", column ends, width of the name field)
    runs = {"io": 0, "files": 0}
    pending = None  # (section kind, labels, values cells) waiting for its Latency row
    for number, line in enumerate(lines, start=1):
        words = line.split()
        if line.lstrip().startswith("Name:Size etc") or (words[:1] in (["files"], ["files:max:min"]) and "/sec" in words):
            ends = [m.end() for m in re.finditer(r"\S+", line)]
            kind = "io" if words[0].startswith("Name") else "files"
            if len(ends) < 13 or words[-12:] != ["/sec", "%CP"] * 6:
                raise unreadable(line, source, "bonnie++ table header", TruncatedLogError)
            # name/size (or files spec) field ends where the first 5-wide /sec cell starts
            section = (kind, ends[-12:], ends[-12] - 5)
            continue
        if section is None or not line.strip():
            continue
        kind, ends, first = section
        if words[0] == "Latency":
            if pending is None:
                raise ParseError(source, f"line {number}: bonnie++ Latency row without a result row above it")
            latency = _cells(line, [e - 2 for e in ends[1::2]], first, number, source)
            _emit(records, *pending, latency, source)
            pending = None
            continue
        if words[0] in ("Version",) or words[0].startswith("-") or "/sec" in words:
            if pending is not None:
                raise _no_latency(number, source)
            if words[0] == "Version" or words[0].startswith("--"):
                section = None
            continue
        if pending is not None:
            raise _no_latency(number, source)
        cells = _cells(line, ends, first, number, source)
        prefix = [m.group() for m in re.finditer(r"\S+", line) if m.end() <= first]
        labels = {"run": runs[kind], "from": "table"}
        if kind == "io":
            labels["machine"] = prefix[0] if prefix else None
            labels["file_size"] = prefix[1].split(":")[0] if len(prefix) > 1 else None
        else:
            spec = prefix[-1] if prefix else ""
            labels["num_files_k"] = count(spec.split(":")[0], source, f"line {number}: bonnie++ number of files")
        runs[kind] += 1
        pending = (kind, labels, cells)
    if pending is not None:
        raise _no_latency(len(lines) + 1, source)
    if runs["io"] != runs["files"]:
        raise TruncatedLogError(
            source, f"bonnie++ table has {runs['io']} I/O row(s) but {runs['files']} file-creation row(s) (cut?)"
        )
    return records


def _emit(records, kind, labels, cells, latency, source):
    tests = _IO if kind == "io" else _FILES
    for i, (metric, unit) in enumerate(tests):
        _add_test(records, labels, metric, unit, cells[2 * i], cells[2 * i + 1], latency[i], source, True)


@finite_records
def parse_bonnie(
    text: str,
    source: str = "<bonnie++ log>",
    stderr: str | None = None,
    expected_runs: int | None = None,
    csv2txt: bool = False,
) -> list[dict]:
    """Return records of a complete bonnie++ run from its stdout (or ``2>&1`` log).

    Each record: ``metric`` (putc, put_block, rewrite, getc, get_block, seeks,
    seq_create, seq_stat, seq_del, ran_create, ran_stat, ran_del, each also as
    ``<test>_cpu`` in % and ``<test>_latency`` in us), ``unit`` (KiB/s, seeks/s,
    files/s, %, us), ``value``, and labels ``run`` (0-based, one per ``-x`` repetition),
    ``from`` ("csv" or "table"), ``machine``/``file_size``/``num_files_k`` where known.
    ``expected_runs`` (the ``-x`` count) makes a log with fewer result rows an error.
    ``csv2txt``: the text is ``bon_csv2txt`` output (a table without CSV line). bonnie++'s
    own stdout always ends with its CSV line, so there a table without it is a cut log.
    """
    for stream in (text, stderr or ""):
        for pattern in _ERRORS:
            match = pattern.search(stream)
            if match:
                raise ToolReportedError(source, f"bonnie++ reported an error: {match.group(0).strip()}")
    lines = text.splitlines()
    csv_rows = [line.strip() for line in lines if re.match(r"^[0-9]+\.[0-9]+,", line.strip())]
    if csv_rows:
        records = _parse_csv(csv_rows, source)
    elif any(line.lstrip().startswith("Name:Size etc") for line in lines):
        if not csv2txt:
            raise TruncatedLogError(source, "bonnie++ output has its table but not the CSV line that ends it (cut?)")
        records = _parse_table(lines, source)
    elif re.search(r"^(Using uid:|Writing |Rewriting|Reading |start 'em|Create files|Stat files|Delete files)", text + (stderr or ""), re.M):
        raise TruncatedLogError(source, "bonnie++ log has progress lines but no result table or CSV line (killed?)")
    elif not text.strip():
        raise TruncatedLogError(source, "bonnie++ output is empty (no result table or CSV line)")
    else:
        raise ParseError(source, "not a bonnie++ result (no CSV line and no 'Name:Size etc' table)")
    if not records:
        raise ParseError(source, "bonnie++ result has no measured value (every test skipped or too fast)")
    runs = len({r["run"] for r in records})
    if expected_runs is not None and runs < expected_runs:
        raise TruncatedLogError(source, f"bonnie++ log has {runs} result rows, {expected_runs} were requested (-x)")
    return records
