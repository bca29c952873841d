"""The measurement job's command line refuses runs the plan does not have or logs it would misplace."""

from __future__ import annotations

import json

import pytest
import yaml

from conftest import REPO
from virtrepro.measurement.job import main


def config_json() -> str:
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    # the plan these tests name, whatever the shipped quick scale says
    config["scales"]["quick"]["sysbench_cpu"].update(repetitions=5, cpu_max_prime=20000, seconds=5)
    return json.dumps(config)


ARGS = ["--data-dir", "data", "--testbed", "local", "--benchmark", "sysbench_cpu",
        "--variant", "threads-1_prime-20000_seconds-5"]


def test_platform_outside_the_configuration_is_refused(capsys):
    config = json.loads(config_json())
    config["platforms"] = ["native"]
    assert main([*ARGS, "--platform", "lxc", "--config", json.dumps(config)]) == 2
    assert "plans no run" in capsys.readouterr().err


def test_marker_path_mismatch_is_refused_before_measuring(capsys):
    # a rule that hands the job another plan (here another count) must not write logs it does not expect
    expected = "data/raw/local/rounds/sysbench_cpu/threads-1_prime-20000_seconds-5.reps-4.json"
    assert main([*ARGS, "--platform", "native", "--config", config_json(), "--expect-marker", expected]) == 2
    assert "not the expected" in capsys.readouterr().err


def test_repetition_outside_the_plan_is_refused(capsys):
    assert main([*ARGS, "--platform", "native", "--config", config_json(), "--rep", "5"]) == 2
    assert "has repetitions 0..4" in capsys.readouterr().err


def test_unknown_variant_is_refused(capsys):
    args = [a if a != "threads-1_prime-20000_seconds-5" else "threads-3_prime-1_seconds-1" for a in ARGS]
    assert main([*args, "--platform", "native", "--config", config_json()]) == 2


def test_run_time_install_blocks_services_only_while_it_runs_and_reports_apt_failures():
    """A benchmark's packages installed at run time (a host whose set-up was skipped) must not
    start their services: policy-rc.d refuses while apt-get runs and is gone afterwards."""
    import os
    import subprocess

    from virtrepro.testbed.hostagent import install_command

    policy = "/usr/sbin/policy-rc.d"
    if os.geteuid() != 0 or os.path.exists(policy):
        import pytest
        pytest.skip("needs root and no policy-rc.d of the machine's own")
    # sysbench is installed by the set-up script: apt-get has nothing to do and succeeds
    ok = subprocess.run(["sh", "-c", install_command(["sysbench"])], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert not os.path.exists(policy)
    bad = subprocess.run(["sh", "-c", install_command(["no-such-package-virtrepro"])], capture_output=True, text=True)
    assert bad.returncode != 0 and "no-such-package-virtrepro" in bad.stderr
    assert not os.path.exists(policy)


def test_harness_cpu_used_is_the_difference_as_a_share_of_a_core():
    from virtrepro.measurement.cpu import harness_cpu_used

    used = harness_cpu_used({"orchestrator": 10.0, "harness": 2.0}, {"orchestrator": 10.05, "harness": 2.5}, 10.0)
    assert used.pop("resolution_s") > 0
    assert used == {"orchestrator_cpu_s": 0.05, "orchestrator_share_of_a_core": 0.005,
                    "harness_cpu_s": 0.5, "harness_share_of_a_core": 0.05}
    none = harness_cpu_used({"orchestrator": None, "harness": 1.0}, {"orchestrator": None, "harness": 1.0}, 2.0)
    assert {k: v for k, v in none.items() if k != "resolution_s"} == {
        "orchestrator": None, "harness_cpu_s": 0.0, "harness_share_of_a_core": 0.0}


def test_the_tool_check_runs_once_per_instance_and_benchmark_in_a_process():
    """A job's later repetitions run in the same instance: its tool was found there, so they do not
    ask again (a version command that starts Python takes seconds in a TCG guest); another
    instance or another benchmark is asked."""
    import subprocess as sp
    from dataclasses import replace
    from types import SimpleNamespace

    from virtrepro.measurement import instance as measure
    from virtrepro.benchmarks import BENCHMARKS
    from virtrepro.testbed.hosts import Host

    class Shell:  # runs the probe in a local shell, counting round trips
        def __init__(self):
            self.commands = []

        def run(self, command, **_):
            self.commands.append(command)
            done = sp.run(["sh", "-c", command], capture_output=True, text=True)
            return SimpleNamespace(stdout=done.stdout, stderr=done.stderr, exited=done.returncode)

    measure._TOOLS_PRESENT.clear()
    guest = Host("g", "10.0.0.2", 22, "root", None, "/state/g/known_hosts")
    shell = Shell()
    first = measure.ensure_tools(shell, BENCHMARKS["dd"], guest)
    assert first.startswith("dd (coreutils)") and len(shell.commands) == 1
    assert measure.ensure_tools(shell, BENCHMARKS["dd"], guest) == first and len(shell.commands) == 1
    measure.ensure_tools(shell, BENCHMARKS["dd"], replace(guest, known_hosts="/state/h/known_hosts"))
    measure.ensure_tools(shell, BENCHMARKS["mbw"], guest)
    assert len(shell.commands) == 3


def test_every_planned_job_round_trips_through_its_plan_entry():
    from virtrepro.planning.config import VariantRounds, plan_rounds
    from virtrepro.measurement.job import plan_entry

    config = json.loads(config_json())
    for scale in config["scales"]:
        for job in plan_rounds({**config, "scale": scale}, ["native", "lxc", "qemu-tcg"]):
            assert VariantRounds.from_json(json.loads(plan_entry(job, "h"))["rounds"]) == job


def test_a_plan_entry_that_is_none_is_one_error_line(tmp_path):
    from virtrepro.measurement.job import MeasurementError

    with pytest.raises((MeasurementError, ValueError), match="plan entry"):
        main(["--data-dir", str(tmp_path), "--config", config_json(), "--plan-entry", "{}"])
