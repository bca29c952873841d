"""fio 3.x output: ``normal`` text, ``json`` / ``json+`` and ``terse`` (version 3).

Pass **stdout** (or the ``--output`` file, or a ``2>&1`` log) as ``text``; the
format is detected. ``stderr`` may be passed too: it is only searched for errors
(in split captures ``fio: io_u error ...`` is on stderr, ``fio: pid=..., err=...``
on stdout).

* JSON is not guaranteed to be pure: error lines can precede it, even inside an
  ``--output`` file, and ``--output-format=normal,json`` puts text around it.
  Parsing starts at the first line that is exactly ``{``; a job with
  ``"error" != 0`` is rejected. ``bw`` is KiB/s, latencies are ns (here: us).
* Normal text: bandwidth units change per line (``KiB/s``, ``MiB/s``, ``GiB/s``)
  and are normalised to KiB/s; IOPS carry SI suffixes (``10.4k``, ``5581k``);
  latency blocks say ``(nsec|usec|msec)`` and values may carry ``k``; all
  latencies are normalised to microseconds. Values are as rounded as fio prints them.
* Terse v3: one ``;`` line per job, latencies already in us, bandwidth KiB/s.
* SIGTERM/SIGINT: fio prints ``fio: terminating on signal N`` and then complete
  looking results for the partial runtime (exit 128): rejected as truncated.
"""

from __future__ import annotations

import json
import re

from .errors import ParseError, ToolReportedError, TruncatedLogError, count, finite_records, number, require_one_run, unreadable

_ERRORS = [
    re.compile(r"^fio: unrecognized option.*$", re.M),
    re.compile(r"^fio: failed parsing.*$", re.M),
    re.compile(r"^fio: pid=\d+, err=[1-9]\d*.*$", re.M),
    re.compile(r"^fio: io_u error.*$", re.M),
    re.compile(r"^file:\S+, func=\S+, error=.*$", re.M),
    re.compile(r"^fio: (?!.*fallocate).*(?:error|invalid|unable to|cannot|can't|failed).*$", re.M | re.I),
]
_SIGNAL = re.compile(r"^fio: terminating on signal (\d+)\s*$", re.M)

_BINARY = {"B": 1 / 1024, "KiB": 1.0, "MiB": 1024.0, "GiB": 1024.0**2, "TiB": 1024.0**3, "PiB": 1024.0**4}
_DECIMAL = {"kB": 1000 / 1024, "MB": 1e6 / 1024, "GB": 1e9 / 1024, "TB": 1e12 / 1024}
_SI = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}
_TO_US = {"nsec": 1e-3, "usec": 1.0, "msec": 1e3, "sec": 1e6}

_NUM = r"[0-9]+(?:\.[0-9]+)?"


def _kib(number: str, unit: str, source: str) -> float:
    factor = _BINARY.get(unit, _DECIMAL.get(unit))
    if factor is None:
        raise ParseError(source, f"fio size/bandwidth unit {unit!r} is unknown")
    return float(number) * factor


def _si(text: str, source: str) -> float:
    match = re.fullmatch(rf"({_NUM})([kKMG]?)", text.strip())
    if match is None:
        raise ParseError(source, f"fio number {text!r} is not a number with an optional k/M suffix")
    return float(match.group(1)) * _SI[match.group(2)]


def _check_errors(text: str, stderr: str | None, source: str) -> None:
    for stream in (text, stderr or ""):
        for pattern in _ERRORS:
            match = pattern.search(stream)
            if match:
                raise ToolReportedError(source, f"fio reported an error: {match.group(0).strip()}")
    for stream in (text, stderr or ""):
        match = _SIGNAL.search(stream)
        if match:
            raise TruncatedLogError(
                source, f"fio was stopped ('{match.group(0).strip()}'): its results cover only part of the runtime"
            )


# --- JSON -------------------------------------------------------------------------------------

