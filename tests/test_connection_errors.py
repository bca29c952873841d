"""testbed.connect on hosts that cannot be reached: one line naming the host, what failed and
what to do, a TestbedError (never a paramiko traceback). Real sockets on 127.0.0.1."""

from __future__ import annotations

import socket
import subprocess
import threading
import time

import pytest

from virtrepro.testbed.hosts import Host, connect
from virtrepro.testbed.hosts import TestbedError as ConnectError


@pytest.fixture
def known_hosts(tmp_path):
    path = tmp_path / "known_hosts"
    path.write_text("")
    return path


@pytest.fixture
def key(tmp_path):
    path = tmp_path / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    return path


def host_on(port: int, known_hosts, identity) -> Host:
    return Host("probe", "127.0.0.1", port, "nobody", str(identity), str(known_hosts))


def closed_port() -> int:
    with socket.socket() as sock:  # bound, never listening: connecting is refused
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Listener:
    """A TCP server on 127.0.0.1 that accepts and then stays silent, or closes at once."""

    def __init__(self, close_at_once: bool):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.accepted = []
        self.close_at_once = close_at_once
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            if self.close_at_once:
                conn.close()
            else:
                self.accepted.append(conn)

    def close(self):
        self.sock.close()
        for conn in self.accepted:
            conn.close()


def failure(host: Host, timeout: float = 20) -> str:
    with pytest.raises(ConnectError) as error:
        with connect(host, timeout=timeout) as connection:
            connection.run("true", hide=True, in_stream=False)
    message = str(error.value)
    assert "\n" not in message
    assert f"127.0.0.1:{host.port}" in message
    return message


def test_a_closed_port_is_refused(known_hosts, key):
    message = failure(host_on(closed_port(), known_hosts, key))
    assert "connection refused" in message and "sshd" in message


def test_a_port_that_never_speaks_ssh(known_hosts, key):
    listener = Listener(close_at_once=False)
    try:
        start = time.monotonic()
        message = failure(host_on(listener.port, known_hosts, key), timeout=1.5)
        assert time.monotonic() - start < 10
    finally:
        listener.close()
    assert "no SSH server answers" in message and "1.5 s" in message


def test_a_server_that_hangs_up_at_once(known_hosts, key):
    listener = Listener(close_at_once=True)
    try:
        message = failure(host_on(listener.port, known_hosts, key), timeout=5)
    finally:
        listener.close()
    assert "closed the connection" in message


def test_a_missing_identity_file(known_hosts, tmp_path):
    missing = tmp_path / "no_such_key"
    with pytest.raises(ConnectError) as error:
        connect(host_on(closed_port(), known_hosts, missing))
    message = str(error.value)
    assert "\n" not in message and str(missing) in message and "does not exist" in message


def test_an_unresolvable_host_name(known_hosts, key):
    host = Host("probe", "no-such-host.invalid", 22, "nobody", str(key), str(known_hosts))
    with pytest.raises(ConnectError, match=r"cannot resolve host name 'no-such-host.invalid'") as error:
        with connect(host) as connection:
            connection.run("true", hide=True, in_stream=False)
    assert "\n" not in str(error.value)


def test_an_unreachable_host_fails_its_variant_in_one_line(tmp_path, monkeypatch, known_hosts, key):
    """measure_variant on a remote testbed whose host refuses: one MeasurementError naming the
    host, no traceback, no log, the other repetitions not tried."""
    import yaml

    from conftest import REPO
    from virtrepro.planning.config import plan_variants, validate_config
    from virtrepro.measurement.job import MeasurementError, measure_variant

    monkeypatch.setenv("VIRTREPRO_STATE", str(tmp_path / "state"))
    port = closed_port()
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    cfg["testbed"] = "unreachable"
    cfg["testbeds"]["unreachable"] = {"kind": "ssh", "known_hosts": str(known_hosts),
                                      "hosts": [{"hostname": "127.0.0.1", "port": port, "identity": str(key)}]}
    cfg["platforms"] = ["native"]
    cfg["benchmarks"] = ["sysbench_cpu"]
    cfg["repetitions"] = 3
    validate_config(cfg)
    variant = plan_variants(cfg, ["native"])[0]
    with pytest.raises(MeasurementError) as error:
        measure_variant(variant, cfg, tmp_path / "data")
    message = str(error.value)
    assert "\n" not in message and f"127.0.0.1:{port}" in message and "connection refused" in message
    assert "rep 0:" in message
    assert not list((tmp_path / "data").rglob("*.log"))
