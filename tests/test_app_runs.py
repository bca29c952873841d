"""The thesis' application workloads for real on `native` of a local testbed, in tiny sizes.

nginx, PostgreSQL and RabbitMQ run in instance 1 (a network namespace with its own sshd), wrk,
pgbench and the AMQP load in instance 0; pyperformance and openssl speed in one instance.
Afterwards no server may be left running and no server directory left behind.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import REPO, require_tools
from virtrepro.rawdata import rawlog
from virtrepro.benchmarks import BENCHMARKS
from virtrepro.benchmarks.apps import PEER_ROOT
from virtrepro.planning.config import plan, validate_config
from virtrepro.guests import stop_guests
from virtrepro.measurement.job import measure
from virtrepro.testbed.kinds import LocalTestbed

pytestmark = pytest.mark.integration

TESTBED = "pytest-apps"
MAIN = {  # benchmark: (metric, unit)
    "nginx_wrk": ("requests_per_s", "requests/s"),
    "pgbench": ("tps", "transactions/s"),
    "rabbitmq": ("messages_per_s", "messages/s"),
    "pyperformance": ("time", "s"),
    "openssl_speed": ("sign_per_s", "operations/s"),
}
SERVERS = ("nginx: master", "postgres -D", "beam.smp")


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    require_tools("/usr/sbin/sshd", "nginx", "wrk", "openssl", "/usr/lib/rabbitmq/bin/rabbitmq-server", "/usr/bin/python3")
    state = tmp_path_factory.mktemp("state")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("VIRTREPRO_STATE", str(state))
        cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
        cfg["testbed"] = TESTBED
        cfg["testbeds"][TESTBED] = {"kind": "local"}
        cfg["repetitions"] = 1
        cfg["platforms"] = ["native"]
        quick = cfg["scales"]["quick"]
        quick["nginx_wrk"].update(file_kb=[4], connections=[4], seconds=1)
        quick["pgbench"].update(modes=["select"], clients=[2], seconds=1)
        quick["rabbitmq"].update(messages=500, sizes=[256])
        quick["pyperformance"].update(benchmarks=["nbody"], mode="default", processes=1)  # pyperf -p 1: 3 values
        quick["openssl_speed"].update(algorithms=["rsa2048"], seconds=1)
        cfg["benchmarks"] = list(MAIN)
        validate_config(cfg)
        yield cfg
        stop_guests(TESTBED)
        LocalTestbed(TESTBED, state).down()


def servers_running() -> list[str]:
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout.splitlines()
    return [line for line in ps if any(name in line for name in SERVERS) and "virtrepro/peer-" in line]


def epmd_count() -> int:
    """Erlang's port mapper, which RabbitMQ starts as a daemon of its own (no path to tell it by)."""
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout.splitlines()
    return sum(1 for line in ps if line.split(" ")[0].endswith("/epmd"))


def test_application_workloads_run_and_leave_nothing_behind(config, tmp_path):
    runs = plan(config)
    assert sorted(r.benchmark for r in runs) == sorted(MAIN)
    before = set(Path(PEER_ROOT).glob("peer-*")) if Path(PEER_ROOT).exists() else set()
    epmd_before = epmd_count()
    for run in runs:
        log = measure(run, config, tmp_path / "data")
        assert rawlog.is_complete(log)
        meta = json.loads(rawlog.sidecar_path(log).read_text())
        records = BENCHMARKS[run.benchmark].parse(log.read_text(), str(log), run.variant.param_dict)
        metric, unit = MAIN[run.benchmark]
        main = [r for r in records if r["metric"] == metric]
        assert main and all(r["value"] > 0 and r["unit"] == unit for r in main), run.benchmark
        # uploads are recorded with their checksum and a path that names no directory of this machine
        assert all(not u["local"].startswith("/") and len(u["sha256"]) == 64 for u in meta.get("uploads", []))
        if run.benchmark in ("rabbitmq", "pyperformance"):
            assert meta["uploads"], run.benchmark
        if run.benchmark == "pyperformance":  # one worker process of pyperf's 3 values (its default, -p 1)
            assert "-p 1" in meta["command"] and {r["values"] for r in main} == {3}
        if BENCHMARKS[run.benchmark].instances(run.variant) == 2:
            server = meta["peers"][0]["address"]
            assert server in meta["command"] and "@PEER" not in meta["command"]
            assert meta["endpoint"]["hostname"] != server  # the load came from the other instance
        assert servers_running() == [], f"{run.benchmark}: its server was not stopped after the run"
        assert epmd_count() == epmd_before, f"{run.benchmark}: an epmd was left running"
    after = set(Path(PEER_ROOT).glob("peer-*")) if Path(PEER_ROOT).exists() else set()
    assert after <= before, f"server directories left behind: {sorted(map(str, after - before))}"


def test_a_server_that_cannot_start_fails_the_run_and_keeps_its_output(config, tmp_path):
    """pgbench against a server whose start fails: the run fails with the server's own words,
    nothing is recorded as a measurement, and nothing is left running."""
    cfg = yaml.safe_load(yaml.safe_dump(config))
    cfg["benchmarks"] = ["pgbench"]
    cfg["scales"]["quick"]["pgbench"].update(modes=["select"], clients=[1], seconds=1)
    (run,) = plan(cfg)
    bench = BENCHMARKS["pgbench"]
    original = bench.prepare

    def refused(variant, config=None):
        prepared = original(variant, config)
        return dataclasses.replace(prepared, peer_start=prepared.peer_start.replace("-c port=5432", "-c port=5432 -c no_such_setting=1"))

    try:  # a real failure of the real server: an option PostgreSQL refuses
        bench.prepare = refused
        with pytest.raises(Exception, match="no_such_setting|starting the peer side"):
            measure(run, cfg, tmp_path / "data")
    finally:
        bench.prepare = original
    assert not list((tmp_path / "data").rglob("rep-0.log"))
    assert servers_running() == []


