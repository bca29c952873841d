"""netperf 2.7 client output: classic TCP_RR / TCP_STREAM tables and omni CSV / keyval.

Classic tests print a ``MIGRATED ... TEST from ...`` banner, a header block and
one result row (request/response tests add a second row with the remote socket
sizes). Omni tests (``-t omni -- -o ...`` / ``-- -k ...``) print an ``OMNI ...
TEST`` banner and then either a CSV header + value line or ``KEY=VALUE`` lines.

Request/response results are reported as the transaction rate and, derived from
it, the round-trip time ``1e6 / rate`` and the half-round-trip latency
``1e6 / (2 * rate)`` in microseconds (what Walters et al., Fig. 1a, plot).
Stream throughput is reported in Mbit/s (netperf's ``10^6bits/sec``).

netperf writes its results through block-buffered stdout, so a run killed by
``timeout`` leaves an *empty* log (exit 124); an empty log is a truncation.
Errors (no netserver: exit 255, unknown test name) are printed as text and are
rejected whatever the exit status says. Pass ``returncode`` when it is known:
a non-zero status rejects the log even if it looks complete.
"""

from __future__ import annotations

import re

from .errors import ParseError, ToolReportedError, TruncatedLogError, finite_records, number, unreadable

_NUMBER = r"[0-9]+(?:\.[0-9]+)?"

_ERRORS = [
    re.compile(r"^establish control: .*$", re.M),
    re.compile(r"^establish_control could not establish .*$", re.M),
    re.compile(r"^The test you requested \(.*\) is unknown to this netperf\.$", re.M),
    re.compile(r"^netperf: .*$", re.M),
    re.compile(r"^(?:recv_response|send_request|receive_response)[:(].*$", re.M),
    re.compile(r"^.*\b(?:data send error|data recv error|remote error)\b.*$", re.M | re.I),
    re.compile(r"^Usage: netperf .*$", re.M),
]

# exit statuses that mean "killed": timeout(1), SIGKILL, SIGTERM, SIGINT
_KILLED = {124, 137, 143, 130}

# classic banner (after "MIGRATED ") -> (test name, kind)
_CLASSIC = {
    "TCP REQUEST/RESPONSE": ("TCP_RR", "rr"),
    "UDP REQUEST/RESPONSE": ("UDP_RR", "rr"),
    "TCP Connect/Request/Response": ("TCP_CRR", "rr"),
    "TCP STREAM": ("TCP_STREAM", "stream"),
    "TCP MAERTS": ("TCP_MAERTS", "stream"),
}

# throughput unit as netperf prints it -> factor to Mbit/s
_STREAM_UNITS = {
    "10^3bits/sec": 1e-3,
    "10^6bits/sec": 1.0,
    "10^9bits/sec": 1e3,
    "10^3bits/s": 1e-3,
    "10^6bits/s": 1.0,
    "10^9bits/s": 1e3,
    # -f K/M/G: netperf's "Bytes" units are binary
    "KBytes/sec": 8 * 1024 / 1e6,
    "MBytes/sec": 8 * 1024**2 / 1e6,
    "GBytes/sec": 8 * 1024**3 / 1e6,
    "KBytes/s": 8 * 1024 / 1e6,
    "MBytes/s": 8 * 1024**2 / 1e6,
    "GBytes/s": 8 * 1024**3 / 1e6,
}

# omni output selectors: keyval name and CSV/human name -> canonical name
_OMNI_NAMES = {
    "THROUGHPUT": "throughput",
    "Throughput": "throughput",
    "THROUGHPUT_UNITS": "throughput_units",
    "Throughput Units": "throughput_units",
    "MEAN_LATENCY": "mean",
    "Mean Latency Microseconds": "mean",
    "MIN_LATENCY": "min",
    "Minimum Latency Microseconds": "min",
    "MAX_LATENCY": "max",
    "Maximum Latency Microseconds": "max",
    "P50_LATENCY": "p50",
    "50th Percentile Latency Microseconds": "p50",
    "P90_LATENCY": "p90",
    "90th Percentile Latency Microseconds": "p90",
    "P99_LATENCY": "p99",
    "99th Percentile Latency Microseconds": "p99",
    "STDDEV_LATENCY": "stddev",
    "Stddev Latency Microseconds": "stddev",
    "REQUEST_SIZE": "request_size",
    "Request Size Bytes": "request_size",
    "RESPONSE_SIZE": "response_size",
    "Response Size Bytes": "response_size",
    "LOCAL_SEND_SIZE": "local_send_size",
    "Local Send Size": "local_send_size",
    "REMOTE_RECV_SIZE": "remote_recv_size",
    "Remote Recv Size": "remote_recv_size",
    "ELAPSED_TIME": "elapsed_s",
    "Elapsed Time (sec)": "elapsed_s",
    "PROTOCOL": "protocol",
    "Protocol": "protocol",
}
_OMNI_TEXT = ("throughput_units", "protocol")
_OMNI_LATENCY = ("mean", "min", "max", "p50", "p90", "p99", "stddev")


