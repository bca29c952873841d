"""Application workload parsers (wrk, pgbench, amqp_load, pyperf, openssl speed) on real output
captured from these tools on Debian 12 (tests/data/<tool>/): values asserted, every bad-* rejected."""

from __future__ import annotations

import pytest

from conftest import bad_fixtures, fixture_text
from virtrepro.benchmarks import BENCHMARKS
from virtrepro.parsers import ParseError, ToolReportedError, TruncatedLogError
from virtrepro.parsers.apps import parse_amqp_load, parse_openssl_speed, parse_pgbench, parse_pyperf, parse_wrk


def by_metric(records: list[dict]) -> dict:
    return {(r["metric"], r.get("algorithm"), r.get("block_bytes")): r["value"] for r in records}


def test_wrk_units_are_converted_to_ms_and_mib():
    records = parse_wrk(fixture_text("wrk", "file64k-t2-c16-3s-latency.log"), "wrk.log")
    values = {r["metric"]: r["value"] for r in records}
    assert values["requests_per_s"] == 19745.75
    assert values["transfer"] == pytest.approx(1.21 * 1024)  # "1.21GB" per second, in MiB/s
    assert values["requests"] == 60163
    assert values["latency_avg"] == pytest.approx(1.82) and values["latency_max"] == pytest.approx(71.58)
    assert values["latency_p50"] == pytest.approx(0.459)  # "459.00us"
    assert values["latency_p99"] == pytest.approx(38.12)
    assert {(r["threads"], r["connections"], r["duration_s"]) for r in records} == {(2, 16, 3.05)}


@pytest.mark.parametrize("path", bad_fixtures("wrk"), ids=lambda p: p.name)
def test_wrk_bad_logs_are_refused(path):
    with pytest.raises(ParseError):
        parse_wrk(path.read_text(), path.name)


def test_wrk_refusals_say_why():
    with pytest.raises(ToolReportedError, match="67772 of 67772 responses were not 2xx/3xx"):
        parse_wrk(fixture_text("wrk", "bad-all-404.log"))
    with pytest.raises(ToolReportedError, match="socket errors.*write 82717"):
        parse_wrk(fixture_text("wrk", "bad-server-stopped-mid-run.log"))
    with pytest.raises(ToolReportedError, match="could not connect"):
        parse_wrk(fixture_text("wrk", "bad-connection-refused.log"))
    with pytest.raises(TruncatedLogError):
        parse_wrk(fixture_text("wrk", "bad-truncated.log"))


def test_pgbench_tpcb_and_select_only():
    tpcb = parse_pgbench(fixture_text("pgbench", "tpcb-s1-c4-j2-3s.log"))
    assert {r["metric"]: r["value"] for r in tpcb} == {"tps": 329.553287, "latency_avg": 12.138, "transactions": 996}
    assert {(r["transaction_type"], r["scaling_factor"], r["clients"], r["threads"], r["duration_s"]) for r in tpcb} \
        == {("TPC-B (sort of)", 1, 4, 2, 3)}
    select = parse_pgbench(fixture_text("pgbench", "select-s1-c4-j2-3s.log"))
    assert select[0]["value"] == 20692.0765 and select[0]["transaction_type"] == "select only"


@pytest.mark.parametrize("path", bad_fixtures("pgbench"), ids=lambda p: p.name)
def test_pgbench_bad_logs_are_refused(path):
    with pytest.raises(ParseError):
        parse_pgbench(path.read_text(), path.name)


def test_pgbench_aborted_run_is_refused_although_it_prints_tps():
    text = fixture_text("pgbench", "bad-server-stopped-mid-run.log")
    assert "tps = 393.651463" in text  # the trap: a complete-looking summary
    with pytest.raises(ToolReportedError, match="aborted"):
        parse_pgbench(text)


def test_amqp_load_result():
    records = parse_amqp_load(fixture_text("amqp_load", "m20000-s1024-p2-c2.log"))
    values = {r["metric"]: r["value"] for r in records}
    assert values == {"messages_per_s": 2057.29, "latency_mean": 21.925, "latency_p50": 6.716,
                      "latency_p95": 115.836, "latency_p99": 193.929}
    assert {(r["messages"], r["size"], r["producers"], r["consumers"]) for r in records} == {(20000, 1024, 2, 2)}


@pytest.mark.parametrize("path", bad_fixtures("amqp_load"), ids=lambda p: p.name)
def test_amqp_load_bad_logs_are_refused(path):
    with pytest.raises(ParseError):
        parse_amqp_load(path.read_text(), path.name)


def test_amqp_load_incomplete_run_names_the_exception():
    with pytest.raises(ToolReportedError, match="delivered 5650 of 200000.*StreamLostError"):
        parse_amqp_load(fixture_text("amqp_load", "bad-broker-killed.log"))
    with pytest.raises(ToolReportedError, match="AMQPConnectionError"):
        parse_amqp_load(fixture_text("amqp_load", "bad-connection-refused.log"))


def test_pyperf_mean_of_values_without_warmups():
    import json

    text = fixture_text("pyperf", "nbody-fast.log")
    records = parse_pyperf(text)
    data = json.loads(text.split("virtrepro: begin pyperf json")[1].split("virtrepro: end pyperf json")[0])
    values = [v for run in data["benchmarks"][0]["runs"] for v in run.get("values", [])]
    time_record, stdev_record = records
    assert time_record["metric"] == "time" and time_record["unit"] == "s"
    assert time_record["benchmark"] == "nbody" and time_record["values"] == len(values) == 20
    assert time_record["value"] == pytest.approx(sum(values) / len(values))
    assert 0.05 < time_record["value"] < 1.0  # nbody takes about 0.1 s a loop natively
    assert stdev_record["metric"] == "time_stdev" and stdev_record["value"] > 0
    assert time_record["python"].startswith("3.11")
    (json_dumps, _) = parse_pyperf(fixture_text("pyperf", "json_dumps-fast.log"))
    assert json_dumps["benchmark"] == "json_dumps"


