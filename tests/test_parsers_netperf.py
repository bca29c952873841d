"""netperf parser on real captured output: values asserted, every bad-* capture rejected."""

from __future__ import annotations

import re

import pytest

from conftest import DATA, bad_fixtures, fixture_text
from virtrepro.parsers.errors import ParseError, ToolReportedError, TruncatedLogError
from virtrepro.parsers.netperf import parse_netperf


def by_metric(records):
    return {r["metric"]: r for r in records}


def returncode_of(log_path):
    rc = log_path.with_suffix(".rc")
    if not rc.exists():
        return None
    return int(re.fullmatch(r"rc=(\d+)\s*", rc.read_text()).group(1))


@pytest.mark.parametrize(
    "name, size, rate",
    [
        ("tcp_rr-r1-3s.log", 1, 17142.65),
        ("tcp_rr-r64-3s.log", 64, 12880.74),
        ("tcp_rr-r1024-3s.log", 1024, 14039.92),
    ],
)
def test_tcp_rr_rate_and_half_round_trip_latency(name, size, rate):
    records = by_metric(parse_netperf(fixture_text("netperf", name), name))
    assert records["transaction_rate"]["value"] == rate
    assert records["transaction_rate"]["unit"] == "trans/s"
    assert records["half_round_trip_latency"]["unit"] == "us"
    assert records["half_round_trip_latency"]["value"] == pytest.approx(1e6 / (2 * rate))
    assert records["round_trip_latency"]["value"] == pytest.approx(1e6 / rate)
    for record in records.values():
        assert record["test"] == "TCP_RR"
        assert record["request_size"] == size and record["response_size"] == size
        assert record["elapsed_s"] == 3.0
        assert record["local_send_socket"] == 16384 and record["local_recv_socket"] == 131072
        assert record["remote_recv_socket"] == 131072


def test_tcp_rr_one_byte_half_round_trip_is_about_29_us():
    records = by_metric(parse_netperf(fixture_text("netperf", "tcp_rr-r1-3s.log")))
    assert records["half_round_trip_latency"]["value"] == pytest.approx(29.167, abs=1e-3)


def test_tcp_rr_with_confidence_interval_not_reached_is_labelled():
    records = by_metric(parse_netperf(fixture_text("netperf", "tcp_rr-r1-conf-i10-3.log")))
    rate = records["transaction_rate"]
    assert rate["value"] == 15514.75
    assert rate["confidence_achieved"] is False
    assert rate["confidence_interval_pct"] == 24.175
    assert records["half_round_trip_latency"]["value"] == pytest.approx(1e6 / (2 * 15514.75))
    # runs without -I carry no confidence labels
    plain = parse_netperf(fixture_text("netperf", "tcp_rr-r1-3s.log"))
    assert all("confidence_achieved" not in r for r in plain)


@pytest.mark.parametrize(
    "name, message, value", [("tcp_stream-3s.log", 16384, 13691.37), ("tcp_stream-m1024-3s.log", 1024, 11657.53)]
)
def test_tcp_stream_throughput(name, message, value):
    (record,) = parse_netperf(fixture_text("netperf", name), name)
    assert record["metric"] == "throughput"
    assert record["unit"] == "Mbit/s"
    assert record["value"] == value
    assert record["test"] == "TCP_STREAM"
    assert record["message_size"] == message
    assert record["recv_socket"] == 131072 and record["send_socket"] == 16384
    assert record["elapsed_s"] == 3.0


def test_omni_rr_csv():
    records = by_metric(parse_netperf(fixture_text("netperf", "omni-rr-r64-csv.log")))
    assert records["transaction_rate"]["value"] == 18243.26
    assert records["half_round_trip_latency"]["value"] == pytest.approx(1e6 / (2 * 18243.26))
    assert records["rtt_latency_mean"]["value"] == 54.77
    assert records["rtt_latency_p50"]["value"] == 68
    assert records["rtt_latency_p99"]["value"] == 127
    assert records["rtt_latency_stddev"]["value"] == 45.42
    assert all(r["unit"] == "us" for m, r in records.items() if m != "transaction_rate")
    assert {r["request_size"] for r in records.values()} == {64}
    assert {r["format"] for r in records.values()} == {"omni_csv"}


