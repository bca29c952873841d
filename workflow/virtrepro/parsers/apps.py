"""Application workloads of the thesis (section 1.2): wrk against nginx, pgbench against
PostgreSQL, a publisher/consumer load on RabbitMQ, pyperformance benchmarks under pyperf,
and ``openssl speed``.

Every parser takes the run's whole log (stdout and stderr together) and returns records
(``metric``, ``unit``, ``value`` and labels), or raises a :class:`ParseError` naming the
log. The traps, seen in real output:

- wrk exits 0 when every response was a 404 (``Non-2xx or 3xx responses``) and when the
  server went away mid-run (``Socket errors: ... write N``); both still print Requests/sec.
- pgbench prints a complete-looking summary, tps included, before
  ``Run was aborted; the above results are incomplete.``
- openssl speed prints one table per run; an unknown algorithm prints only an error.
"""

from __future__ import annotations

import json
import re

from .errors import ParseError, ToolReportedError, TruncatedLogError, count, finite_records, number, unreadable

# --- wrk -------------------------------------------------------------------------------

_TIME_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1000.0, "m": 60000.0}
_BYTE_UNITS = {"B": 1 / 1024**2, "KB": 1 / 1024, "MB": 1.0, "GB": 1024.0, "TB": 1024.0**2}


def _ms(text: str, source: str) -> float:
    match = re.fullmatch(r"([0-9.]+)(us|ms|s|m)", text)
    if match is None:
        raise ParseError(source, f"wrk latency {text!r} has no known unit")
    return number(match.group(1), source, "wrk latency") * _TIME_UNITS[match.group(2)]


def _mib(text: str, source: str) -> float:
    match = re.fullmatch(r"([0-9.]+)(B|KB|MB|GB|TB)", text)
    if match is None:
        raise ParseError(source, f"wrk size {text!r} has no known unit")
    return number(match.group(1), source, "wrk size") * _BYTE_UNITS[match.group(2)]


