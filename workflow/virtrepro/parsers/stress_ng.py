"""stress-ng 0.15 output (``--metrics`` / ``--metrics-brief``, optional ``--yaml`` file).

stress-ng writes **everything to stderr** (stdout only gets the ``Try 'stress-ng
--help'`` hint), so pass the **stderr** text (or a ``2>&1`` log) as ``text``;
``stdout`` may be passed too and is only searched for errors. Every line starts
``stress-ng: <level>: [pid] `` (``info:``, ``metrc:``, ``fail:``, ``error:``...).

A run killed by SIGTERM or SIGINT still prints the full metrics table,
``successful run completed in 4.00s`` and exits 0. The only trace is the duration:
``setting to a 60 second run per stressor`` vs. ``completed in 4.00s``. This parser
rejects a run that ended before the duration stress-ng announced, and before
``expected_seconds`` (the ``--timeout`` the caller asked for) when that is given.

Also rejected: ``fail:``/``error:`` lines, ``unsuccessful run``, option errors,
``aborting: ...``, an invalid method list, and the stream stressor's
``run duration too short to determine memory rate`` (its main result is missing).
"""

from __future__ import annotations

import math
import re

from .errors import ParseError, ToolReportedError, TruncatedLogError, finite_records, number, unreadable

_LINE = re.compile(r"^stress-ng: (?P<level>[a-z]+):\s*\[(?P<pid>\d+)\] (?P<msg>.*?)\s*$")
_ERRORS = [
    re.compile(r"^stress-ng: (?:fail|error):.*$", re.M),
    re.compile(r"^stress-ng: .*unsuccessful run completed.*$", re.M),
    re.compile(r"^stress-ng: unrecognized option.*$", re.M),
    re.compile(r"^stress-ng: (?:invalid|unknown).*$", re.M | re.I),
    re.compile(r"^aborting: .*$", re.M),
    re.compile(r"^.*must be one of: .*$", re.M),
    re.compile(r"^Try 'stress-ng --help'.*$", re.M),
    re.compile(r"^stress-ng: .*run duration too short to determine memory rate.*$", re.M),
]
_N = r"[0-9]+(?:\.[0-9]+)?"
_ROW = re.compile(
    rf"^(?P<stressor>[a-z][a-z0-9_-]*)\s+(?P<ops>\d+)\s+(?P<real>{_N})\s+(?P<usr>{_N})\s+(?P<sys>{_N})"
    rf"\s+(?P<rate_real>{_N})\s+(?P<rate_cpu>{_N})(?:\s+(?P<cpu_pct>{_N})\s+(?P<rss>\d+))?$"
)
_MISC = re.compile(
    rf"^(?P<stressor>[a-z][a-z0-9_-]*)\s+(?P<value>{_N}) (?P<desc>.+?)"
    r" \((?:geometic|geometric|harmonic|arithmetic)? ?mean of (?P<n>\d+) instances?\)$"
)
_STREAM = re.compile(
    rf"^stream: memory rate: (?P<read>{_N}) MB read/sec, (?P<write>{_N}) MB write/sec, (?P<flops>{_N}) Mflop/sec"
)
# stream's miscellaneous metrics (metric, unit as printed) -> the per-instance record they average
_STREAM_MEAN = {
    ("memory_read_rate", "MB/s"): "memory_read_rate",
    ("memory_write_rate", "MB/s"): "memory_write_rate",
    ("memory_rate", "Mflop/s"): "mflops",
}
_DURATION_UNITS = {"day": 86400.0, "hour": 3600.0, "min": 60.0, "minute": 60.0, "sec": 1.0, "second": 1.0}


