"""ioping 1.3 output: human-readable summary, ``-B``/``-p`` raw lines, ``-J`` JSON.

Pass **stdout** (or a ``2>&1`` log) as ``text``; ``stderr`` may be given too, it is
only searched for errors. The format is detected:

* text: per-request rows, then ``--- ... ioping statistics ---`` and the lines
  ``N requests completed in T, S read|written, I iops, B/s``,
  ``generated N requests in T, S, I iops, B/s`` and
  ``min/avg/max/mdev = a us / b ms / ...``. Time units switch (``us``/``ms``/``s``),
  sizes/rates switch (``KiB``/``MiB``), counts may carry ``k`` (``55.5 k requests``):
  latencies are normalised to us, rates to KiB/s.
* raw (``-B`` or ``-q -p N``): lines of 10 integers: count, time ns, iops,
  bytes/s, min/avg/max/mdev ns, total requests, total time ns. Each line is
  returned with a ``line`` label; with ``-B`` the last line is the whole run.
* ``-J``: a JSON array of one object per request and a final one with
  ``stat``/``load``; a run killed by SIGTERM leaves the array without ``]``.

A SIGTERM leaves rows without the statistics block (rejected). **SIGINT prints the
full statistics** (exit 0), exactly like ioping's normal way to stop a run
without ``-c``: only the caller knows how many requests were asked for, so pass
``expected_requests`` (the ``-c`` count) to reject a run that was cut short.
"""

from __future__ import annotations

import json
import re

from .errors import ParseError, ToolReportedError, TruncatedLogError, finite_records, number, require_one_run, unreadable

_ERRORS = [
    re.compile(r"^ioping: .*$", re.M),
    re.compile(r"^\s*Usage: ioping.*$", re.M),
]
_TIME_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6, "min": 60e6, "hour": 3600e6}
_SIZE_KIB = {"B": 1 / 1024, "KiB": 1.0, "MiB": 1024.0, "GiB": 1024.0**2, "TiB": 1024.0**3}
_SI = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9}
_N = r"[0-9]+(?:\.[0-9]+)?"

_DONE = re.compile(
    rf"^(?P<count>{_N})(?: (?P<cs>[kMG]))? requests completed in (?P<time>{_N}) (?P<tu>ns|us|ms|s|min|hour),"
    rf" (?P<size>{_N}) (?P<su>B|KiB|MiB|GiB|TiB) (?P<op>read|written),"
    rf" (?P<iops>{_N})(?: (?P<is>[kMG]))? iops, (?P<bw>{_N}) (?P<bu>B|KiB|MiB|GiB|TiB)/s\s*$",
    re.M,
)
_GENERATED = re.compile(
    rf"^generated (?P<count>{_N})(?: (?P<cs>[kMG]))? requests in (?P<time>{_N}) (?P<tu>ns|us|ms|s|min|hour),"
    rf" (?P<size>{_N}) (?P<su>B|KiB|MiB|GiB|TiB), (?P<iops>{_N})(?: (?P<is>[kMG]))? iops,"
    rf" (?P<bw>{_N}) (?P<bu>B|KiB|MiB|GiB|TiB)/s\s*$",
    re.M,
)
_LAT = re.compile(
    rf"^min/avg/max/mdev = (?P<min>{_N}) (?P<minu>ns|us|ms|s) / (?P<avg>{_N}) (?P<avgu>ns|us|ms|s) /"
    rf" (?P<max>{_N}) (?P<maxu>ns|us|ms|s) / (?P<mdev>{_N}) (?P<mdevu>ns|us|ms|s)\s*$",
    re.M,
)
_ROW = re.compile(rf"^(?P<size>{_N}) (?P<su>B|KiB|MiB|GiB|TiB) (?P<dir><<<|>>>) .*: request=(?P<n>\d+) time=", re.M)
_RAW = re.compile(r"^\d+(?: \d+){9}\s*$")


def _si(number: str, suffix: str | None) -> float:
    return float(number) * _SI[suffix or ""]


_STAT = ("count", "time", "iops", "bps", "min", "avg", "max", "mdev")


def _check_count(generated: float, expected: int | None, source: str) -> None:
    if expected is not None and generated < expected:
        raise TruncatedLogError(
            source, f"ioping generated {generated:g} requests but {expected} were requested (stopped by a signal?)"
        )


def _stat_records(stat: dict, labels: dict, source: str) -> list[dict]:
    """``stat`` in base units: count, time ns, iops, bps B/s, min/avg/max/mdev ns."""
    stat = {key: number(stat.get(key), source, f"ioping stat {key}") for key in _STAT}
    records = [
        {"metric": "requests", "unit": "requests", "value": float(stat["count"]), **labels},
        {"metric": "total_time", "unit": "us", "value": stat["time"] / 1000.0, **labels},
        {"metric": "iops", "unit": "IOPS", "value": float(stat["iops"]), **labels},
        {"metric": "bandwidth", "unit": "KiB/s", "value": stat["bps"] / 1024.0, **labels},
    ]
    for key in ("min", "avg", "max", "mdev"):
        records.append({"metric": f"latency_{key}", "unit": "us", "value": stat[key] / 1000.0, **labels})
    return records