@pytest.mark.parametrize("path", bad_fixtures("pyperf"), ids=lambda p: p.name)
def test_pyperf_bad_logs_are_refused(path):
    with pytest.raises(ParseError):
        parse_pyperf(path.read_text(), path.name)


def test_pyperf_failed_benchmark_shows_the_error():
    with pytest.raises(ToolReportedError, match="No module named 'chameleon'"):
        parse_pyperf(fixture_text("pyperf", "bad-missing-module.log"))


def test_openssl_speed_tables():
    sha = by_metric(parse_openssl_speed(fixture_text("openssl", "sha256-1s.log")))
    assert len(sha) == 6
    assert sha[("throughput", "sha256", 16)] == 3243.09 and sha[("throughput", "sha256", 16384)] == 438831.65
    gcm = by_metric(parse_openssl_speed(fixture_text("openssl", "evp-aes-256-gcm-1s.log")))
    assert gcm[("throughput", "AES-256-GCM", 8192)] == 1144397.82
    rsa = by_metric(parse_openssl_speed(fixture_text("openssl", "rsa2048-1s.log")))
    assert rsa == {("sign_per_s", "rsa2048", None): 591.5, ("verify_per_s", "rsa2048", None): 8260.0}


@pytest.mark.parametrize("path", bad_fixtures("openssl"), ids=lambda p: p.name)
def test_openssl_bad_logs_are_refused(path):
    with pytest.raises(ParseError):
        parse_openssl_speed(path.read_text(), path.name)


def test_benchmarks_check_logs_against_their_parameters():
    wrk = fixture_text("wrk", "file64k-t2-c16-3s-latency.log")
    params = {"file_kb": 64, "connections": 16, "threads": "all", "seconds": 3}
    assert BENCHMARKS["nginx_wrk"].parse(wrk, "w.log", params)
    with pytest.raises(ParseError, match="connections 64"):
        BENCHMARKS["nginx_wrk"].parse(wrk, "w.log", {**params, "connections": 64})
    pg = fixture_text("pgbench", "select-s1-c4-j2-3s.log")
    pg_params = {"mode": "select", "scale": 1, "clients": 4, "seconds": 3}
    assert BENCHMARKS["pgbench"].parse(pg, "p.log", pg_params)
    with pytest.raises(ParseError, match="transaction_type"):
        BENCHMARKS["pgbench"].parse(pg, "p.log", {**pg_params, "mode": "tpcb"})
    openssl = fixture_text("openssl", "evp-aes-256-gcm-1s.log")
    assert BENCHMARKS["openssl_speed"].parse(openssl, "o.log", {"algorithm": "aes-256-gcm", "seconds": 1})
    with pytest.raises(ParseError, match="not a run of sha256"):
        BENCHMARKS["openssl_speed"].parse(openssl, "o.log", {"algorithm": "sha256", "seconds": 1})
    nbody = fixture_text("pyperf", "nbody-fast.log")
    with pytest.raises(ParseError, match="benchmark richards"):
        BENCHMARKS["pyperformance"].parse(nbody, "n.log", {"benchmark": "richards", "mode": "fast"})


def test_commands_name_the_peer_and_the_parameters():
    (variant,) = BENCHMARKS["pgbench"].variants({"modes": ["select"], "scale": 2, "clients": [8], "seconds": 7})
    command = BENCHMARKS["pgbench"].run(variant)
    assert "-h @PEER1@" in command and "-T 7 -S postgres" in command and "c=8" in command
    assert "-s 2 " in BENCHMARKS["pgbench"].prepare(variant).peer_start
    (variant,) = BENCHMARKS["openssl_speed"].variants({"algorithms": ["rsa2048"], "seconds": 2})
    assert BENCHMARKS["openssl_speed"].run(variant) == "openssl speed -seconds 2 -elapsed rsa2048"
    (variant,) = BENCHMARKS["openssl_speed"].variants({"algorithms": ["aes-256-gcm"], "seconds": 2})
    assert BENCHMARKS["openssl_speed"].run(variant).endswith("-elapsed -evp aes-256-gcm")
    (variant,) = BENCHMARKS["pyperformance"].variants({"benchmarks": ["nbody"], "mode": "fast"})
    uploads = dict((remote, local) for local, remote in BENCHMARKS["pyperformance"].prepare(variant).uploads)
    assert "@SCRATCH@/bm_nbody/run_benchmark.py" in uploads and "@SCRATCH@/lib/pyperf/__init__.py" in uploads
    assert not any("__pycache__" in remote for remote in uploads)


def test_openssl_speed_one_block_size_and_the_benchmark_checks_it():
    from virtrepro.benchmarks import BENCHMARKS

    text = fixture_text("openssl", "evp-sha256-bytes16384-1s.log")
    records = parse_openssl_speed(text)
    assert [(r["block_bytes"], r["value"]) for r in records] == [(16384, 1742651.39)]
    benchmark = BENCHMARKS["openssl_speed"]
    one, = [v for v in benchmark.variants({"algorithms": ["sha256"], "seconds": 1, "block_bytes": 16384})]
    assert "-bytes 16384 " in benchmark.run(one)
    assert benchmark.parse(text, "x", one.param_dict) == records
    # the six-size log is not a run of one block size
    with pytest.raises(ParseError, match="not 16384 alone"):
        benchmark.parse(fixture_text("openssl", "sha256-1s.log"), "x", one.param_dict)