def _snake(name: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")


def _number(cell: str) -> float | int | str:
    cell = cell.strip()
    if re.fullmatch(r"-?[0-9]+", cell):
        return int(cell)
    if re.fullmatch(r"-?[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?", cell):
        return float(cell)
    return cell


def _rr_records(rate: float, labels: dict) -> list[dict]:
    if rate <= 0:
        raise ValueError("non-positive transaction rate")
    return [
        {"metric": "transaction_rate", "unit": "trans/s", "value": rate, **labels},
        {"metric": "round_trip_latency", "unit": "us", "value": 1e6 / rate, **labels},
        {"metric": "half_round_trip_latency", "unit": "us", "value": 1e6 / (2 * rate), **labels},
    ]


def _confidence(text: str, source: str) -> dict:
    """Labels for ``-I`` runs: did netperf reach the requested confidence interval?"""
    if "% conf." not in text.splitlines()[0]:
        return {}
    labels: dict = {"confidence_achieved": "Desired confidence was not achieved" not in text}
    width = re.search(r"^!!! Confidence intervals: Throughput\s*:\s*(" + _NUMBER + r")%", text, re.M)
    if width:
        labels["confidence_interval_pct"] = float(width.group(1))
    elif re.search(r"^!!! Confidence intervals: Throughput", text, re.M):
        line = re.search(r"^!!! Confidence intervals: Throughput.*$", text, re.M).group(0)
        raise unreadable(line, source, "netperf confidence interval line")
    return labels


def _classic(text: str, test: str, kind: str, source: str) -> list[dict]:
    lines = text.splitlines()
    try:
        header = next(i for i, line in enumerate(lines) if line.split()[:1] == ["bytes"])
    except StopIteration:
        raise TruncatedLogError(source, f"netperf {test} log has no result table header") from None
    rows = [line.split() for line in lines[header + 1 :] if line.strip() and not line.startswith("!!!")]
    labels = {"test": test, "format": "classic", **_confidence(text, source)}
    if kind == "rr":
        if not rows:
            raise TruncatedLogError(source, f"netperf {test} log ends before its result row")
        if len(rows[0]) != 6 or not all(re.fullmatch(_NUMBER, c) for c in rows[0]):
            raise unreadable(" ".join(rows[0]), source, f"netperf {test} result row", TruncatedLogError)
        # the second row gives the remote socket sizes: netperf always prints it
        if len(rows) < 2 or len(rows[1]) != 2 or not all(c.isdigit() for c in rows[1]):
            raise unreadable(" ".join(rows[1]) if len(rows) > 1 else "", source, f"netperf {test} remote socket row",
                             TruncatedLogError)
        row = rows[0]
        labels.update(
            local_send_socket=int(row[0]),
            local_recv_socket=int(row[1]),
            request_size=int(row[2]),
            response_size=int(row[3]),
            elapsed_s=float(row[4]),
        )
        labels.update(remote_send_socket=int(rows[1][0]), remote_recv_socket=int(rows[1][1]))
        try:
            return _rr_records(float(row[5]), labels)
        except ValueError:
            raise ToolReportedError(source, f"netperf {test} reported a transaction rate of {row[5]}") from None
    # stream: the unit is the last word of the header row
    unit = lines[header].split()[-1]
    if unit not in _STREAM_UNITS:
        raise ParseError(source, f"netperf {test} throughput unit {unit!r} is not supported")
    if not rows:
        raise TruncatedLogError(source, f"netperf {test} log ends before its result row")
    if len(rows[0]) != 5 or not all(re.fullmatch(_NUMBER, c) for c in rows[0]):
        raise unreadable(" ".join(rows[0]), source, f"netperf {test} result row", TruncatedLogError)
    row = rows[0]
    labels.update(
        recv_socket=int(row[0]), send_socket=int(row[1]), message_size=int(row[2]), elapsed_s=float(row[3])
    )
    value = float(row[4]) * _STREAM_UNITS[unit]
    return [{"metric": "throughput", "unit": "Mbit/s", "value": value, **labels}]


def _omni(text: str, test_banner: str, source: str) -> list[dict]:
    body = [line for line in text.splitlines()[1:] if line.strip()]
    fields: dict[str, str] = {}
    if body and all(re.fullmatch(r"[A-Z0-9_]+=.*", line) for line in body):
        fmt = "omni_keyval"
        for line in body:
            key, _, value = line.partition("=")
            fields[key] = value
    elif len(body) >= 2 and "," in body[0]:
        fmt = "omni_csv"
        names, values = body[0].split(","), body[1].split(",")
        if len(names) != len(values):
            raise TruncatedLogError(source, f"netperf omni CSV has {len(names)} columns but {len(values)} values")
        fields = dict(zip(names, values))
    elif len(body) == 1 and "," in body[0]:
        raise TruncatedLogError(source, "netperf omni CSV output has a header but no value line")
    else:
        raise ParseError(source, "netperf omni output is neither CSV (-o) nor keyval (-k); human format is not supported")

    canonical: dict = {}
    extra: dict = {}
    for name, value in fields.items():
        name = name.strip()
        if name in _OMNI_NAMES:
            key = _OMNI_NAMES[name]
            if key in _OMNI_TEXT:
                canonical[key] = value.strip()
            else:
                canonical[key] = number(value.strip(), source, f"netperf {fmt} {name}")
        elif re.search(r"LATENCY|Latency|THROUGHPUT|Throughput|SIZE|Size", name):
            # a result selector this parser does not know (or a damaged name): not a label
            raise ParseError(source, f"netperf {fmt} output selector {name!r} is not supported")
        else:
            extra[_snake(name)] = _number(value)
    if "throughput" not in canonical or "throughput_units" not in canonical:
        raise ParseError(source, f"netperf {fmt} output lacks THROUGHPUT and THROUGHPUT_UNITS (select them with -o/-k)")
    throughput, units = canonical.pop("throughput"), str(canonical.pop("throughput_units"))
    latencies = {k: canonical.pop(k) for k in _OMNI_LATENCY if k in canonical}
    labels = {"test": "omni", "format": fmt, **extra, **canonical, **_confidence(text, source)}
    if units == "Trans/s":
        labels["test"] = "omni_rr"
        try:
            records = _rr_records(float(throughput), labels)
        except ValueError:
            raise ToolReportedError(source, f"netperf omni reported a transaction rate of {throughput}") from None
        for name, value in latencies.items():
            # omni latency is per transaction, i.e. a full round trip
            records.append({"metric": f"rtt_latency_{name}", "unit": "us", "value": float(value), **labels})
        return records
    if units not in _STREAM_UNITS:
        raise ParseError(source, f"netperf omni throughput unit {units!r} is not supported")
    labels["test"] = "omni_stream"
    return [{"metric": "throughput", "unit": "Mbit/s", "value": float(throughput) * _STREAM_UNITS[units], **labels}]


@finite_records
def parse_netperf(text: str, source: str = "<netperf log>", returncode: int | None = None) -> list[dict]:
    """Return the records of one complete netperf client run.

    RR tests give ``transaction_rate`` (trans/s), ``round_trip_latency`` and
    ``half_round_trip_latency`` (us); omni RR adds ``rtt_latency_<stat>`` (us)
    for each latency selector printed. Stream tests give ``throughput`` (Mbit/s).
    Labels: ``test``, ``format`` and the sizes printed with the result.
    """
    for pattern in _ERRORS:
        match = pattern.search(text)
        if match:
            raise ToolReportedError(source, f"netperf reported an error: {match.group(0).strip()}")
    if not text.strip():
        status = f" (exit status {returncode})" if returncode is not None else ""
        raise TruncatedLogError(
            source, f"netperf log is empty{status}: killed before its block-buffered results were written"
        )
    if returncode is not None and returncode != 0:
        kind = TruncatedLogError if returncode in _KILLED else ToolReportedError
        raise kind(source, f"netperf exited with status {returncode}")

    if not text.endswith("\n"):
        # netperf ends every line with a newline: without it the last line (a result) may have lost digits
        raise TruncatedLogError(source, f"netperf log ends inside a line: {text.splitlines()[-1].strip()!r}")
    first = text.lstrip("\n").splitlines()[0]
    banner = re.match(r"^(?:MIGRATED )?(.+?) TEST from ", first)
    if banner is None:
        raise ParseError(source, "not a netperf log (no '... TEST from ...' banner; -P 0 output is not supported)")
    name = banner.group(1)
    text = text.lstrip("\n")
    if name.startswith("OMNI "):
        return _omni(text, name, source)
    if name not in _CLASSIC:
        raise ParseError(source, f"netperf test {name!r} is not supported by this parser")
    test, kind = _CLASSIC[name]
    return _classic(text, test, kind, source)
