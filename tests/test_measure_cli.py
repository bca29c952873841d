"""The measurement job's command line refuses runs the plan does not have or logs it would misplace."""

from __future__ import annotations

import json

import yaml

from conftest import REPO
from virtrepro.measure import main


def config_json() -> str:
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    return json.dumps(config)


ARGS = ["--data-dir", "data", "--testbed", "local", "--benchmark", "sysbench_cpu",
        "--variant", "threads-1_prime-20000_seconds-5", "--rep", "0"]


def test_platform_outside_the_configuration_is_refused(capsys):
    config = json.loads(config_json())
    config["platforms"] = ["native"]
    assert main([*ARGS, "--platform", "lxc", "--config", json.dumps(config)]) == 2
    assert "plans no run" in capsys.readouterr().err


def test_log_path_mismatch_is_refused_before_measuring(capsys):
    # a rule that hands the wrong platform to the job must not write another platform's log
    expected = "data/raw/local/native/sysbench_cpu/threads-1_prime-20000_seconds-5/rep-0.log"
    assert main([*ARGS, "--platform", "qemu-tcg", "--config", config_json(), "--expect-log", expected]) == 2
    assert "not to the expected" in capsys.readouterr().err


def test_unknown_variant_is_refused(capsys):
    args = [a if a != "threads-1_prime-20000_seconds-5" else "threads-3_prime-1_seconds-1" for a in ARGS]
    assert main([*args, "--platform", "native", "--config", config_json()]) == 2
