"""iperf3 parser on real captured output: values asserted, every bad-* capture rejected."""

from __future__ import annotations

import pytest

from conftest import DATA, bad_fixtures, fixture_text
from virtrepro.parsers.errors import ParseError, ToolReportedError, TruncatedLogError
from virtrepro.parsers.iperf3 import parse_iperf3


def pick(records, metric, **labels):
    found = [r for r in records if r["metric"] == metric and all(r.get(k) == v for k, v in labels.items())]
    assert len(found) == 1, (metric, labels, found)
    return found[0]


GIB = 1024**3


def test_tcp_text_client_sender_and_receiver():
    records = parse_iperf3(fixture_text("iperf3", "tcp-10s-text.client.log"), "c.log")
    sender = pick(records, "throughput", side="sender")
    assert sender["value"] == pytest.approx(19300.0) and sender["unit"] == "Mbit/s"
    assert sender["host"] == "client" and sender["direction"] == "client_to_server"
    assert sender["protocol"] == "TCP" and sender["total"] is True and sender["stream"] == 5
    assert sender["duration_s"] == 10.0
    assert pick(records, "retransmits", side="sender")["value"] == 16
    assert pick(records, "transfer", side="sender")["value"] == pytest.approx(22.5 * GIB)
    assert pick(records, "throughput", side="receiver")["value"] == pytest.approx(19300.0)
    assert not [r for r in records if r["metric"] == "retransmits" and r["side"] == "receiver"]
    # the interval rows (20.3, 21.2, ... Gbits/sec) are not results
    assert len(records) == 5


def test_tcp_text_server_has_only_its_receiver_row():
    records = parse_iperf3(fixture_text("iperf3", "tcp-10s-text.server.log"))
    assert {(r["metric"], r["side"], r["host"]) for r in records} == {
        ("throughput", "receiver", "server"),
        ("transfer", "receiver", "server"),
    }
    assert pick(records, "throughput")["value"] == pytest.approx(19300.0)


def test_tcp_json_client():
    records = parse_iperf3(fixture_text("iperf3", "tcp-10s-json.client.log"))
    assert pick(records, "throughput", side="sender")["value"] == pytest.approx(15336.864734189377)
    assert pick(records, "throughput", side="receiver")["value"] == pytest.approx(15336.817192090883)
    assert pick(records, "transfer", side="receiver")["value"] == 19171901440
    assert pick(records, "retransmits", side="sender")["value"] == 63
    assert pick(records, "cpu_utilization_host")["value"] == pytest.approx(42.88342582154604)
    assert pick(records, "cpu_utilization_remote")["value"] == pytest.approx(40.1544785695808)
    assert all(r["format"] == "json" and r["num_streams"] == 1 and r["stream"] == "SUM" for r in records)


def test_text_server_log_of_a_json_client():
    records = parse_iperf3(fixture_text("iperf3", "tcp-10s-json.server.log"))
    assert pick(records, "throughput", side="receiver")["value"] == pytest.approx(15300.0)
    assert pick(records, "transfer", side="receiver")["value"] == pytest.approx(17.9 * GIB)


def test_omitted_rows_and_timestamps():
    records = parse_iperf3(fixture_text("iperf3", "tcp-5s-omit1-timestamps-text.client.log"))
    assert pick(records, "throughput", side="sender")["value"] == pytest.approx(20300.0)
    assert pick(records, "throughput", side="receiver")["value"] == pytest.approx(20400.0)
    assert pick(records, "retransmits", side="sender")["value"] == 89
    assert pick(records, "transfer", side="sender")["duration_s"] == 5.0
    server = parse_iperf3(fixture_text("iperf3", "tcp-5s-omit1-timestamps-text.server.log"))
    assert pick(server, "throughput")["value"] == pytest.approx(20400.0)


def test_megabytes_per_second_format_is_converted_with_binary_megabytes():
    records = parse_iperf3(fixture_text("iperf3", "tcp-5s-server-json-client-text-Mbytes.client.log"))
    assert pick(records, "throughput", side="sender")["value"] == pytest.approx(2116 * 8 * 2**20 / 1e6)
    assert pick(records, "retransmits", side="sender")["value"] == 38
    assert pick(records, "transfer", side="receiver")["value"] == pytest.approx(10.3 * GIB)


