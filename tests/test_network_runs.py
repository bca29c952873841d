"""Network benchmarks for real between two native instances (network namespaces with their own sshd).

The server runs in instance 1, the client in instance 0, over the host-only
bridge; afterwards no server may be left running and no namespace left behind.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
import yaml

from conftest import REPO, require_tools
from virtrepro.rawdata import rawlog
from virtrepro.benchmarks import BENCHMARKS, HOSTS, peer
from virtrepro.benchmarks.base import Preparation
from virtrepro.planning.config import plan, validate_config
from virtrepro.guests import stop_guests
from virtrepro.measurement.job import MeasurementError, measure, with_addresses
from virtrepro.platforms.base import get_platform
from virtrepro.testbed.kinds import LocalTestbed
from virtrepro.testbed.hosts import Host

pytestmark = pytest.mark.integration

TESTBED = "pytest-net"


@pytest.fixture
def config(tmp_path, monkeypatch):
    require_tools("/usr/sbin/sshd", "netperf", "netserver", "iperf3", "ip")
    monkeypatch.setenv("VIRTREPRO_STATE", str(tmp_path / "state"))
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    cfg["testbed"] = TESTBED
    cfg["testbeds"][TESTBED] = {"kind": "local"}
    cfg["repetitions"] = 1
    cfg["platforms"] = ["native"]
    cfg["benchmarks"] = ["netperf", "iperf3"]
    cfg["scales"]["quick"]["netperf"].update(seconds=1, rr_sizes=[64], stream_sizes=[1024])
    cfg["scales"]["quick"]["iperf3"].update(seconds=1, streams=[2])
    validate_config(cfg)
    yield cfg
    stop_guests(TESTBED)
    LocalTestbed(TESTBED, tmp_path / "state").down()


def servers_running() -> list[str]:
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout.splitlines()
    return [line for line in ps if line.startswith(("netserver -D -p 12865", "iperf3 -s -p 5201"))]


EXPECTED = {
    ("netperf", "test-TCP_RR_size-64_seconds-1"): ("half_round_trip_latency", "us"),
    ("netperf", "test-TCP_STREAM_size-1024_seconds-1"): ("throughput", "Mbit/s"),
    ("iperf3", "streams-2_seconds-1"): ("throughput", "Mbit/s"),
}


def test_network_runs_between_two_native_instances(config, tmp_path):
    runs = plan(config)
    assert {(r.benchmark, r.variant.key) for r in runs} == set(EXPECTED)
    for run in runs:
        log = measure(run, config, tmp_path / "data")
        assert rawlog.is_complete(log)
        meta = json.loads(rawlog.sidecar_path(log).read_text())
        native = get_platform("native")(LocalTestbed(TESTBED).host())
        server, client = native.private_address(1), native.private_address(0)
        # the command names the peer's private address, and the sidecar says who was where
        assert f" {server} " in meta["command"] and "@PEER" not in meta["command"]
        assert meta["endpoint"]["hostname"] == client
        assert [p["address"] for p in meta["peers"]] == [server]
        metric, unit = EXPECTED[(run.benchmark, run.variant.key)]
        records = BENCHMARKS[run.benchmark].parse(log.read_text(), str(log), run.variant.param_dict)
        main = [r for r in records if r["metric"] == metric]
        assert main and all(r["value"] > 0 and r["unit"] == unit for r in main)
        if run.benchmark == "iperf3":
            assert {r["num_streams"] for r in main} == {2}
        # both ends bound to CPU 0, recorded in the sidecar; netperf's banner says it bound them
        assert (meta["placement"]["client_cpu"], meta["placement"]["server_cpu"]) == (0, 0)
        if run.benchmark == "netperf":
            assert " -T 0,0 " in meta["command"] and ": cpu bind" in log.read_text().splitlines()[0]
        assert servers_running() == [], "the peer's server was not stopped after the run"


def test_a_missing_server_fails_the_run_and_keeps_the_output(config, tmp_path, monkeypatch):
    """netperf against an instance where no netserver was started: a failed run, never a number."""
    run = next(r for r in plan(config) if r.benchmark == "netperf")
    monkeypatch.setattr(type(BENCHMARKS["netperf"]), "prepare", lambda self, v, config=None: Preparation())
    with pytest.raises(MeasurementError, match="netperf"):
        measure(run, config, tmp_path / "data")
    log = run.log_path(tmp_path / "data")
    assert not log.exists()
    failed = list(log.parent.glob("rep-0.failed-*.log"))
    assert len(failed) == 1 and "establish" in failed[0].read_text()


def test_addresses_replace_the_placeholders():
    host = Host(name=TESTBED, hostname="127.0.0.1", port=22, user="root", identity=None, known_hosts=os.devnull,
                testbed=TESTBED)
    platform = get_platform("native")(host)
    command = f"mpirun --host {HOSTS} x; ping {peer(1)}; ping {peer(11)}"
    assert with_addresses(command, platform, 12) == (
        f"mpirun --host {','.join(platform.private_address(i) for i in range(12))} x; "
        f"ping {platform.private_address(1)}; ping {platform.private_address(11)}"
    )
    assert with_addresses(command, platform, 1) == command  # one instance: nothing to replace