def _parse_json(text: str, start: int, source: str) -> list[dict]:
    try:
        data, _ = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError as error:
        raise TruncatedLogError(source, f"fio JSON is cut or malformed ({error.msg} at line {error.lineno})") from None
    jobs = data.get("jobs") if isinstance(data, dict) else None
    if not jobs:
        raise ParseError(source, "fio JSON has no 'jobs'")
    records: list[dict] = []
    for job in jobs:
        if job.get("error", 0) != 0:
            raise ToolReportedError(source, f"fio job {job.get('jobname')!r} ended with error {job.get('error')}")
        labels = {"job": job["jobname"], "groupid": count(job.get("groupid"), source, "fio JSON groupid"), "format": "json"}
        for direction in ("read", "write", "trim"):
            stats = job.get(direction)
            if not stats or not stats.get("total_ios"):
                continue
            out = {**labels, "direction": direction}

            def value(block: dict, key: str, where: str) -> float:
                return number(block.get(key), source, f"fio JSON job {labels['job']!r} {direction}.{where}{key}")

            records.append({"metric": "bw", "unit": "KiB/s", "value": value(stats, "bw", ""), **out})
            records.append({"metric": "iops", "unit": "IOPS", "value": value(stats, "iops", ""), **out})
            records.append({"metric": "runtime", "unit": "ms", "value": value(stats, "runtime", ""), **out})
            records.append({"metric": "io", "unit": "KiB", "value": value(stats, "io_kbytes", ""), **out})
            for kind in ("slat", "clat", "lat"):
                block = stats.get(f"{kind}_ns") or {}
                if not block.get("N"):
                    continue
                for key, stat in (("min", "min"), ("max", "max"), ("mean", "mean"), ("stddev", "stdev")):
                    records.append({"metric": f"{kind}_{stat}", "unit": "us", "value": value(block, key, f"{kind}_ns.") / 1000.0, **out})
            percentiles = (stats.get("clat_ns") or {}).get("percentile", {})
            for percentile in percentiles:
                records.append(
                    {"metric": "clat_percentile", "unit": "us", "value": value(percentiles, percentile, "clat_ns.percentile.") / 1000.0,
                     "percentile": number(percentile, source, "fio JSON percentile"), **out}
                )
    if not records:
        raise ParseError(source, "fio JSON has no job that did any I/O")
    return records


# --- terse v3 ---------------------------------------------------------------------------------

def _parse_terse(lines: list[str], source: str) -> list[dict]:
    records: list[dict] = []
    for line in lines:
        fields = line.split(";")
        if len(fields) < 121:
            raise TruncatedLogError(source, f"fio terse line has {len(fields)} fields, version 3 has at least 121")
        if fields[4] != "0":
            raise ToolReportedError(source, f"fio job {fields[2]!r} ended with error {fields[4]}")
        labels = {"job": fields[2], "groupid": count(fields[3], source, "fio terse groupid"), "format": "terse"}
        for direction, offset in (("read", 5), ("write", 46)):
            # the fields read here (KiB, bw, iops, runtime, slat/clat/lat) must be numbers; percentiles below
            f = [number(cell, source, f"fio terse field {offset + i + 1}") if i < 12 or 32 <= i < 36 else cell
                 for i, cell in enumerate(fields[offset : offset + 41])]
            if float(f[0]) == 0 and float(f[3]) == 0:  # no KiB moved, no runtime: direction unused
                continue
            out = {**labels, "direction": direction}
            records.append({"metric": "bw", "unit": "KiB/s", "value": float(f[1]), **out})
            records.append({"metric": "iops", "unit": "IOPS", "value": float(f[2]), **out})
            records.append({"metric": "runtime", "unit": "ms", "value": float(f[3]), **out})
            records.append({"metric": "io", "unit": "KiB", "value": float(f[0]), **out})
            for kind, start in (("slat", 4), ("clat", 8), ("lat", 32)):
                values = [float(v) for v in f[start : start + 4]]
                if values[1] == 0:  # not measured (e.g. slat of a sync engine)
                    continue
                for stat, value in zip(("min", "max", "mean", "stdev"), values):
                    records.append({"metric": f"{kind}_{stat}", "unit": "us", "value": value, **out})
            for cell in f[12:32]:
                percentile, _, value = cell.partition("%=")
                percentile = number(percentile, source, "fio terse percentile")
                value = number(value, source, f"fio terse {percentile}% value")
                if float(percentile) == 0:  # '0%=0' padding
                    continue
                records.append(
                    {"metric": "clat_percentile", "unit": "us", "value": float(value), "percentile": float(percentile), **out}
                )
    if not records:
        raise ParseError(source, "fio terse output has no job that did any I/O")
    return records