def test_json_server_reports_only_what_the_server_measured():
    records = parse_iperf3(fixture_text("iperf3", "tcp-5s-server-json-client-text-Mbytes.server.log"))
    # end.sum_sent is all zeros on the receiving server: not a result
    assert [r["side"] for r in records if r["metric"] == "throughput"] == ["receiver"]
    assert pick(records, "throughput")["value"] == pytest.approx(17746.908648754158)
    assert pick(records, "transfer")["value"] == 11092492288
    assert pick(records, "cpu_utilization_host")["value"] == pytest.approx(75.31553537369976)
    assert not [r for r in records if r["metric"] == "cpu_utilization_remote"]


def test_parallel_reverse_server_sum_and_streams():
    records = parse_iperf3(fixture_text("iperf3", "tcp-P2-reverse-5s-text.server.log"))
    total = pick(records, "throughput", total=True)
    assert total["stream"] == "SUM" and total["value"] == pytest.approx(18800.0)
    assert total["side"] == "sender" and total["direction"] == "server_to_client"
    assert pick(records, "throughput", stream=5)["value"] == pytest.approx(9390.0)
    assert pick(records, "throughput", stream=8)["value"] == pytest.approx(9420.0)
    assert pick(records, "throughput", stream=5)["total"] is False
    assert pick(records, "retransmits", stream="SUM")["value"] == 16
    assert pick(records, "retransmits", stream=8)["value"] == 4


def test_bidir_json_client_both_directions():
    records = parse_iperf3(fixture_text("iperf3", "tcp-bidir-5s-get-server-output-json.client.log"))
    up = dict(direction="client_to_server")
    down = dict(direction="server_to_client")
    assert pick(records, "throughput", side="sender", **up)["value"] == pytest.approx(9346.98777002446)
    assert pick(records, "throughput", side="receiver", **up)["value"] == pytest.approx(9287.922444246754)
    assert pick(records, "throughput", side="sender", **down)["value"] == pytest.approx(10657.705148589705)
    assert pick(records, "throughput", side="receiver", **down)["value"] == pytest.approx(10653.706718463282)
    assert pick(records, "retransmits", **up)["value"] == 46
    assert pick(records, "retransmits", **down)["value"] == 69
    assert all(r["bidir"] for r in records)


def test_bidir_text_server_roles():
    records = parse_iperf3(fixture_text("iperf3", "tcp-bidir-5s-get-server-output-json.server.log"))
    rx = pick(records, "throughput", role="RX-S")
    tx = pick(records, "throughput", role="TX-S")
    assert rx["value"] == pytest.approx(9290.0) and rx["side"] == "receiver" and rx["direction"] == "client_to_server"
    assert tx["value"] == pytest.approx(10700.0) and tx["side"] == "sender" and tx["direction"] == "server_to_client"
    assert pick(records, "retransmits", role="TX-S")["value"] == 69


def test_udp_text_client_jitter_and_loss_come_from_the_receiver_row():
    records = parse_iperf3(fixture_text("iperf3", "udp-1G-5s-text.client.log"))
    assert all(r["protocol"] == "UDP" for r in records)
    assert pick(records, "throughput", side="sender")["value"] == pytest.approx(1000.0)
    assert pick(records, "throughput", side="receiver")["value"] == pytest.approx(898.0)
    assert pick(records, "jitter", side="receiver")["value"] == 0.001
    assert pick(records, "lost_datagrams")["value"] == 45309
    assert pick(records, "total_datagrams", side="receiver")["value"] == 446364
    assert pick(records, "total_datagrams", side="sender")["value"] == 446364
    assert pick(records, "loss")["value"] == 10
    assert not [r for r in records if r["metric"] in ("jitter", "loss") and r["side"] == "sender"]


