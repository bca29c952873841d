"""iperf3 3.x output: client or server, text or ``--json`` (``-J``).

What is reported is the end-of-test summary, never the interval rows:

* text: the rows after the ``- - -`` line that end in ``sender`` / ``receiver``
  (one per stream, plus ``[SUM]`` rows with ``-P``; ``[ID][Role]`` rows with ``--bidir``);
* JSON: ``end.sum_sent`` / ``end.sum_received`` (and their ``_bidir_reverse``
  twins), plus ``end.sum`` for UDP jitter and loss.

Every throughput is converted to Mbit/s (iperf3 prints ``Kbits``..``Gbits`` per
row, decimal, or ``KBytes/sec``..  with ``-f K/M/G``, where bytes are binary, 2^20),
transfers to bytes (``KBytes``.. are binary).

Record labels: ``host`` (``client``/``server``: whose log it is), ``side``
(``sender``/``receiver``: which end measured the value), ``direction``
(``client_to_server``/``server_to_client``), ``protocol``, ``stream`` (the
stream id, or ``"SUM"``), ``total`` (True on the row that describes the whole
test in that direction: the ``[SUM]`` row, or the only stream), ``format``, and
for ``--bidir`` the ``role`` (``TX-C``, ``RX-S``, ...). JSON records are the
sums only (``stream == "SUM"``, ``total`` True).

Failures are recognised from the text, never from the exit status:

* ``iperf3: error - ...``, ``unrecognized option`` + usage: ToolReportedError;
* JSON ``"error"`` key (no server: exit status 0!): ToolReportedError;
* client killed (``iperf3: interrupt - the client has terminated``, which
  appears *first* in a ``2>&1`` log because stdout is block-buffered; JSON
  ``"error": "interrupt - ..."``), and the server side of that run
  (``iperf3: the client has terminated``): TruncatedLogError, although both
  print a complete-looking summary;
* a negative lost-datagram count or loss (iperf3 prints them when datagrams arrive twice):
  ParseError, the loss is not measurable then;
* a text client log without ``iperf Done.``, a server log without summary rows,
  a summary row with a zero transfer: TruncatedLogError.

A server log must hold exactly one test (run the server with ``-1``). Every line of the
text summary block must be readable, every connected stream must have its row, and several
streams need their ``[SUM]`` row: a row skipped would make one stream's rate the total.
"""

from __future__ import annotations

import json
import re

from .errors import ParseError, ToolReportedError, TruncatedLogError, count, finite_records, number, unreadable

_TIMESTAMP = re.compile(
    r"^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) "
    r"[ 0-9][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2} [0-9]{4} ",
    re.M,
)

_TRUNCATED = [
    re.compile(r"^iperf3: interrupt - .*$", re.M),
    re.compile(r"^iperf3: the client has terminated.*$", re.M),
]
_ERRORS = [
    re.compile(r"^iperf3: error - .*$", re.M),
    re.compile(r"^iperf3: unrecognized option .*$", re.M),
    re.compile(r"^iperf3: .*$", re.M),
    re.compile(r"^Usage: iperf3 .*$", re.M),
]

_BYTES = {"Bytes": 1, "KBytes": 1024, "MBytes": 1024**2, "GBytes": 1024**3, "TBytes": 1024**4}
# rate unit -> factor to Mbit/s
_RATES = {
    "bits/sec": 1e-6,
    "Kbits/sec": 1e-3,
    "Mbits/sec": 1.0,
    "Gbits/sec": 1e3,
    "Tbits/sec": 1e6,
    "Bytes/sec": 8e-6,
    "KBytes/sec": 8 * 1024 / 1e6,
    "MBytes/sec": 8 * 1024**2 / 1e6,
    "GBytes/sec": 8 * 1024**3 / 1e6,
    "TBytes/sec": 8 * 1024**4 / 1e6,
}

