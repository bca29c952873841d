"""fio, bonnie++, dd, stress-ng and HPCC really run on `native` of a local testbed, in tiny sizes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from conftest import REPO, require_tools
from virtrepro.rawdata import rawlog
from virtrepro.benchmarks import BENCHMARKS
from virtrepro.planning.config import plan, validate_config
from virtrepro.guests import stop_guests
from virtrepro.guests.network import testbed_octet as octet_of
from virtrepro.measurement.job import measure
from virtrepro.parsers import ParseError
from virtrepro.testbed.kinds import LocalTestbed

pytestmark = pytest.mark.integration

MAIN_METRIC = {
    "fio": "bw",
    "bonnie": "putc",
    "dd": "throughput",
    "stress_ng": "bogo_ops_per_second_real",
    "hpcc": "hpl_gflops",
}


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    require_tools("/usr/sbin/sshd", "fio", "bonnie++", "dd", "stress-ng", "hpcc", "mpirun")
    state = tmp_path_factory.mktemp("state")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("VIRTREPRO_STATE", str(state))
        cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
        cfg["testbed"] = "pytest-local"
        cfg["testbeds"]["pytest-local"] = {"kind": "local"}
        cfg["repetitions"] = 1
        cfg["platforms"] = ["native"]
        quick = cfg["scales"]["quick"]
        quick["fio"].update(modes=["read", "randwrite"], file_size="8m", seconds=1)
        quick["bonnie"].update(file_sizes=["8m"], num_files=0)
        quick["dd"].update(size_mib=16)
        quick["stress_ng"].update(stressors=["cpu", "vm"], workers=[1], vm_bytes="32M", seconds=1)
        quick["hpcc"].update(procs="all", n=500, nb=50, nodes=[1, 2])  # 2: MPI across two network namespaces
        cfg["benchmarks"] = sorted(MAIN_METRIC)
        validate_config(cfg)
        yield cfg
        stop_guests("pytest-local")
        LocalTestbed("pytest-local", state).down()


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("data")


def runs_of(config, benchmark):
    return [r for r in plan(config) if r.benchmark == benchmark]


@pytest.mark.parametrize("benchmark", sorted(MAIN_METRIC))
def test_real_run_parses_and_has_a_positive_main_metric(config, data_dir, benchmark):
    runs = runs_of(config, benchmark)
    assert runs
    for run in runs:
        log = measure(run, config, data_dir)
        assert rawlog.is_complete(log) and log.stat().st_size > 0
        meta = json.loads(rawlog.sidecar_path(log).read_text())
        assert meta["status"] == "complete" and meta["exit_status"] == 0
        assert meta["benchmark"] == benchmark and meta["parameters"] == run.variant.param_dict
        assert meta["scratch"].startswith("/var/tmp/virtrepro/") and not Path(meta["scratch"]).exists()
        assert meta["tool_version"] not in ("", "unknown")
        records = BENCHMARKS[benchmark].parse(log.read_text(), str(log), run.variant.param_dict)
        assert meta["records"] == len(records)
        main = [r for r in records if r["metric"] == MAIN_METRIC[benchmark]]
        assert main and all(r["value"] > 0 for r in main), (benchmark, run.variant.key)
        if run.variant.param_dict.get("nodes") == 2:
            # ranks in both instances, started over SSH with a per-run key and pinned host keys
            assert len(meta["peers"]) == 1 and meta["peer_ssh"]
            assert {r["nodes"] for r in records} == {2}
            octet = octet_of("pytest-local")  # the instances' addresses are the testbed's own
            assert "nodes=2" in log.read_text() and f"echo 10.251.{octet}.70,10.251.{octet}.71 |" in meta["command"]


def _kept_log(config, data_dir, benchmark, **match):
    run = next(r for r in runs_of(config, benchmark) if all(r.variant.param_dict[k] == v for k, v in match.items()))
    log = run.log_path(data_dir)
    if not rawlog.is_complete(log):
        measure(run, config, data_dir)
    return run, log.read_text()


def test_logs_are_checked_against_the_parameters_asked_for(config, data_dir):
    """The real logs of the runs above are refused when read with other parameters."""
    run, text = _kept_log(config, data_dir, "fio", mode="read")
    params = run.variant.param_dict
    assert {r["direction"] for r in BENCHMARKS["fio"].parse(text, "fio.log", params) if r["metric"] == "bw"} == {"read"}
    with pytest.raises(ParseError, match="ran rw='read', not 'write'"):
        BENCHMARKS["fio"].parse(text, "fio.log", {**params, "mode": "write"})
    with pytest.raises(ParseError, match="runtime"):
        BENCHMARKS["fio"].parse(text, "fio.log", {**params, "seconds": 2})

    run, text = _kept_log(config, data_dir, "hpcc")
    params = run.variant.param_dict
    with pytest.raises(ParseError, match="n=500, the configuration asks for n=600"):
        BENCHMARKS["hpcc"].parse(text, "hpcc.log", {**params, "n": 600})
    with pytest.raises(ParseError, match="nb=50, the configuration asks for nb=64"):
        BENCHMARKS["hpcc"].parse(text, "hpcc.log", {**params, "nb": 64})
    cut = text[: text.index("virtrepro: end hpccoutf.txt")]
    with pytest.raises(ParseError, match="hpccoutf.txt"):
        BENCHMARKS["hpcc"].parse(cut, "hpcc.log", params)

    run, text = _kept_log(config, data_dir, "bonnie")
    with pytest.raises(ParseError, match="8M file, 16m was asked for"):
        BENCHMARKS["bonnie"].parse(text, "bonnie.log", {**run.variant.param_dict, "size": "16m"})

    run, text = _kept_log(config, data_dir, "stress_ng", stressor="cpu")
    with pytest.raises(ParseError, match="1s timeout per stressor, the caller requested 5s"):
        BENCHMARKS["stress_ng"].parse(text, "stress.log", {**run.variant.param_dict, "seconds": 5})
    with pytest.raises(ParseError, match="ran 1 cpu instances, 2 were asked for"):
        BENCHMARKS["stress_ng"].parse(text, "stress.log", {**run.variant.param_dict, "workers": 2})