def _parse_json(text: str, source: str, expected: int | None) -> list[dict]:
    try:
        items = json.loads(text)
    except json.JSONDecodeError as error:
        if text.rstrip().endswith("}"):
            raise TruncatedLogError(source, "ioping JSON array is not closed with ']' (killed?)") from None
        raise ParseError(source, f"ioping JSON is malformed ({error.msg} at line {error.lineno})") from None
    if not isinstance(items, list) or not items or "stat" not in items[-1]:
        raise TruncatedLogError(source, "ioping JSON has no final object with 'stat' (killed?)")
    final = items[-1]
    _check_count(number(final.get("load", {}).get("count", 0), source, "ioping load count"), expected, source)
    requests = [item["io"] for item in items if "io" in item]
    labels = {"format": "json", "operation": requests[0]["operation"] if requests else None}
    if requests:
        labels["request_size_kib"] = number(requests[0].get("size"), source, "ioping request size") / 1024.0
    records = _stat_records(final["stat"], labels, source)
    load = final.get("load")
    if load:
        records.append({"metric": "generated_iops", "unit": "IOPS", "value": number(load.get("iops"), source, "ioping load iops"), **labels})
        records.append({"metric": "generated_bandwidth", "unit": "KiB/s",
                        "value": number(load.get("bps"), source, "ioping load bps") / 1024.0, **labels})
    return records


def _parse_raw(lines: list[str], source: str, expected: int | None) -> list[dict]:
    records: list[dict] = []
    for index, line in enumerate(lines):
        v = [int(x) for x in line.split()]
        stat = dict(zip(("count", "time", "iops", "bps", "min", "avg", "max", "mdev"), v[:8]))
        records.extend(_stat_records(stat, {"format": "raw", "line": index}, source))
    totals = [int(line.split()[8]) for line in lines]
    if len(lines) == 1 or expected is None:
        _check_count(totals[-1], expected, source)
    elif sum(totals) + min(totals) <= expected:
        # -p N prints a line per N requests and never the incomplete remainder
        raise TruncatedLogError(
            source, f"ioping raw lines cover {sum(totals)} requests, {expected} were requested (stopped by a signal?)"
        )
    return records


def _parse_text(text: str, source: str, expected: int | None) -> list[dict]:
    rows = list(_ROW.finditer(text))
    if "ioping statistics ---" not in text:
        if rows:
            raise TruncatedLogError(source, f"ioping log has {len(rows)} request rows but no statistics (killed?)")
        raise ParseError(source, "not ioping output (no statistics block, no raw line, no JSON)")
    done, generated, lat = _DONE.search(text), _GENERATED.search(text), _LAT.search(text)
    for match, start in ((done, r"^.*requests completed in "), (generated, r"^generated "), (lat, r"^min/avg/max/mdev = ")):
        line = re.search(start + ".*$", text, re.M)
        if match is None and line is not None:  # the line is there but a value in it is not (nan, cut, ...)
            raise unreadable(line.group(0), source, "ioping statistics line", TruncatedLogError)
    if done is None or lat is None:
        raise TruncatedLogError(source, "ioping statistics block lacks 'requests completed' or 'min/avg/max/mdev'")
    if generated is not None:
        _check_count(_si(generated.group("count"), generated.group("cs")), expected, source)
    elif expected is not None:
        raise ParseError(source, "ioping statistics lack the 'generated N requests' line to check the count against")
    labels: dict = {"format": "text", "operation": "read" if done.group("op") == "read" else "write"}
    if rows:
        labels["request_size_kib"] = float(rows[0].group("size")) * _SIZE_KIB[rows[0].group("su")]
    records = [
        {"metric": "requests", "unit": "requests", "value": _si(done.group("count"), done.group("cs")), **labels},
        {"metric": "total_time", "unit": "us", "value": float(done.group("time")) * _TIME_US[done.group("tu")], **labels},
        {"metric": "iops", "unit": "IOPS", "value": _si(done.group("iops"), done.group("is")), **labels},
        {"metric": "bandwidth", "unit": "KiB/s", "value": float(done.group("bw")) * _SIZE_KIB[done.group("bu")], **labels},
    ]
    for key in ("min", "avg", "max", "mdev"):
        records.append(
            {"metric": f"latency_{key}", "unit": "us", "value": float(lat.group(key)) * _TIME_US[lat.group(key + "u")], **labels}
        )
    if generated is not None:
        records.append({"metric": "generated_iops", "unit": "IOPS", "value": _si(generated.group("iops"), generated.group("is")), **labels})
        records.append(
            {"metric": "generated_bandwidth", "unit": "KiB/s", "value": float(generated.group("bw")) * _SIZE_KIB[generated.group("bu")], **labels}
        )
    return records


@finite_records
def parse_ioping(
    text: str, source: str = "<ioping log>", stderr: str | None = None, expected_requests: int | None = None
) -> list[dict]:
    """Return the summary records of one complete ioping run.

    Records: ``requests`` (valid requests, warm-up excluded), ``total_time`` us,
    ``iops`` IOPS, ``bandwidth`` KiB/s, ``latency_{min,avg,max,mdev}`` us, and
    (text/JSON) ``generated_iops``/``generated_bandwidth`` for the whole run incl.
    the delays between requests. Labels: ``format`` (text/raw/json), ``operation``
    (read/write), ``request_size_kib`` when rows show it, ``line`` for raw output.
    ``expected_requests`` is the ``-c`` count: fewer generated requests is a truncation.
    """
    for stream in (text, stderr or ""):
        for pattern in _ERRORS:
            match = pattern.search(stream)
            if match:
                raise ToolReportedError(source, f"ioping reported an error: {match.group(0).strip()}")
    stripped = text.strip()
    if not stripped:
        raise TruncatedLogError(source, "ioping output is empty")
    require_one_run(text, source, r"^--- .* \(.*\) ioping statistics ---$", "ioping")
    if stripped.startswith("["):
        return _parse_json(stripped, source, expected_requests)
    lines = [line for line in text.splitlines() if line.strip()]
    if all(_RAW.match(line) for line in lines):
        return _parse_raw(lines, source, expected_requests)
    return _parse_text(text, source, expected_requests)