def _seconds(text: str) -> float | None:
    """'60 second' / '1 min, 0.00 secs' / '1 day, 2 hours, ...' -> seconds."""
    parts = re.findall(rf"({_N})\s*(day|hour|minute|min|second|sec)s?\b", text)
    if not parts:
        return None
    return sum(float(number) * _DURATION_UNITS[unit] for number, unit in parts)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _misc_metric(desc: str) -> tuple[str, str]:
    """'MB/sec read rate' -> ('read_rate', 'MB/s'); 'add matrix ops per sec' -> ('add_matrix_ops_per_second', 'ops/s')."""
    words = desc.split()
    unit = re.fullmatch(r"(.*?) \((\S+) per sec(?:ond)?\)", desc)
    if unit:  # 'memory read rate (MB per sec)'
        return _slug(unit.group(1)), f"{unit.group(2)}/s"
    if "/" in words[0]:
        return _slug(" ".join(words[1:])), words[0].replace("/sec", "/s")
    match = re.fullmatch(r"(.*?)(\S+) per sec(?:ond)?", desc)
    if match:
        return _slug(desc.replace(" per sec", " per second")), f"{match.group(2)}/s"
    return _slug(desc), ""


def _check_stream_means(records: list[dict], means: list[tuple[str, float, int]], source: str) -> None:
    """stream prints each rate per instance (info) and their geometric mean (metrc): report the
    instances once, and refuse a log where the two disagree (a value damaged in one of them)."""
    for metric, mean, instances in means:
        values = [r["value"] for r in records if r["metric"] == metric and r.get("stressor") == "stream"]
        if len(values) != instances or not values or min(values) <= 0:
            raise ParseError(source, f"stress-ng stream {metric}: a mean of {instances} instance(s) but {len(values)} 'memory rate' line(s)")
        expected = math.exp(sum(math.log(v) for v in values) / len(values))
        if abs(expected - mean) > 0.006 + 1e-4 * mean:  # both are printed with two decimals
            raise ParseError(source, f"stress-ng stream {metric}: mean {mean} but the instances give {expected:.2f}")


def _check_duration(requested: float | None, actual: float, expected: float | None, source: str, what: str,
                    tolerance: float = 0.01, slack: float = 0.1) -> None:
    """Reject a run that lasted less than asked, allowing ``tolerance`` (a fraction, at least ``slack`` s)."""
    for wanted, origin in ((requested, "stress-ng announced"), (expected, "the caller requested")):
        if wanted is not None and actual + max(slack, tolerance * wanted) < wanted:
            raise TruncatedLogError(
                source, f"stress-ng {what} {actual:g}s but {origin} {wanted:g}s per stressor: the run was cut short (signal?)"
            )


