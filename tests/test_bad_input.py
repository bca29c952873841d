"""Bad input gets one line naming the file, key or parameter, a non-zero exit status, and no
traceback (unless VIRTREPRO_DEBUG=1 or --debug asks for one): configuration files, the
configuration's keys and their meaning, the measurement job's configuration, the other
command lines, damaged tables, and the notebooks' parameters."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import REPO
from virtrepro.cli import run
from virtrepro.planning.config import ConfigError, read_config_file, validate_config

PYTHON = sys.executable


@pytest.fixture
def config():
    return yaml.safe_load((REPO / "config" / "config.yaml").read_text())


def environment(**extra) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow"), **extra}
    for name in ("VIRTREPRO_CONFIG", "VIRTREPRO_CONFIG_VALIDATED", "VIRTREPRO_DEBUG"):
        if name not in extra:
            env.pop(name, None)
    return env


def command(*args: str, cwd: Path | None = None, **env) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, *args], capture_output=True, text=True, cwd=cwd or REPO,
                          env=environment(**env), timeout=120)


def one_error_line(result: subprocess.CompletedProcess) -> str:
    """The run failed with exactly one line starting `error:` and no traceback; that line."""
    assert result.returncode != 0, result.stdout + result.stderr
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, output
    return errors[0]


# -- configuration files ---------------------------------------------------------------------

def test_a_missing_config_file_is_named(tmp_path):
    with pytest.raises(ConfigError, match=f"config file {tmp_path}/nope.yaml: No such file"):
        read_config_file(tmp_path / "nope.yaml")


def test_broken_yaml_names_file_line_and_column(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("scale: quick\nplatforms: [native\nbenchmarks: [iozone]\n")  # the list never closes
    with pytest.raises(ConfigError) as error:
        read_config_file(path)
    # PyYAML notices on line 3, column 11, where a `:` appears inside the unclosed flow list
    assert str(error.value).startswith(f"config file {path}:3:11: not valid YAML: ")


def test_a_config_file_without_keys_is_refused(tmp_path):
    path = tmp_path / "list.yaml"
    path.write_text("- native\n")
    with pytest.raises(ConfigError, match="holds list, not keys with values"):
        read_config_file(path)


def test_run_names_a_missing_or_broken_configfile_before_snakemake_starts(tmp_path):
    missing = one_error_line(command("-m", "virtrepro", "-n", "--configfile", str(tmp_path / "nope.yaml")))
    assert missing == f"error: config file {tmp_path}/nope.yaml: No such file or directory"
    broken = tmp_path / "broken.yaml"
    broken.write_text("testbed: local\n\tscale: quick\n")
    line = one_error_line(command("-m", "virtrepro", "-n", f"--configfile={broken}"))
    assert line.startswith(f"error: config file {broken}:2:1: not valid YAML")


def test_run_finds_every_configfile_argument():
    from virtrepro.__main__ import configfiles

    argv = ["--cores", "all", "--configfile", "a.yaml", "b.yaml", "-n", "--configfiles=c.yaml", "--config", "x=1"]
    assert configfiles(argv) == ["a.yaml", "b.yaml", "c.yaml"]


def test_a_broken_default_config_stops_snakemake_with_file_and_line(tmp_path):
    """config/config.yaml itself broken: the Snakefile names the file and line (Snakemake alone says neither)."""
    shutil.copy(REPO / "Snakefile", tmp_path / "Snakefile")
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text("testbed: local\nplatforms: [native\n")
    result = command("-m", "snakemake", "-n", "--snakefile", str(tmp_path / "Snakefile"),
                     "--directory", str(tmp_path), cwd=tmp_path)
    line = one_error_line(result)
    assert line.startswith(f"error: config file {tmp_path}/config/config.yaml:3:1: not valid YAML")


# -- the configuration's keys and what they mean -----------------------------------------------

SSH = {"kind": "ssh", "hosts": [{"hostname": "node1"}], "known_hosts": "known_hosts"}


@pytest.mark.parametrize(
    "change, expected",
    [
        # an SSH testbed without known_hosts is told what it lacks (not "'local' was expected")
        (lambda c: c["testbeds"].update(far={k: v for k, v in SSH.items() if k != "known_hosts"}),
         "config key 'testbeds.far': 'known_hosts' is a required property"),
        (lambda c: c["testbeds"].update(far={"kind": "local", "hosts": []}),
         "config key 'testbeds.far': Additional properties are not allowed ('hosts' was unexpected)"),
        (lambda c: c["testbeds"].update(far={"hosts": []}), "config key 'testbeds.far': 'kind' is a required property"),
        (lambda c: c["testbeds"].update(far={**SSH, "kind": "sshd"}), "config key 'testbeds.far.kind': 'sshd' is not one of"),
        (lambda c: c["testbeds"].update(far={**SSH, "hosts": [{"hostname": "n", "port": 0}]}),
         "config key 'testbeds.far.hosts.0.port': 0 is less than the minimum of 1"),
        # a value that may be a number or `all`: both complaints
        (lambda c: c["scales"]["quick"]["sysbench_cpu"].update(threads=["four"]),
         "config key 'scales.quick.sysbench_cpu.threads.0': 'four' is none of the allowed forms "
         "('four' is not of type 'integer'; 'all' was expected)"),
        (lambda c: c["scales"]["quick"]["hpcc"].update(memory_fraction=0.5),
         "config key 'scales.quick.hpcc': give exactly one of 'n', 'memory_fraction'"),
        # what only the benchmark knows, checked up front
        (lambda c: c["scales"]["quick"]["iozone"].update(min_file_size="128m"),
         "config key 'scales.quick.iozone': min_file_size is larger than max_file_size"),
        (lambda c: c["scales"]["quick"]["bonnie"].update(file_sizes=["1m"]),
         "config key 'scales.quick.bonnie': file size 1m is below 2m"),
        (lambda c: c["scales"]["quick"]["pyperformance"].update(mode="fast", processes=3),
         "config key 'scales.quick.pyperformance': processes (3) needs mode default"),
        # empty lists would plan no job at all
        (lambda c: c["scales"]["quick"]["netperf"].update(rr_sizes=[]),
         "config key 'scales.quick.netperf.rr_sizes': [] should be non-empty"),
        (lambda c: c["scales"]["quick"]["netperf"].update(stream_sizes=[]),
         "config key 'scales.quick.netperf.stream_sizes': [] should be non-empty"),
        (lambda c: c.update(repetitions=0), "config key 'repetitions': 0 is less than the minimum of 1"),
        (lambda c: c.update(repetitions=-2), "config key 'repetitions': -2 is less than the minimum of 1"),
    ],
)
def test_bad_config_names_the_key_and_the_real_problem(config, change, expected):
    bad = copy.deepcopy(config)
    change(bad)
    with pytest.raises(ConfigError) as error:
        validate_config(bad)
    assert str(error.value).startswith(expected)


def test_snakemake_still_fills_the_schemas_defaults_under_each_kind_of_testbed(config, tmp_path):
    """The workflow runs Snakemake's validate after ours, to fill defaults (it needs every
    subschema of `properties` to be a mapping, also under the `if`/`then` on a testbed's kind),
    on the schema the declarations complete, written to a file as the workflow does."""
    from snakemake.utils import validate

    from virtrepro.planning.config import write_schema

    config["testbeds"]["far"] = dict(SSH)
    validate(config, str(write_schema(tmp_path)))
    assert config["testbeds"]["far"]["hosts"] == [{"hostname": "node1", "port": 22, "user": "root"}]
    assert config["guest"]["disk_format"] == "qcow2" and config["testbeds"]["local"] == {"kind": "local"}


def test_semantic_errors_are_checked_for_the_chosen_scale_and_benchmarks_only(config):
    config["scales"]["paper"]["iozone"]["min_file_size"] = "1g"  # not the chosen scale
    validate_config(config)
    config["benchmarks"] = [b for b in config["benchmarks"] if b != "iozone"]
    config["scale"] = "paper"
    validate_config(config)  # the chosen scale, but iozone is not run


def test_repetitions_null_takes_the_benchmarks_own_count_and_zero_does_not(config):
    from virtrepro.planning.config import plan_variants

    config["platforms"], config["benchmarks"] = ["native"], ["mbw"]
    assert {v.repetitions for v in plan_variants(config)} == {config["scales"]["quick"]["mbw"]["repetitions"]}
    config["repetitions"] = 0  # refused by validation; the plan no longer replaces it by the default
    assert {v.repetitions for v in plan_variants(config)} == {0}


@pytest.mark.parametrize(
    "change, expected",
    [
        (lambda c: c["testbeds"].update(local={k: v for k, v in SSH.items() if k != "known_hosts"}),
         "error: config key 'testbeds.local': 'known_hosts' is a required property"),
        (lambda c: c["scales"]["quick"]["iozone"].update(min_file_size="128m"),
         "error: config key 'scales.quick.iozone': min_file_size is larger than max_file_size"),
        (lambda c: c["scales"]["quick"]["netperf"].update(stream_sizes=[]),
         "error: config key 'scales.quick.netperf.stream_sizes': [] should be non-empty"),
    ],
)
def test_snakemake_stops_on_a_bad_key_with_one_line(tmp_path, config, change, expected):
    change(config)
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(config))
    result = command("-m", "snakemake", "-n", "--snakefile", str(REPO / "Snakefile"), "--directory", str(tmp_path),
                     "--configfile", str(tmp_path / "bad.yaml"), cwd=tmp_path)
    assert one_error_line(result) == expected


@pytest.mark.parametrize(
    "probe, content, reason",
    [
        ("qemu-accel.json", '{"platf', "probe record unreadable (Unterminated string starting at: line 1 column 2 (char 1))"),
        ("qemu-accel.json", "[1]", "probe record has no 'platform' (damaged?)"),
        ("npb.json", '{"stat": "available"}', "probe record has no 'status' (damaged?)"),
    ],
)
def test_a_damaged_probe_record_stops_snakemake_with_one_line(tmp_path, config, probe, content, reason):
    probes = tmp_path / "data" / "raw" / "local" / "probes"
    probes.mkdir(parents=True)
    # every probe present, one of them damaged: the plan reads them all (a build's missing probe would
    # be a checkpoint still to run, and a dry run stops planning there)
    (probes / "qemu-accel.json").write_text('{"platform": "qemu-tcg"}')
    (probes / "npb.json").write_text('{"status": "skipped", "reason": "offline"}')
    (probes / "mitgcm.json").write_text('{"status": "skipped", "reason": "no tarball"}')
    (probes / probe).write_text(content)
    config["data_dir"] = str(tmp_path / "data")
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    result = command("-m", "snakemake", "-n", "--snakefile", str(REPO / "Snakefile"), "--directory", str(tmp_path),
                     "--configfile", str(tmp_path / "c.yaml"), cwd=tmp_path)
    assert result.returncode != 0
    assert one_error_line(result) == f"error: {probes / probe}: {reason}; delete it to probe again"


# -- the measurement job -----------------------------------------------------------------------

JOB = ["-m", "virtrepro.measurement.job", "--testbed", "local", "--platform", "native", "--benchmark", "sysbench_cpu",
       "--variant", "threads-1_prime-20000_seconds-5"]


def test_measurement_job_refuses_a_config_that_is_not_json(tmp_path):
    line = one_error_line(command(*JOB, "--data-dir", str(tmp_path), "--config", "scale: quick"))
    assert line.startswith("error: --config: not a JSON configuration (Expecting value: line 1 column 1")
    line = one_error_line(command(*JOB, "--data-dir", str(tmp_path), VIRTREPRO_CONFIG="{"))
    assert line.startswith("error: $VIRTREPRO_CONFIG: not a JSON configuration")


@pytest.mark.parametrize(
    "given, expected",
    [
        ({}, "error: config key '<top level>': 'testbed' is a required property"),
        ([], "error: the configuration is list, not a mapping of keys to values"),
        ({"repetitions": -2}, "error: config key 'repetitions': -2 is less than the minimum of 1"),
        ({"repetitions": 0}, "error: config key 'repetitions': 0 is less than the minimum of 1"),
    ],
)
def test_measurement_job_validates_its_configuration_and_writes_nothing(tmp_path, capsys, config, given, expected):
    from virtrepro.measurement.job import main

    text = json.dumps({**config, **given} if given else given)
    with pytest.raises(SystemExit) as status:
        run(main, [*JOB[2:], "--data-dir", str(tmp_path / "data"), "--config", text])
    assert status.value.code == 1
    assert capsys.readouterr().err.splitlines() == [expected]
    assert not (tmp_path / "data").exists()  # no marker, no directory


def test_measurement_job_trusts_only_the_configuration_the_workflow_validated(monkeypatch, config):
    from virtrepro.planning.config import VALIDATED_ENV, config_from_json, digest

    validated = config_from_json(json.dumps(config), "--config")
    monkeypatch.setenv(VALIDATED_ENV, digest(validated))
    assert config_from_json(json.dumps(config), "$VIRTREPRO_CONFIG") == config
    config["repetitions"] = -2  # any other configuration is checked again
    with pytest.raises(ConfigError, match="'repetitions': -2"):
        config_from_json(json.dumps(config), "$VIRTREPRO_CONFIG")


def test_debug_shows_the_traceback(tmp_path):
    for extra, env in (([], {"VIRTREPRO_DEBUG": "1"}), (["--debug"], {})):
        result = command(*JOB, *extra, "--data-dir", str(tmp_path), "--config", "nope", **env)
        assert result.returncode != 0
        assert "Traceback" in result.stderr and "ConfigError: --config: not a JSON configuration" in result.stderr


# -- the other command lines -------------------------------------------------------------------

SHIPPED_TESTBEDS = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["testbeds"]

@pytest.mark.parametrize(
    "args, expected",
    [
        (["-m", "virtrepro.testbed.remote", "down", "--testbed", "nowhere", "--configfile", "config/config.yaml"],
         "error: testbed 'nowhere' is not defined under 'testbeds' (" + ", ".join(sorted(SHIPPED_TESTBEDS)) + ")"),
        (["-m", "virtrepro.testbed.remote", "prepare", "--testbed", "local", "--configfile", "config/config.yaml", "out.json"],
         "error: testbed 'local' is not a remote (kind: ssh) testbed"),
        (["-m", "virtrepro.testbed.remote", "down", "--testbed", "far", "--configfile", "no/such.yaml"],
         "error: config file no/such.yaml: No such file or directory"),
        (["-m", "virtrepro.testbed.remote", "down", "--testbed", "far"],
         "error: no configuration: pass --configfile or --config, or set VIRTREPRO_CONFIG"),
        (["-m", "virtrepro.builds.npb", "obtain", "--output", "x.json", "--config", "[1, 2"],
         "error: --config: not a JSON configuration (Expecting ',' delimiter: line 1 column 6 (char 5))"),
        (["-m", "virtrepro.results", "nowhere", "--data-dir", "data"],
         "error: testbed 'nowhere' has no raw logs under data/raw/ (testbeds with data there: "
         + ", ".join(sorted(p.name for p in (REPO / "data" / "raw").iterdir() if list(p.glob("*/*/*/rep-0.log"))))
         + "): a misspelt name, or none of its measurements completed"),
    ],
)
def test_command_lines_say_what_is_wrong_in_one_line(args, expected):
    assert one_error_line(command(*args)) == expected


def test_npb_build_names_a_missing_source_record(config):
    result = command("-m", "virtrepro.builds.npb", "build", "--source", "no/such/npb.json", "--config", json.dumps(config))
    assert one_error_line(result) == "error: no/such/npb.json: No such file or directory"


@pytest.mark.parametrize(
    "args",
    [
        ["-m", "virtrepro.testbed.kinds"],
        ["-m", "virtrepro.testbed.kinds", "reboot"],
        ["-m", "virtrepro.guests.image", "build"],
        ["-m", "virtrepro.measurement.job", "--bogus"],
        ["-m", "virtrepro.testbed.remote", "prepare"],
        ["-m", "virtrepro.results"],
        ["-m", "virtrepro.platforms.qemu", "probe"],
    ],
)
def test_misused_command_lines_get_usage_not_a_traceback(args):
    result = command(*args)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "usage: python -m virtrepro." in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("python -m virtrepro.")


def test_a_file_the_system_refuses_is_one_line(tmp_path):
    (tmp_path / "file").write_text("")
    result = command("-m", "virtrepro.guests.image", "build", str(tmp_path / "file" / "image"))
    line = one_error_line(result)
    assert line.startswith("error: ") and (str(tmp_path / "file") in line or "needs root" in line)


def test_a_failed_program_is_one_line_with_its_last_words(capsys):
    def main(argv):
        subprocess.run(["sh", "-c", "echo first >&2; echo 'the real reason' >&2; exit 3"], check=True,
                       capture_output=True, text=True)

    with pytest.raises(SystemExit) as status:
        run(main, [])
    assert status.value.code == 1
    assert capsys.readouterr().err == "error: sh -c echo first >&2; echo 'the real reason' >&2; exit 3: exit status 3: the real reason\n"


# -- damaged tables and logs ------------------------------------------------------------------

def cached_table(data: Path, frame: pd.DataFrame) -> None:
    """A cached table of testbed `tb` that `load` takes as up to date (one raw log, matching manifest)."""
    from virtrepro import results

    log = data / "raw" / "tb" / "native" / "mbw" / "v" / "rep-0.log"
    log.parent.mkdir(parents=True)
    log.write_text("a log the table was built from\n")
    paths = results.table_paths(data, "tb")
    paths["parquet"].parent.mkdir(parents=True)
    frame.to_parquet(paths["parquet"])
    paths["manifest"].write_text(json.dumps({"fingerprint": results.fingerprint(data, "tb")}))


def test_a_table_without_a_column_is_refused_naming_the_file(tmp_path):
    from virtrepro import results

    frame = pd.DataFrame({column: ["x"] for column in results.COLUMNS}).drop(columns=["value"])
    cached_table(tmp_path, frame)
    with pytest.raises(results.TableError) as error:
        results.load("tb", tmp_path)
    assert str(error.value).startswith(f"{tmp_path}/tables/tb.parquet: the table has no column 'value' (damaged, or "
                                       f"written by another version than this one's table format {results.TABLE_FORMAT}); build it again")


def test_a_damaged_table_is_refused_naming_the_file(tmp_path):
    from virtrepro import results

    cached_table(tmp_path, pd.DataFrame({"a": [1]}))
    (tmp_path / "tables" / "tb.parquet").write_bytes(b"not parquet")
    with pytest.raises(results.TableError, match=f"^{tmp_path}/tables/tb.parquet: not a readable Parquet table"):
        results.load("tb", tmp_path)


def test_a_log_that_cannot_become_numbers_stops_the_table_build_with_one_line(tmp_path):
    log = tmp_path / "raw" / "tb" / "native" / "mbw" / "v" / "rep-0.log"
    log.parent.mkdir(parents=True)
    log.write_text("half a log\n")  # no sidecar: the run never finished
    line = one_error_line(command("-m", "virtrepro.results", "tb", "--data-dir", str(tmp_path)))
    assert line.startswith(f"error: {log}: ") and "sidecar" in line


# -- notebook parameters ---------------------------------------------------------------------

PARAMETERS = {"testbed": "reference-vm", "data_dir": str(REPO / "data"), "reference_dir": str(REPO / "data" / "reference"),
              "figures_dir": "figures", "confidence": 0.95, "baseline": "native", "margin": 0.05}


@pytest.mark.parametrize(
    "change, expected",
    [
        ({"confidence": 1.5}, "notebook parameter 'confidence': 1.5 is not a number between 0 and 1 (exclusive)"),
        ({"confidence": "0.95"}, "notebook parameter 'confidence': '0.95' is not a number between 0 and 1"),
        ({"margin": 0}, "notebook parameter 'margin': 0 is not a number between 0 and 1"),
        ({"baseline": "kvm"}, "notebook parameter 'baseline': 'kvm' is not a platform (native, lxc, podman, qemu-kvm, qemu-tcg, charliecloud)"),
        ({"data_dir": "no/such/dir"}, "notebook parameter 'data_dir': 'no/such/dir' is not a directory"),
        ({"testbed": "../x"}, "notebook parameter 'testbed': '../x' is not a testbed name"),
    ],
)
def test_notebook_parameters_are_checked(change, expected):
    from virtrepro.report.notebook import ParameterError, check_parameters

    check_parameters(**PARAMETERS)
    with pytest.raises(ParameterError) as error:
        check_parameters(**{**PARAMETERS, **change})
    assert str(error.value).startswith(expected)


def test_every_notebook_checks_its_parameters_before_anything_else():
    """Each notebook's first code cell opens its paper with every parameter (figures.reading.Notebook),
    which checks them before it loads the table."""
    for path in sorted((REPO / "notebooks").glob("*.ipynb")):
        cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
        first = "".join(cells[1]["source"])  # cells[0] holds the parameters
        parameters = "".join(cells[0]["source"])
        names = [line.split("=")[0].strip() for line in parameters.splitlines() if "=" in line and not line.startswith("#")]
        start = first.index(f'Notebook("{path.stem}", ')
        call = first[start:first.index(")", start)]
        assert all(f"{name}={name}" in call for name in names), (path.name, names)


def test_the_notebook_checks_its_parameters_before_it_loads_the_table(tmp_path, monkeypatch):
    from virtrepro import results
    from virtrepro.figures.reading import Notebook
    from virtrepro.report.notebook import ParameterError

    loaded = []
    monkeypatch.setattr(results, "load", lambda *a, **k: loaded.append(a))
    with pytest.raises(ParameterError, match="confidence"):
        Notebook("walters2008", **{**PARAMETERS, "figures_dir": str(tmp_path), "confidence": 1.5})
    assert loaded == []


def execute(notebook: str, tmp_path: Path, **parameters):
    import papermill

    return papermill.execute_notebook(str(REPO / "notebooks" / notebook), str(tmp_path / "out.ipynb"),
                                      parameters={"figures_dir": str(tmp_path / "figures"), **parameters},
                                      cwd=str(REPO / "notebooks"), kernel_name="python3", progress_bar=False)


@pytest.mark.parametrize("setup, parameters, expected", [
    (None, {"confidence": 1.5}, "ParameterError: notebook parameter 'confidence': 1.5 is not a number between 0 and 1"),
    ("no-value-column", {}, "TableError: {data}/tables/tb.parquet: the table has no column 'value'"),
])
def test_a_notebook_with_a_bad_parameter_or_table_stops_first_with_one_line(tmp_path, setup, parameters, expected):
    """It stops in its first code cell, with the one line as the cell's whole traceback, before any figure."""
    import papermill

    data = tmp_path / "data"
    data.mkdir()
    if setup == "no-value-column":
        from virtrepro import results

        cached_table(data, pd.DataFrame({column: ["x"] for column in results.COLUMNS}).drop(columns=["value"]))
    with pytest.raises(papermill.PapermillExecutionError) as error:
        execute("walters2008.ipynb", tmp_path, testbed="tb", data_dir=str(data), **parameters)
    assert error.value.exec_count == 3  # the first code cell after the parameters and papermill's injected cell
    assert len(error.value.traceback) == 1 and error.value.traceback[0].startswith(expected.format(data=data))
    assert not (tmp_path / "figures").exists()


def test_scale_note_says_the_scale_and_every_saved_figure_carries_it(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from virtrepro.report import plotting
    from virtrepro.report.notebook import scale_note

    assert "quick (a smoke check" in scale_note(pd.DataFrame({"scale": ["quick", "quick"]}))
    fig, ax = plt.subplots()
    ax.plot([1, 2], [1, 2])
    plotting.save(fig, tmp_path, "p", "f")
    assert any(t.get_text() == "data: quick scale (a smoke check: no verdict rests on it)" for t in fig.texts)
    # the footer names the notebook's testbed, so that a panel of another testbed is not read as it
    scale_note(pd.DataFrame({"scale": ["reference"], "testbed": ["reference-vm"]}))
    fig, ax = plt.subplots()
    plotting.save(fig, tmp_path, "p", "g")
    assert any(t.get_text() == "data: testbed 'reference-vm', reference scale" for t in fig.texts)
    plotting.DATA_SCALE = None