def test_omni_stream_keyval():
    (record,) = parse_netperf(fixture_text("netperf", "omni-stream-keyval.log"))
    assert record["metric"] == "throughput"
    assert record["unit"] == "Mbit/s"
    assert record["value"] == 12694.80
    assert record["local_send_size"] == 65536
    assert record["elapsed_s"] == 3.0
    assert record["format"] == "omni_keyval"


@pytest.mark.parametrize("path", sorted((DATA / "netperf").glob("bad-*.log")), ids=lambda p: p.name)
def test_netperf_bad_logs_are_rejected_with_the_file_named(path):
    with pytest.raises(ParseError) as error:
        parse_netperf(path.read_text(), str(path))
    assert str(path) in str(error.value)
    # and also when the exit status recorded next to it is passed along
    with pytest.raises(ParseError) as error:
        parse_netperf(path.read_text(), str(path), returncode=returncode_of(path))
    assert str(path) in str(error.value)


def test_every_bad_capture_is_covered():
    # the .rc files only carry exit codes; every bad run has a .log
    assert {p.stem for p in bad_fixtures("netperf")} == {p.stem for p in (DATA / "netperf").glob("bad-*.log")}
    assert len(list((DATA / "netperf").glob("bad-*.log"))) == 3


def test_netperf_error_kinds():
    with pytest.raises(ToolReportedError, match="netserver listening"):
        parse_netperf(fixture_text("netperf", "bad-no-server.log"), returncode=255)
    with pytest.raises(ToolReportedError, match=r"\(NOPE\) is unknown"):
        parse_netperf(fixture_text("netperf", "bad-unknown-test.log"))
    with pytest.raises(TruncatedLogError, match="exit status 124"):
        parse_netperf(fixture_text("netperf", "bad-truncated-sigterm.log"), returncode=124)


def test_netperf_cut_before_the_result_row_is_truncated():
    text = fixture_text("netperf", "tcp_rr-r1-3s.log")
    cut = text[: text.index("16384  131072 1 ")]
    with pytest.raises(TruncatedLogError, match="cut.log"):
        parse_netperf(cut, "cut.log")
    csv = fixture_text("netperf", "omni-rr-r64-csv.log")
    with pytest.raises(TruncatedLogError):
        parse_netperf(csv[: csv.index("18243.26")], "cut.log")


def test_netperf_nonzero_exit_rejects_a_complete_looking_log():
    text = fixture_text("netperf", "tcp_stream-3s.log")
    with pytest.raises(ToolReportedError, match="status 1"):
        parse_netperf(text, "x.log", returncode=1)
    with pytest.raises(TruncatedLogError):
        parse_netperf(text, "x.log", returncode=143)
    assert parse_netperf(text, "x.log", returncode=0)[0]["value"] == 13691.37


def test_netserver_log_is_not_a_client_result():
    with pytest.raises(ParseError, match="netserver.log"):
        parse_netperf(fixture_text("netperf", "netserver.log"), "netserver.log")


def test_every_good_capture_parses_to_positive_finite_numbers():
    good = [p for p in sorted((DATA / "netperf").glob("*.log")) if not p.name.startswith("bad-") and p.name != "netserver.log"]
    assert len(good) == 10
    for path in good:
        records = parse_netperf(path.read_text(), str(path))
        assert records, path
        assert all(0 < r["value"] < float("inf") for r in records), path


def test_a_run_bound_to_cpus_parses_like_an_unbound_one():
    """netperf -T 0,0 (what the harness runs: both ends on CPU 0) adds ': cpu bind' to the banner only."""
    text = fixture_text("netperf", "tcp_rr-r1-1s-cpubind.log")
    assert ": cpu bind" in text.splitlines()[0]
    records = by_metric(parse_netperf(text, "tcp_rr-r1-1s-cpubind.log"))
    assert records["transaction_rate"]["value"] == 64299.59
    assert records["half_round_trip_latency"]["value"] == pytest.approx(1e6 / (2 * 64299.59))
    stream = by_metric(parse_netperf(fixture_text("netperf", "tcp_stream-m256-1s-cpubind.log")))
    assert stream["throughput"]["value"] == 433.19 and stream["throughput"]["message_size"] == 256