# --- normal text ------------------------------------------------------------------------------

_JOB = re.compile(r"^(?P<job>\S.*?): \(groupid=(?P<groupid>\d+), jobs=(?P<jobs>\d+)\): err=\s*(?P<err>\d+)")
_DIRECTION = re.compile(
    rf"^\s+(?P<dir>read|write|trim)\s*: IOPS=(?P<iops>{_NUM}[kKMG]?), BW=(?P<bw>{_NUM})(?P<bwunit>[KMGTP]?i?B)/s"
    rf" \([^)]*\)\((?P<io>{_NUM})(?P<iounit>[KMGTP]?i?B)/(?P<runtime>\d+)msec\)"
)
_LAT = re.compile(
    rf"^\s+(?P<kind>slat|clat|lat) \((?P<unit>nsec|usec|msec|sec)\): min=\s*(?P<min>{_NUM}[kKM]?),"
    rf" max=\s*(?P<max>{_NUM}[kKM]?), avg=\s*(?P<mean>{_NUM}[kKM]?), stdev=\s*(?P<stdev>{_NUM}[kKM]?)\s*$"
)
_PERCENTILES = re.compile(r"^\s+clat percentiles \((?P<unit>nsec|usec|msec|sec)\):\s*$")
_PERCENTILE = re.compile(rf"({_NUM})th=\[\s*({_NUM}[kKM]?)\]")
_GROUP = re.compile(r"^Run status group (\d+) \(all jobs\):\s*$")
_GROUP_BW = re.compile(rf"^\s+(?P<dir>READ|WRITE|TRIM): bw=(?P<bw>{_NUM})(?P<unit>[KMGTP]?i?B)/s ")


# lines the normal-text parser reads: (how the line starts, what all of it must be)
_RESULT_LINES = [
    (re.compile(r"^\S.*: \(groupid="), _JOB),
    (re.compile(r"^\s+(?:read|write|trim)\s*: "), _DIRECTION),
    (re.compile(r"^\s+(?:slat|clat|lat) \(\w+\): "), _LAT),
    (re.compile(r"^\s+\|"), re.compile(rf"^\s+\|(?:\s*{_NUM}th=\[\s*{_NUM}[kKM]?\],?)+\s*$")),
    (re.compile(r"^\s+(?:READ|WRITE|TRIM): "), _GROUP_BW),
    (re.compile(r"^Run status group "), _GROUP),
]