_NUM = r"[0-9]+(?:\.[0-9]+)?"
_SUMMARY_ROW = re.compile(
    r"^\[\s*(?P<id>[0-9]+|SUM)\](?:\[(?P<role>[RT]X-[CS])\])?\s+"
    r"(?P<start>" + _NUM + r")-\s*(?P<end>" + _NUM + r")\s+sec\s+"
    r"(?P<xfer>" + _NUM + r")\s+(?P<xunit>[KMGT]?Bytes)\s+"
    r"(?P<rate>" + _NUM + r")\s+(?P<runit>[KMGT]?(?:bits|Bytes)/sec)"
    r"(?P<rest>.*?)\s+(?P<side>sender|receiver)\s*$",
    re.M,
)
_UDP_REST = re.compile(
    r"^\s*(?P<jitter>" + _NUM + r") ms\s+(?P<lost>-?[0-9]+)/(?P<total>[0-9]+)\s+\((?P<pct>-?[0-9.e+-]+)%\)\s*$"
)


def _direction(host: str, side: str, reverse: bool, role: str | None) -> str:
    if role:  # --bidir: TX-C/RX-S = data from client to server
        return "client_to_server" if role in ("TX-C", "RX-S") else "server_to_client"
    if host == "client":
        return "server_to_client" if reverse else "client_to_server"
    # a server log only holds its own measurement: it sends in reverse mode
    return "server_to_client" if side == "sender" else "client_to_server"


def _check_errors(text: str, source: str) -> None:
    for pattern in _TRUNCATED:
        match = pattern.search(text)
        if match:
            raise TruncatedLogError(source, f"iperf3 run was interrupted: {match.group(0).strip()}")
    for pattern in _ERRORS:
        match = pattern.search(text)
        if match:
            raise ToolReportedError(source, f"iperf3 reported an error: {match.group(0).strip()}")


def _check_summary_block(text: str, rows: list[re.Match], source: str) -> None:
    """Every line of the end-of-test block is a summary row, and every stream has one.

    A row iperf3 printed but this parser cannot read (a value cut or replaced) would
    otherwise be skipped, and a [SUM] row lost that way would make one stream's rate the total.
    """
    separators = [m.end() for m in re.finditer(r"^(?:- )+-\s*$", text, re.M)]
    block_start = max(separators) if separators else rows[0].start()
    readable = {m.start() for m in rows}
    offset = block_start
    for line in text[block_start:].splitlines(keepends=True):
        start, offset = offset, offset + len(line)
        if not line.strip():
            continue
        if not line.startswith("["):
            break
        if start not in readable and not re.match(r"^\[ ID\]", line):
            raise unreadable(line, source, "iperf3 summary row", TruncatedLogError)
    connected = {int(i) for i in re.findall(r"^\[\s*([0-9]+)\] local .* connected to ", text, re.M)}
    summarised = {int(m.group("id")) for m in rows if m.group("id") != "SUM"}
    if connected and summarised != connected:
        raise TruncatedLogError(
            source, f"iperf3 summary has rows for streams {sorted(summarised)}, the test connected {sorted(connected)}"
        )
    for side in ("sender", "receiver"):
        streams = {m.group("id") for m in rows if m.group("side") == side and m.group("id") != "SUM" and not m.group("role")}
        if len(streams) > 1 and not any(m.group("id") == "SUM" and m.group("side") == side for m in rows):
            raise TruncatedLogError(source, f"iperf3 summary has {len(streams)} {side} streams but no [SUM] {side} row")