def test_udp_server_logs():
    records = parse_iperf3(fixture_text("iperf3", "udp-1G-5s-text.server.log"))
    assert pick(records, "lost_datagrams")["value"] == 45309
    assert pick(records, "throughput")["value"] == pytest.approx(898.0)
    # server side (text) of a run whose client used --json
    records = parse_iperf3(fixture_text("iperf3", "udp-1G-5s-json.server.log"))
    assert pick(records, "throughput")["value"] == pytest.approx(990.0)
    assert pick(records, "lost_datagrams")["value"] == 4419
    assert pick(records, "total_datagrams")["value"] == 446369
    assert pick(records, "loss")["value"] == 0.99


@pytest.mark.parametrize("path", bad_fixtures("iperf3"), ids=lambda p: p.name)
def test_iperf3_bad_logs_are_rejected_with_the_file_named(path):
    with pytest.raises(ParseError) as error:
        parse_iperf3(path.read_text(), str(path))
    assert str(path) in str(error.value)


@pytest.mark.parametrize(
    "stem, message",
    [
        ("bad-invalid-option-split", "unrecognized option '--bogus-option'"),
        ("bad-no-server-text-split", "unable to connect to server"),
        ("bad-no-server-json-split", "unable to connect to server"),
    ],
)
def test_split_streams_give_the_tool_error(stem, message):
    stdout = fixture_text("iperf3", f"{stem}.stdout")
    stderr = fixture_text("iperf3", f"{stem}.stderr")
    with pytest.raises(ToolReportedError, match=message):
        parse_iperf3(stdout, f"{stem}.stdout", stderr=stderr)


def test_iperf3_error_kinds():
    # JSON with "error" although iperf3 exited 0
    with pytest.raises(ToolReportedError, match="unable to connect to server: Connection refused"):
        parse_iperf3(fixture_text("iperf3", "bad-no-server-json.log"))
    with pytest.raises(ToolReportedError, match="--bogus-option"):
        parse_iperf3(fixture_text("iperf3", "bad-invalid-option-json.log"))
    # interrupted runs print complete-looking summaries; they are truncations
    for name in [
        "bad-truncated-sigterm-text.client.log",
        "bad-truncated-sigterm-text.server.log",
        "bad-truncated-sigterm-json.client.log",
        "bad-truncated-sigterm-json.server.log",
    ]:
        with pytest.raises(TruncatedLogError, match="terminated"):
            parse_iperf3(fixture_text("iperf3", name), name)


def test_interrupted_client_without_its_stderr_line_is_still_refused():
    text = fixture_text("iperf3", "bad-truncated-sigterm-text.client.log")
    stdout_only = text.replace("iperf3: interrupt - the client has terminated\n", "")
    with pytest.raises(TruncatedLogError, match="iperf Done"):
        parse_iperf3(stdout_only, "x.log")
    with pytest.raises(TruncatedLogError, match="0 bytes"):
        parse_iperf3(stdout_only + "\niperf Done.\n", "x.log")


def test_cut_logs_are_truncated():
    text = fixture_text("iperf3", "tcp-10s-text.client.log")
    with pytest.raises(TruncatedLogError, match="iperf Done"):
        parse_iperf3(text[: text.index("iperf Done.")], "cut.log")
    with pytest.raises(TruncatedLogError, match="cut.log"):
        parse_iperf3(text[: text.index("- - - -")] + "\niperf Done.\n", "cut.log")
    data = fixture_text("iperf3", "tcp-10s-json.client.log")
    with pytest.raises(TruncatedLogError, match="JSON"):
        parse_iperf3(data[: len(data) // 2], "cut.json")
    server = fixture_text("iperf3", "tcp-10s-text.server.log")
    with pytest.raises(TruncatedLogError):
        parse_iperf3(server[: server.index("- - - -")], "cut-server.log")


def test_server_log_with_two_tests_is_refused():
    server = fixture_text("iperf3", "tcp-10s-text.server.log")
    with pytest.raises(ParseError, match="2 tests"):
        parse_iperf3(server + server, "two.log")


def test_every_good_capture_parses_to_non_negative_finite_numbers():
    good = [p for p in sorted((DATA / "iperf3").iterdir()) if not p.name.startswith("bad-")]
    assert len(good) == 14
    for path in good:
        records = parse_iperf3(path.read_text(), str(path))
        assert records, path
        assert all(0 <= r["value"] < float("inf") for r in records), path
        assert any(r["metric"] == "throughput" and r["value"] > 0 for r in records), path