def test_pgbench_bound_to_a_placement_runs_its_client_and_server_where_it_says(config, tmp_path):
    """``placements``: an unbound variant keeps its key (the committed data's); a bound one names its
    placement, runs pgbench under ``taskset -c`` and its server's processes on the server CPU, and
    the sidecar records where."""
    import os

    if (os.cpu_count() or 1) < 2:
        pytest.skip("placement split needs two CPUs")
    bench = BENCHMARKS["pgbench"]
    params = {"modes": ["select"], "scale": 10, "clients": [4], "seconds": 10}
    (unbound,) = bench.variants(params)
    assert unbound.key == "mode-select_scale-10_clients-4_seconds-10" and bench.placement(unbound) is None
    assert "taskset" not in bench.run(unbound) and "taskset" not in bench.prepare(unbound).peer_start
    keys = [v.key for v in bench.variants({**params, "placements": ["unbound", "same", "split"]})]
    assert keys == [unbound.key, f"{unbound.key}_placement-same", f"{unbound.key}_placement-split"]
    cfg = yaml.safe_load(yaml.safe_dump(config))
    cfg["benchmarks"] = ["pgbench"]
    cfg["scales"]["quick"]["pgbench"].update(modes=["select"], clients=[2], seconds=1, placements=["split"])
    validate_config(cfg)
    (run,) = plan(cfg)
    log = measure(run, cfg, tmp_path / "data")
    meta = json.loads(rawlog.sidecar_path(log).read_text())
    assert (meta["placement"]["client_cpu"], meta["placement"]["server_cpu"]) == (0, 1)
    assert "taskset -c $cpu " in meta["command"] and "j=1;" in meta["command"]
    records = bench.parse(log.read_text(), str(log), run.variant.param_dict)
    assert [r["value"] > 0 for r in records if r["metric"] == "tps"] == [True]
    assert servers_running() == []


def test_pgbench_finds_its_cpu_in_the_instances_own_cpu_list():
    """The bound placement's shell statement, run under a known affinity: the index-th CPU of
    Cpus_allowed_list, and one clear line when the instance has too few."""
    import os

    if (os.cpu_count() or 1) < 2:
        pytest.skip("needs two CPUs")
    bench = BENCHMARKS["pgbench"]
    (split,) = bench.variants({"modes": ["select"], "scale": 1, "clients": [1], "seconds": 1, "placements": ["split"]})

    def cpu(side, allowed):
        find, bind = bench._bound(split, side)
        done = subprocess.run(["taskset", "-c", allowed, "sh", "-c", f'{find}echo "{bind}"'], capture_output=True, text=True)
        return done.returncode, done.stdout.strip(), done.stderr.strip()

    assert cpu("client_cpu", "0,1") == (0, "taskset -c 0", "")
    assert cpu("server_cpu", "0,1") == (0, "taskset -c 1", "")
    assert cpu("client_cpu", "1") == (0, "taskset -c 1", "")  # the first of the instance's own CPUs
    code, out, err = cpu("server_cpu", "1")
    assert (code, out) == (2, "") and err == "pgbench placement split: this instance has no CPU number 2 in its Cpus_allowed_list"


def test_rabbitmqs_broker_serves_every_round_of_its_job_and_is_stopped_with_it(config, tmp_path):
    """RabbitMQ's broker is job-scoped (Preparation.peer_scope "job"): a job of three rounds starts it
    once, before round 0, every run's sidecar says so (the same start), and when the job ends the
    broker, its epmd and its directory are gone. The other servers stay run-scoped."""
    from virtrepro.measurement.job import measure_rounds
    from virtrepro.planning.config import plan_rounds

    cfg = yaml.safe_load(yaml.safe_dump(config))
    cfg["benchmarks"] = ["rabbitmq"]
    cfg["repetitions"] = 3
    (job,) = plan_rounds(cfg, ["native"])
    epmd_before = epmd_count()
    before = set(Path(PEER_ROOT).glob("peer-*")) if Path(PEER_ROOT).exists() else set()
    measure_rounds(job, cfg, tmp_path / "data")
    plan = job.plans[0]
    sidecars = [json.loads(rawlog.sidecar_path(plan.run(r).log_path(tmp_path / "data")).read_text()) for r in range(3)]
    servers = [s["server"] for s in sidecars]
    assert [s["round"] for s in sidecars] == [0, 1, 2]
    assert all(s["scope"] == "job" and s["started_in_round"] == 0 for s in servers)
    assert len({s["started_utc"] for s in servers}) == 1 and servers[0]["started_utc"] <= sidecars[0]["started_utc"]
    assert servers_running() == [] and epmd_count() == epmd_before
    after = set(Path(PEER_ROOT).glob("peer-*")) if Path(PEER_ROOT).exists() else set()
    assert after <= before
    for name in ("nginx_wrk", "pgbench"):  # a fresh server for every run
        variant = BENCHMARKS[name].variants(config["scales"]["quick"][name])[0]
        assert BENCHMARKS[name].prepare(variant).peer_scope == "run"