def _parse_text(text: str, source: str) -> list[dict]:
    if "Connecting to host " in text:
        host = "client"
    elif "Server listening on " in text:
        host = "server"
    else:
        raise ParseError(source, "not an iperf3 log ('Connecting to host' / 'Server listening on' missing)")
    if host == "server":
        accepted = len(re.findall(r"^Accepted connection from ", text, re.M))
        if accepted == 0:
            raise TruncatedLogError(source, "iperf3 server log has no accepted connection: no test ran")
        if accepted > 1:
            raise ParseError(source, f"iperf3 server log holds {accepted} tests; run the server with -1 (one test per log)")
    elif not re.search(r"^iperf Done\.\s*$", text, re.M):
        raise TruncatedLogError(source, "iperf3 client log ends without 'iperf Done.'")

    protocol = "UDP" if re.search(r"Jitter\s+Lost/Total Datagrams|Total Datagrams", text) else "TCP"
    reverse = "Reverse mode, remote host" in text
    rows = list(_SUMMARY_ROW.finditer(text))
    if not rows:
        raise TruncatedLogError(source, "iperf3 log has no summary rows ending in 'sender'/'receiver'")
    _check_summary_block(text, rows, source)

    retransmits_column = bool(re.search(r"^\[ ID\](?:\[Role\])? Interval .*\bRetr\s*$", text, re.M))
    parsed = []
    for row in rows:
        side, role = row.group("side"), row.group("role")
        stream = "SUM" if row.group("id") == "SUM" else int(row.group("id"))
        transfer = float(row.group("xfer")) * _BYTES[row.group("xunit")]
        if transfer == 0:
            raise TruncatedLogError(
                source, f"iperf3 {side} summary shows 0 bytes transferred: the run was cut ({row.group(0).strip()!r})"
            )
        labels = {
            "host": host,
            "side": side,
            "direction": _direction(host, side, reverse, role),
            "protocol": protocol,
            "stream": stream,
            "format": "text",
            "duration_s": float(row.group("end")) - float(row.group("start")),
        }
        if role:
            labels["role"] = role
        values = [
            ("throughput", "Mbit/s", float(row.group("rate")) * _RATES[row.group("runit")]),
            ("transfer", "bytes", transfer),
        ]
        rest = row.group("rest").strip()
        if protocol == "UDP":
            udp = _UDP_REST.match(rest)
            if udp is None:
                raise ParseError(source, f"iperf3 UDP summary row without jitter/loss: {row.group(0).strip()!r}")
            values.append(("total_datagrams", "datagrams", float(udp.group("total"))))
            if side == "receiver":  # the sender row prints 0.000 ms and 0 lost: not measured there
                values += [
                    ("jitter", "ms", float(udp.group("jitter"))),
                    ("lost_datagrams", "datagrams", number(udp.group("lost"), source, "iperf3 lost datagrams")),
                    ("loss", "%", number(udp.group("pct"), source, "iperf3 loss")),
                ]
        elif side == "sender" and retransmits_column and not rest:
            raise unreadable(row.group(0), source, "iperf3 sender row without its Retr value", TruncatedLogError)
        elif rest:
            if not re.fullmatch(r"[0-9]+", rest):
                raise ParseError(source, f"iperf3 summary row has unexpected fields: {row.group(0).strip()!r}")
            values.append(("retransmits", "segments", float(rest)))
        parsed.append((labels, values))

    # a [SUM] row is the total of its (side, direction); without one the single stream is
    with_sum = {(l["side"], l["direction"]) for l, _ in parsed if l["stream"] == "SUM"}
    records = []
    for labels, values in parsed:
        labels["total"] = labels["stream"] == "SUM" or (labels["side"], labels["direction"]) not in with_sum
        for metric, unit, value in values:
            records.append({"metric": metric, "unit": unit, "value": value, **labels})
    return records