@finite_records
def parse_stress_ng(
    text: str, source: str = "<stress-ng log>", expected_seconds: float | None = None, stdout: str | None = None
) -> list[dict]:
    """Return the records of one complete stress-ng run from its stderr (or ``2>&1`` log).

    Per stressor (labels ``stressor``, ``instances``): ``bogo_ops`` (bogo-ops),
    ``real_time``/``usr_time``/``sys_time`` (s), ``bogo_ops_per_second_real`` and
    ``bogo_ops_per_second_usr_sys`` (bogo-ops/s); with ``--metrics`` also
    ``cpu_used_per_instance`` (%) and ``rss_max`` (KB). Miscellaneous metrics become
    records named after their description (``read_rate`` MB/s for hdd,
    ``add_matrix_ops_per_second`` ops/s, ...; label ``miscellaneous: True``, units as
    printed, MB = stress-ng's MB); stream's ``memory rate`` line gives
    ``memory_read_rate``/``memory_write_rate`` (MB/s) and ``mflops`` (Mflop/s) per
    instance. ``run_time`` (s) is the whole run. ``expected_seconds`` is the requested
    ``--timeout``: a run that announced or lasted less is rejected.
    """
    for stream in (text, stdout or ""):
        for pattern in _ERRORS:
            match = pattern.search(stream)
            if match:
                raise ToolReportedError(source, f"stress-ng reported an error: {match.group(0).strip()}")
    messages = []
    for line in text.splitlines():
        match = _LINE.match(line)
        if match:
            messages.append((match.group("level"), match.group("msg")))
        elif line.startswith("stress-ng: "):  # its pid or level damaged: the line cannot be placed
            raise unreadable(line, source, "stress-ng line")
    if not messages:
        if not text.strip():
            raise TruncatedLogError(source, "stress-ng output is empty (its results are on stderr: was stdout passed?)")
        raise ParseError(source, "not stress-ng output (no 'stress-ng: <level>: [pid]' lines)")

    completed = [re.fullmatch(rf"successful run completed in ({_N})\s*s(?:ecs?)?", msg) for _, msg in messages]
    completed = [m for m in completed if m]
    if not completed:
        raise TruncatedLogError(source, "stress-ng log ends without 'successful run completed in ...' (killed?)")
    run_time = float(completed[-1].group(1))

    requested = None
    instances: dict[str, int] = {}
    for _, msg in messages:
        setting = re.fullmatch(r"setting to a (.+?) run per stressor", msg)
        if setting:
            requested = _seconds(setting.group(1))
        hogs = re.fullmatch(r"dispatching hogs: (.+)", msg)
        if hogs and not re.fullmatch(r"\d+ [a-z][a-z0-9_-]*(?:, \d+ [a-z][a-z0-9_-]*)*", hogs.group(1)):
            raise unreadable(msg, source, "stress-ng 'dispatching hogs' line")
        if hogs:
            for count, name in re.findall(r"(\d+) ([a-z][a-z0-9_-]*)", hogs.group(1)):
                instances[name] = int(count)
    if expected_seconds is not None and requested is not None and abs(requested - expected_seconds) > 0.5:
        raise ParseError(
            source, f"stress-ng ran with a {requested:g}s timeout per stressor, the caller requested {expected_seconds:g}s"
        )
    _check_duration(requested, run_time, expected_seconds, source, "completed in")

    records: list[dict] = []
    in_misc = False
    stream_instance = 0
    stream_means: list[tuple[str, float, int]] = []
    for level, msg in messages:
        if level == "metrc":
            if msg.startswith("miscellaneous metrics"):
                in_misc = True
                continue
            if msg.startswith("stressor ") or msg.lstrip().startswith("(secs)"):
                in_misc = False
                continue
            if in_misc:
                misc = _MISC.match(msg)
                if misc is None:
                    raise ParseError(source, f"stress-ng miscellaneous metric not understood: {msg!r}")
                metric, unit = _misc_metric(misc.group("desc"))
                if misc.group("stressor") == "stream" and (metric, unit) in _STREAM_MEAN:
                    # the mean over instances of the per-instance 'memory rate' lines read below
                    stream_means.append((_STREAM_MEAN[(metric, unit)], float(misc.group("value")), int(misc.group("n"))))
                    continue
                records.append(
                    {
                        "metric": metric,
                        "unit": unit,
                        "value": float(misc.group("value")),
                        "stressor": misc.group("stressor"),
                        "instances": int(misc.group("n")),
                        "miscellaneous": True,
                    }
                )
                continue
            row = _ROW.match(msg)
            if row is None:
                raise ParseError(source, f"stress-ng metrics row not understood: {msg!r}")
            stressor = row.group("stressor")
            labels = {"stressor": stressor, "instances": instances.get(stressor)}
            # a stressor's real time is the mean over its instances, which start one after another:
            # under contention (a container, a busy host) it is below the timeout although the run
            # was complete, by a start delay that does not scale with the run (0.19 s of a 1 s run
            # for vm workers mapping 256 MB in a TCG guest); a run cut short shows in the whole
            # run's time (checked above)
            _check_duration(requested, float(row.group("real")), expected_seconds, source, f"{stressor} ran for",
                            tolerance=0.1, slack=0.5)
            for metric, key, unit in (
                ("bogo_ops", "ops", "bogo-ops"),
                ("real_time", "real", "s"),
                ("usr_time", "usr", "s"),
                ("sys_time", "sys", "s"),
                ("bogo_ops_per_second_real", "rate_real", "bogo-ops/s"),
                ("bogo_ops_per_second_usr_sys", "rate_cpu", "bogo-ops/s"),
                ("cpu_used_per_instance", "cpu_pct", "%"),
                ("rss_max", "rss", "KB"),
            ):
                if row.group(key) is not None:
                    records.append({"metric": metric, "unit": unit, "value": float(row.group(key)), **labels})
        elif level == "info":
            stream = _STREAM.match(msg)
            if stream:
                labels = {"stressor": "stream", "instance": stream_instance, "miscellaneous": True}
                stream_instance += 1
                records.append({"metric": "memory_read_rate", "unit": "MB/s", "value": float(stream.group("read")), **labels})
                records.append({"metric": "memory_write_rate", "unit": "MB/s", "value": float(stream.group("write")), **labels})
                records.append({"metric": "mflops", "unit": "Mflop/s", "value": float(stream.group("flops")), **labels})
    _check_stream_means(records, stream_means, source)
    if not any(r["metric"] == "bogo_ops" for r in records):
        raise ParseError(source, "stress-ng log has no metrics rows: run it with --metrics or --metrics-brief")
    records.append({"metric": "run_time", "unit": "s", "value": run_time, "stressor": None, "instances": None})
    return records