def _parse_normal(text: str, source: str) -> list[dict]:
    lines = text.replace("\r", "\n").splitlines()
    for number, line in enumerate(lines, start=1):
        for start, whole in _RESULT_LINES:
            if start.match(line) and not whole.match(line):
                raise unreadable(line, source, f"line {number}: fio result line", TruncatedLogError)
    records: list[dict] = []
    labels: dict | None = None
    out: dict | None = None
    percentile_unit = None
    job_groups: set[int] = set()
    group = None
    group_rows: dict[int, int] = {}
    for number, line in enumerate(lines, start=1):
        job = _JOB.match(line)
        if job:
            if job.group("err") != "0":
                raise ToolReportedError(source, f"line {number}: fio job {job.group('job')!r} ended with err={job.group('err')}")
            labels = {
                "job": job.group("job"),
                "groupid": int(job.group("groupid")),
                "jobs": int(job.group("jobs")),
                "format": "normal",
            }
            job_groups.add(labels["groupid"])
            out, percentile_unit, group = None, None, None
            continue
        heading = _GROUP.match(line)
        if heading:
            labels, out, percentile_unit = None, None, None
            group = int(heading.group(1))
            group_rows[group] = 0
            continue
        if group is not None:
            row = _GROUP_BW.match(line)
            if row:
                group_rows[group] += 1
                records.append(
                    {
                        "metric": "group_bw",
                        "unit": "KiB/s",
                        "value": _kib(row.group("bw"), row.group("unit"), source),
                        "groupid": group,
                        "direction": row.group("dir").lower(),
                        "format": "normal",
                    }
                )
            continue
        if labels is None:
            continue
        direction = _DIRECTION.match(line)
        if direction:
            out = {**labels, "direction": direction.group("dir")}
            records.append({"metric": "bw", "unit": "KiB/s", "value": _kib(direction.group("bw"), direction.group("bwunit"), source), **out})
            records.append({"metric": "iops", "unit": "IOPS", "value": _si(direction.group("iops"), source), **out})
            records.append({"metric": "runtime", "unit": "ms", "value": float(direction.group("runtime")), **out})
            records.append({"metric": "io", "unit": "KiB", "value": _kib(direction.group("io"), direction.group("iounit"), source), **out})
            percentile_unit = None
            continue
        if re.match(r"^\s+(?:fsync/fdatasync/sync_file_range:|cpu\s+:)", line):
            out, percentile_unit = None, None  # sync latencies and the job footer are not per direction
            continue
        if out is None:
            continue
        lat = _LAT.match(line)
        if lat:
            factor = _TO_US[lat.group("unit")]
            for stat in ("min", "max", "mean", "stdev"):
                records.append({"metric": f"{lat.group('kind')}_{stat}", "unit": "us", "value": _si(lat.group(stat), source) * factor, **out})
            continue
        heading = _PERCENTILES.match(line)
        if heading:
            percentile_unit = heading.group("unit")
            continue
        if percentile_unit and line.lstrip().startswith("|"):
            for percentile, value in _PERCENTILE.findall(line):
                records.append(
                    {
                        "metric": "clat_percentile",
                        "unit": "us",
                        "value": _si(value, source) * _TO_US[percentile_unit],
                        "percentile": float(percentile),
                        **out,
                    }
                )
            continue
        percentile_unit = None
    if not job_groups:
        if "Starting " in text or re.search(r"^fio-\d", text, re.M):
            raise TruncatedLogError(source, "fio log has its header but no job results (killed?)")
        raise ParseError(source, "not fio output (no job result header, no JSON, no terse line)")
    missing = sorted(g for g in job_groups if not group_rows.get(g))
    if missing:
        raise TruncatedLogError(source, f"fio log has no 'Run status group' summary rows for group(s) {missing}")
    if not any(r["metric"] == "bw" for r in records):
        raise ParseError(source, "fio log has job headers but no read/write/trim results")
    for group in sorted(job_groups):
        jobs = {r["direction"] for r in records if r["metric"] == "bw" and r["groupid"] == group}
        summary = {r["direction"] for r in records if r["metric"] == "group_bw" and r["groupid"] == group}
        if jobs != summary:
            raise TruncatedLogError(
                source, f"fio group {group}: jobs did {sorted(jobs)} but its 'Run status group' rows show {sorted(summary)}"
            )
    return records


@finite_records
def parse_fio(text: str, source: str = "<fio log>", stderr: str | None = None) -> list[dict]:
    """Return the records of one complete, error-free fio run (normal, json, json+ or terse).

    Per job and direction (labels ``job``, ``groupid``, ``direction`` read/write/trim,
    ``format``; normal text adds ``jobs``, the number of jobs a group-reported block
    covers): ``bw`` KiB/s, ``iops`` IOPS, ``runtime`` ms, ``io`` KiB,
    ``slat|clat|lat_{min,max,mean,stdev}`` us (only those fio measured) and
    ``clat_percentile`` us with a ``percentile`` label (e.g. 99.9). Normal text also
    gives ``group_bw`` KiB/s per ``Run status group`` and direction.
    """
    _check_errors(text, stderr, source)
    require_one_run(text, source, r'^\s*"fio version"\s*:', "fio")
    lines = text.splitlines(keepends=True)
    offset = 0
    for line in lines:
        if line.strip() == "{":
            return _parse_json(text, offset, source)
        offset += len(line)
    terse = [line.strip() for line in lines if re.match(r"^3;fio-", line)]
    if terse:
        return _parse_terse(terse, source)
    if not text.strip():
        raise TruncatedLogError(source, "fio output is empty")
    return _parse_normal(text, source)