def _parse_json(text: str, source: str) -> list[dict]:
    start = text.find("{")
    try:
        data, stop = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError as error:
        _check_errors(text[:start], source)
        raise TruncatedLogError(source, f"iperf3 JSON output is incomplete or invalid ({error})") from None
    if not isinstance(data, dict):
        raise ParseError(source, "iperf3 JSON output is not an object")
    if data.get("error"):
        message = str(data["error"])
        kind = TruncatedLogError if "interrupt" in message or "terminated" in message else ToolReportedError
        raise kind(source, f"iperf3 JSON reports an error: {message}")
    _check_errors(text[:start] + "\n" + text[stop:], source)  # stderr lines around the JSON

    begin = data.get("start") or {}
    end = data.get("end") or {}
    if "connecting_to" in begin:
        host = "client"
    elif "accepted_connection" in begin:
        host = "server"
    else:
        raise TruncatedLogError(source, "iperf3 JSON has no connection in 'start': no test ran")
    if not end:
        raise TruncatedLogError(source, "iperf3 JSON has an empty 'end' section")
    test = begin.get("test_start") or {}
    protocol = str(test.get("protocol", "TCP"))
    reverse = bool(test.get("reverse", 0))
    common = {
        "host": host,
        "protocol": protocol,
        "stream": "SUM",
        "total": True,
        "format": "json",
        "num_streams": count(test["num_streams"], source, "iperf3 JSON num_streams") if "num_streams" in test else None,
        "reverse": reverse,
    }
    if "sum_sent_bidir_reverse" in end:
        common["bidir"] = True

    records = []

    def add(metric: str, unit: str, value, labels: dict) -> None:
        value = number(value, source, f"iperf3 JSON {metric}")
        records.append({"metric": metric, "unit": unit, "value": value, **common, **labels})

    forward = "server_to_client" if reverse else "client_to_server"
    backward = "client_to_server" if reverse else "server_to_client"
    parts = [
        ("sum_sent", "sender", forward),
        ("sum_received", "receiver", forward),
        ("sum_sent_bidir_reverse", "sender", backward),
        ("sum_received_bidir_reverse", "receiver", backward),
    ]
    found = False
    for key, side, direction in parts:
        part = end.get(key)
        if not part:
            continue
        # a server only measures its own end: it sends when data flows to the client
        if host == "server" and (side == "sender") != (direction == "server_to_client"):
            continue
        found = True
        if not part.get("bytes"):
            raise TruncatedLogError(source, f"iperf3 JSON end.{key} shows 0 bytes transferred: the run was cut")
        labels = {"side": side, "direction": direction, "duration_s": number(part.get("seconds"), source, f"iperf3 JSON end.{key}.seconds")}
        add("throughput", "Mbit/s", number(part.get("bits_per_second"), source, f"iperf3 JSON end.{key}.bits_per_second") / 1e6, labels)
        add("transfer", "bytes", part["bytes"], labels)
        if "retransmits" in part:
            add("retransmits", "segments", part["retransmits"], labels)
    udp = end.get("sum") if protocol == "UDP" else None
    if udp:
        labels = {"side": "receiver", "direction": forward, "duration_s": number(udp.get("seconds"), source, "iperf3 JSON end.sum.seconds")}
        if not found:
            found = True
            add("throughput", "Mbit/s", number(udp.get("bits_per_second"), source, "iperf3 JSON end.sum.bits_per_second") / 1e6, labels)
            add("transfer", "bytes", udp["bytes"], labels)
        add("jitter", "ms", udp["jitter_ms"], labels)
        add("lost_datagrams", "datagrams", udp["lost_packets"], labels)
        add("total_datagrams", "datagrams", udp["packets"], labels)
        add("loss", "%", udp["lost_percent"], labels)
    if not found:
        raise TruncatedLogError(source, "iperf3 JSON 'end' has no sum_sent/sum_received/sum summary")
    cpu = end.get("cpu_utilization_percent") or {}
    if "host_total" in cpu:
        add("cpu_utilization_host", "%", cpu["host_total"], {})
    if host == "client" and "remote_total" in cpu:
        add("cpu_utilization_remote", "%", cpu["remote_total"], {})
    return records


@finite_records
def parse_iperf3(text: str, source: str = "<iperf3 log>", stderr: str | None = None) -> list[dict]:
    """Return the summary records of one complete iperf3 test (client or server log, text or JSON).

    ``text`` is stdout, or stdout and stderr together (``2>&1``). When the
    streams were kept apart, pass stderr as ``stderr``: iperf3 prints its errors
    there (with ``--json`` too, for option errors), and stdout alone is empty.
    """
    if stderr is not None:
        _check_errors(_TIMESTAMP.sub("", stderr), source)
    damaged = re.search(r"^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) .*$", _TIMESTAMP.sub("", text), re.M)
    if damaged:  # --timestamps: a prefix that is not a whole timestamp would hide the row behind it
        raise unreadable(damaged.group(0), source, "iperf3 line with a damaged --timestamps prefix")
    text = _TIMESTAMP.sub("", text)
    if re.search(r"^\{\s*$", text, re.M) and '"start"' in text:
        return _parse_json(text, source)
    _check_errors(text, source)
    if not text.strip():
        raise TruncatedLogError(source, "iperf3 log is empty")
    return _parse_text(text, source)