_YAML_METRICS = {
    "bogo-ops": ("bogo_ops", "bogo-ops"),
    "bogo-ops-per-second-real-time": ("bogo_ops_per_second_real", "bogo-ops/s"),
    "bogo-ops-per-second-usr-sys-time": ("bogo_ops_per_second_usr_sys", "bogo-ops/s"),
    "wall-clock-time": ("real_time", "s"),
    "user-time": ("usr_time", "s"),
    "system-time": ("sys_time", "s"),
    "cpu-usage-per-instance": ("cpu_used_per_instance", "%"),
    "max-rss": ("rss_max", "KB"),
}


@finite_records
def parse_stress_ng_yaml(text: str, source: str = "<stress-ng yaml>", expected_seconds: float | None = None) -> list[dict]:
    """Records from the ``--yaml FILE`` written by stress-ng (same metric names as the log).

    The YAML file says nothing about signals or failures: parse the stderr log with
    :func:`parse_stress_ng` as well. Here a stressor whose ``wall-clock-time`` is below
    ``expected_seconds`` is rejected. Extra per-stressor keys (``add-matrix-ops-per-sec``)
    become ``miscellaneous`` records with underscores and unit ``ops/s``/as named.
    """
    import yaml  # PyYAML is pinned in envs/requirements.txt; imported here so the text parser needs nothing

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ParseError(source, f"stress-ng YAML does not parse: {error}") from None
    if not re.search(r"^\.\.\.\s*$", text, re.M):
        raise TruncatedLogError(source, "stress-ng YAML ends without its '...' end-of-document line (cut)")
    if not isinstance(data, dict) or not data.get("metrics"):
        raise TruncatedLogError(source, "stress-ng YAML has no 'metrics' list (run without --metrics, or cut)")
    records: list[dict] = []
    for entry in data["metrics"]:
        stressor = entry.get("stressor")
        if stressor is None or "bogo-ops" not in entry:
            raise ParseError(source, f"stress-ng YAML metrics entry without stressor/bogo-ops: {entry!r}")
        wall = entry.get("wall-clock-time")
        if expected_seconds is not None and wall is not None:
            _check_duration(None, float(wall), expected_seconds, source, f"{stressor} ran for")
        labels = {"stressor": stressor}
        for key, value in entry.items():
            if key == "stressor":
                continue
            if key in _YAML_METRICS:
                metric, unit = _YAML_METRICS[key]
                records.append({"metric": metric, "unit": unit, "value": number(value, source, f"stress-ng YAML {stressor} {key}"), **labels})
            else:
                match = re.fullmatch(r"(.*?)-?(\w+)-per-sec", key)
                unit = f"{match.group(2)}/s" if match else ""
                metric = _slug(key.replace("-per-sec", " per second"))
                records.append({"metric": metric, "unit": unit, "value": number(value, source, f"stress-ng YAML {stressor} {key}"),
                                "miscellaneous": True, **labels})
    return records