@finite_records
def parse_wrk(text: str, source: str = "<wrk log>") -> list[dict]:
    """Records of one wrk run: ``requests_per_s``, ``transfer`` MiB/s, ``latency_avg`` and
    ``latency_p50/75/90/99`` ms (with ``--latency``), ``requests``; labels ``threads``,
    ``connections``, ``duration_s``. Refused: connection failures, non-2xx/3xx responses,
    socket errors, and logs without the final Requests/sec line."""
    failed = re.search(r"^unable to connect to .*$", text, re.M)
    if failed:
        raise ToolReportedError(source, f"wrk could not connect: {failed.group(0)}")
    if not re.search(r"^Running \S+ test @ ", text, re.M):
        raise ParseError(source, "not a wrk log (no 'Running ... test @' line)")
    rate = re.search(r"^Requests/sec:\s+([0-9.]+)\s*$", text, re.M)
    transfer = re.search(r"^Transfer/sec:\s+(\S+)\s*$", text, re.M)
    total = re.search(r"^\s+(\d+) requests in ([0-9.]+)(us|ms|s|m), (\S+) read\s*$", text, re.M)
    if not (rate and transfer and total):
        raise TruncatedLogError(source, "wrk log ends before its Requests/sec and Transfer/sec summary")
    bad = re.search(r"^\s+Non-2xx or 3xx responses: (\d+)", text, re.M)
    if bad:
        raise ToolReportedError(source, f"{bad.group(1)} of {total.group(1)} responses were not 2xx/3xx")
    errors = re.search(r"^\s+Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text, re.M)
    if errors:
        raise ToolReportedError(source, f"wrk saw socket errors ({errors.group(0).strip()}): the server "
                                        "refused, dropped or timed out connections")
    setup = re.search(r"^\s+(\d+) threads and (\d+) connections", text, re.M)
    if setup is None:
        raise ParseError(source, "wrk log has no 'N threads and M connections' line")
    labels = {"threads": int(setup.group(1)), "connections": int(setup.group(2)),
              "duration_s": round(_ms(total.group(2) + total.group(3), source) / 1000, 3)}

    def record(metric, unit, value, **more):
        return {"metric": metric, "unit": unit, "value": value, **labels, **more}

    records = [
        record("requests_per_s", "requests/s", float(rate.group(1))),
        record("transfer", "MiB/s", _mib(transfer.group(1), source)),
        record("requests", "requests", int(total.group(1))),
    ]
    if int(total.group(1)) == 0:
        raise ToolReportedError(source, "wrk completed no request")
    latency = re.search(r"^\s+Latency\s+(\S+)\s+(\S+)\s+(\S+)\s+", text, re.M)
    if latency:
        records.append(record("latency_avg", "ms", _ms(latency.group(1), source)))
        records.append(record("latency_max", "ms", _ms(latency.group(3), source)))
    distribution = re.search(r"^\s+Latency Distribution\s*\n((?:.*\n?){4})", text, re.M)
    if distribution:  # --latency: four lines, 50/75/90/99 %, each must be readable
        rows = distribution.group(1).splitlines()
        for percent, row in zip(("50", "75", "90", "99"), rows + [""] * 4):
            match = re.fullmatch(rf"\s+{percent}%\s+(\S+)\s*", row)
            if match is None:
                raise unreadable(row, source, f"wrk latency distribution line {percent}%", TruncatedLogError)
            records.append(record(f"latency_p{percent}", "ms", _ms(match.group(1), source)))
    return records


# --- pgbench ---------------------------------------------------------------------------


@finite_records
def parse_pgbench(text: str, source: str = "<pgbench log>") -> list[dict]:
    """Records of one pgbench run: ``tps`` (without initial connection time), ``latency_avg``
    ms, ``transactions``; labels ``transaction_type``, ``scaling_factor``, ``clients``,
    ``threads``, ``duration_s``. Refused: aborted runs (even though they print tps), failed
    transactions, connection errors, missing summary."""
    aborted = re.search(r"^pgbench: error: Run was aborted.*$", text, re.M)
    if aborted:
        clients = re.findall(r"^pgbench: error: (client \d+ aborted.*)$", text, re.M)
        raise ToolReportedError(source, f"pgbench run was aborted ({'; '.join(clients[:2]) or aborted.group(0)}): "
                                        "its tps is not a measurement")
    error = re.search(r"^pgbench: (error|fatal): .*$", text, re.M)
    if error:
        raise ToolReportedError(source, f"pgbench reported: {error.group(0)}")
    if not re.search(r"^pgbench \(\d+", text, re.M):
        raise ParseError(source, "not a pgbench log (no 'pgbench (version)' line)")
    tps = re.search(r"^tps = ([0-9.]+) \(without initial connection time\)\s*$", text, re.M)
    if tps is None:
        raise TruncatedLogError(source, "pgbench log ends before its 'tps = ...' line")

    def field(pattern, convert=str):
        match = re.search(pattern, text, re.M)
        if match is None:
            raise TruncatedLogError(source, f"pgbench summary lacks {pattern!r}")
        return convert(match.group(1))

    processed = field(r"^number of transactions actually processed: (\d+)", int)
    failed = re.search(r"^number of failed transactions: (\d+)", text, re.M)
    if failed and int(failed.group(1)) > 0:
        raise ToolReportedError(source, f"pgbench: {failed.group(1)} transactions failed")
    labels = {
        "transaction_type": field(r"^transaction type: <builtin: (.+)>"),
        "scaling_factor": field(r"^scaling factor: (\d+)", int),
        "clients": field(r"^number of clients: (\d+)", int),
        "threads": field(r"^number of threads: (\d+)", int),
        "duration_s": field(r"^duration: (\d+) s", int),
    }
    if processed == 0:
        raise ToolReportedError(source, "pgbench processed no transaction")
    return [
        {"metric": "tps", "unit": "transactions/s", "value": float(tps.group(1)), **labels},
        {"metric": "latency_avg", "unit": "ms", "value": field(r"^latency average = ([0-9.]+) ms", float), **labels},
        {"metric": "transactions", "unit": "transactions", "value": processed, **labels},
    ]


# --- RabbitMQ publisher/consumer load (benchmarks/tools/amqp_load.py) -------------------


@finite_records
def parse_amqp_load(text: str, source: str = "<amqp_load log>") -> list[dict]:
    """Records of one amqp_load run: ``messages_per_s`` (delivered), ``latency_mean`` and
    ``latency_p50/95/99`` ms (publish to delivery); labels ``messages``, ``size``,
    ``producers``, ``consumers``. Refused: incomplete runs (a message not delivered, a
    producer or consumer that died) and logs without the result line."""
    if not re.search(r"^amqp_load pika=", text, re.M):
        if "AMQPConnectionError" in text:
            raise ToolReportedError(source, "amqp_load could not connect to the broker (AMQPConnectionError)")
        raise ParseError(source, "not an amqp_load log (no 'amqp_load pika=' header)")
    match = re.search(r"^amqp_load result (\{.*\})\s*$", text, re.M)
    exception = re.findall(r"^(pika\.exceptions\.\w+.*)$", text, re.M)
    if match is None:
        if exception:
            raise ToolReportedError(source, f"amqp_load failed before its result: {exception[-1]}")
        raise TruncatedLogError(source, "amqp_load log ends before its result line")
    try:
        result = json.loads(match.group(1))
    except json.JSONDecodeError as error:
        raise TruncatedLogError(source, f"amqp_load result is not valid JSON: {error}") from None
    if not result.get("complete") or result.get("consumed") != result.get("messages") \
            or result.get("published") != result.get("messages"):
        raise ToolReportedError(
            source, f"amqp_load delivered {result.get('consumed')} of {result.get('messages')} messages"
                    f"{f' ({exception[0]})' if exception else ''}: an incomplete run is not a measurement")
    labels = {key: count(result.get(key), source, f"amqp_load {key}") for key in ("messages", "size", "producers", "consumers")}
    records = [{"metric": "messages_per_s", "unit": "messages/s",
                "value": number(result.get("messages_per_s"), source, "amqp_load messages_per_s"), **labels}]
    for key in ("latency_mean_ms", "latency_p50_ms", "latency_p95_ms", "latency_p99_ms"):
        records.append({"metric": key[: -len("_ms")], "unit": "ms", "value": number(result.get(key), source, f"amqp_load {key}"), **labels})
    return records


# --- pyperformance under pyperf ----------------------------------------------------------

PYPERF_BEGIN = "virtrepro: begin pyperf json"
PYPERF_END = "virtrepro: end pyperf json"


@finite_records
def parse_pyperf(text: str, source: str = "<pyperf log>") -> list[dict]:
    """Records of one pyperformance benchmark run under pyperf: ``time`` s (mean of every
    value, warm-ups and calibration excluded) and ``time_stdev`` s; labels ``benchmark``,
    ``values`` (how many), ``python``. The log holds pyperf's JSON between the
    ``virtrepro: begin/end pyperf json`` markers; without it, or without values, the run
    is refused."""
    begin, end = text.find(PYPERF_BEGIN), text.find(PYPERF_END)
    if begin < 0:
        raise TruncatedLogError(source, "no pyperf JSON in the log (the benchmark did not finish)")
    if end < 0:
        raise TruncatedLogError(source, "pyperf JSON is cut off (no end marker)")
    body = text[begin + len(PYPERF_BEGIN): end].strip()
    if not body:
        raise ToolReportedError(source, "pyperf wrote no result file: " + text[:begin].strip()[-300:])
    try:
        data = json.loads(body)
    except json.JSONDecodeError as error:
        raise TruncatedLogError(source, f"pyperf JSON is not valid: {error}") from None
    benchmarks = data.get("benchmarks") or []
    if len(benchmarks) != 1:
        raise ParseError(source, f"expected one benchmark in the pyperf JSON, found {len(benchmarks)}")
    bench = benchmarks[0]
    metadata = {**data.get("metadata", {}), **bench.get("metadata", {})}
    if metadata.get("unit", "second") != "second":
        raise ParseError(source, f"pyperf unit is {metadata.get('unit')!r}, not second")
    values = [number(v, source, "pyperf value") for run in bench.get("runs", []) for v in run.get("values", [])]
    if not values:
        raise TruncatedLogError(source, "pyperf JSON has no measured values (only calibration/warm-ups)")
    mean = sum(values) / len(values)
    stdev = (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5 if len(values) > 1 else 0.0
    labels = {"benchmark": metadata.get("name", "?"), "values": len(values),
              "python": str(metadata.get("python_version", "")).split(" ")[0]}
    return [
        {"metric": "time", "unit": "s", "value": mean, **labels},
        {"metric": "time_stdev", "unit": "s", "value": stdev, **labels},
    ]


# --- openssl speed -----------------------------------------------------------------------


@finite_records
def parse_openssl_speed(text: str, source: str = "<openssl speed log>") -> list[dict]:
    """Records of one ``openssl speed`` run: per algorithm and block size ``throughput``
    (1000 bytes/s as printed, i.e. kB/s) for digests and ciphers, and ``sign_per_s`` /
    ``verify_per_s`` for RSA/DSA/ECDSA lines; labels ``algorithm``, ``block_bytes``, ``bits``.
    Refused: errors (unknown algorithm) and logs without the result table."""
    error = re.search(r"^(speed: .*|[0-9A-F]+:error:.*)$", text, re.M)
    if error:
        raise ToolReportedError(source, f"openssl speed reported: {error.group(0).strip()}")
    if not text.endswith("\n"):
        # openssl ends every line with a newline: without it the last result may have lost digits
        raise TruncatedLogError(source, f"openssl speed log ends inside a line: {(text.splitlines() or [''])[-1].strip()!r}")
    version = re.search(r"^version: (\S+)", text, re.M)
    if version is None:
        raise TruncatedLogError(source, "openssl speed log has no 'version:' line (the run did not finish)")
    records: list[dict] = []
    header = re.search(r"^type((?:\s+\d+ bytes)+)\s*$", text, re.M)
    if header:
        sizes = [int(size) for size in re.findall(r"(\d+) bytes", header.group(1))]
        for line in text[header.end():].splitlines():
            fields = line.split()
            if not fields:
                continue
            # every line after the header is a result row: one value per block size, 'k' = 1000 bytes/s
            if len(fields) <= len(sizes) or not all(f.endswith("k") for f in fields[-len(sizes):]):
                raise unreadable(line, source, "openssl speed result row")
            name = " ".join(fields[: -len(sizes)])
            for size, value in zip(sizes, fields[-len(sizes):]):
                records.append({"metric": "throughput", "unit": "kB/s",
                                "value": number(value[:-1], source, f"openssl speed {name} {size} bytes"),
                                "algorithm": name, "block_bytes": size, "openssl": version.group(1)})
    signatures = re.findall(r"^(?:rsa|dsa|ecdsa)\s.*$", text, re.M)
    for line in signatures:
        if not re.fullmatch(r"(rsa|dsa|ecdsa)\s+(\d+) bits\s+[0-9.]+s\s+[0-9.]+s\s+([0-9.]+)\s+([0-9.]+)\s*", line):
            raise unreadable(line, source, "openssl speed signature row")
    for kind, bits, sign_s, verify_s in re.findall(
            r"^(rsa|dsa|ecdsa)\s+(\d+) bits\s+[0-9.]+s\s+[0-9.]+s\s+([0-9.]+)\s+([0-9.]+)\s*$", text, re.M):
        labels = {"algorithm": f"{kind}{bits}", "bits": int(bits), "openssl": version.group(1)}
        records.append({"metric": "sign_per_s", "unit": "operations/s", "value": number(sign_s, source, "sign/s"), **labels})
        records.append({"metric": "verify_per_s", "unit": "operations/s", "value": number(verify_s, source, "verify/s"), **labels})
    if not records:
        raise TruncatedLogError(source, "openssl speed log has no result table")
    return records
