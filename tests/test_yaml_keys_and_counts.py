"""Nothing silently wrong (issue 37): a count option below its least meaningful value is refused by
argparse, a key given twice in a YAML file is an error naming the file, line and key (PyYAML keeps
the last value without a word), and a claims file that cannot be read is one line naming the file,
the claim and the key, which leaves the previous ``<testbed>.claims.csv`` as it was."""

from __future__ import annotations

import ast
import hashlib
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from conftest import REPO
from test_bad_input import command, environment, one_error_line
from virtrepro.analysis import claims

try:  # each test that needs it fails on a tree without it, rather than the whole file
    from virtrepro import yamlfile
except ImportError:
    yamlfile = None
from virtrepro.planning.config import ConfigError, read_config_file, schema
from virtrepro.errors import VirtreproError

PACKAGE = REPO / "workflow" / "virtrepro"
REFERENCE = REPO / "data" / "reference"
TESTBED = "fair-quick"  # committed data small enough to copy


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- counts on the command lines ---------------------------------------------------------------

def usage_error(result: subprocess.CompletedProcess, prog: str) -> str:
    """argparse's refusal: exit status 2, its usage, and one line ``<prog>: error: ...``; that line."""
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and result.stderr.startswith("usage: "), result.stderr
    return result.stderr.strip().splitlines()[-1].removeprefix(f"{prog}: error: ")


@pytest.mark.parametrize("rounds", ["0", "-3"])
def test_interleave_refuses_rounds_below_one_and_measures_nothing(tmp_path, rounds):
    data = tmp_path / "data"
    result = command("-m", "virtrepro.measurement.interleave", "--data-dir", str(data), "--testbed", "local", "--scale", "quick",
                     "--benchmark", "sysbench_cpu", "--variant", "threads-1_prime-20000_seconds-1",
                     "--platforms", "native", "lxc", "--rounds", rounds)
    assert usage_error(result, "python -m virtrepro.measurement.interleave") == f"argument --rounds: at least 1, not {rounds}"
    assert not data.exists()  # nothing measured, not even a directory made


@pytest.mark.parametrize("args, said", [
    (["--rep", "-1"], "argument --rep: at least 0, not -1"),
    (["--rep", "two"], "argument --rep: a whole number, not 'two'"),
])
def test_the_measurement_jobs_counts_are_checked(args, said):
    result = command("-m", "virtrepro.measurement.job", "--data-dir", "d", "--testbed", "local", "--platform", "native",
                     "--benchmark", "sysbench_cpu", "--variant", "v", *args)
    assert usage_error(result, "python -m virtrepro.measurement.job") == said


def test_the_supervisors_owner_is_a_process_id():
    result = command("-m", "virtrepro.testbed.supervisor", "--owner", "0", "--pid-file", "p", "--", "true")
    assert usage_error(result, "python -m virtrepro.testbed.supervisor") == "argument --owner: at least 1, not 0"


def test_the_count_type():
    from virtrepro.cli import count

    assert count(1)("3") == 3 and count(0)("0") == 0
    for text, minimum in (("0", 1), ("-1", 0), ("1.5", 1), ("", 1)):
        with pytest.raises(Exception, match="at least|whole number"):
            count(minimum)(text)


def test_every_integer_option_of_the_package_is_a_checked_count():
    """No ``type=int`` left: each count option names its least value (cli.count). The benchmark tools
    (benchmarks/tools) run in guests as scripts of their own, without the package."""
    plain = []
    for path in PACKAGE.rglob("*.py"):
        if "tools" in path.relative_to(PACKAGE).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.keyword) and node.arg == "type" and isinstance(node.value, ast.Name) \
                    and node.value.id == "int":
                plain.append(f"{path.relative_to(REPO)}:{node.value.lineno}")
    assert plain == []


def test_every_integer_of_the_configuration_schema_has_a_least_value():
    """Counts in the configuration (repetitions, vcpus, a benchmark's sizes...) are the schema's to check."""
    unbounded = []

    def walk(node, where):
        if isinstance(node, dict):
            kinds = node.get("type")
            kinds = kinds if isinstance(kinds, list) else [kinds]
            if "integer" in kinds and "minimum" not in node and "exclusiveMinimum" not in node:
                unbounded.append(where)
            for key, value in node.items():
                walk(value, f"{where}.{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, f"{where}[{index}]")

    walk(schema(), "schema")
    assert unbounded == []


# -- a key given twice --------------------------------------------------------------------------

@pytest.mark.parametrize("text, said", [
    ("a: 1\nb: 2\na: 3\n", "f.yaml:3: key 'a' given twice (first on line 1)"),
    ("scales:\n  quick:\n    mbw:\n      repetitions: 2\n      runs: 3\n      repetitions: 5\n",
     "f.yaml:6: key 'scales.quick.mbw.repetitions' given twice (first on line 4)"),
    ("- id: x\n  check: {kind: order, kind: better}\n", "f.yaml:2: key '[0].check.kind' given twice (first on line 2)"),
    ("1: one\n1.0: also one\n", "f.yaml:2: key '1.0' given twice (first on line 1)"),  # one key to Python
])
def test_a_key_given_twice_is_an_error_naming_file_line_and_key(text, said):
    assert yaml.safe_load(text) is not None  # what PyYAML alone does: the last value, silently
    with pytest.raises(yamlfile.YamlFileError) as error:
        yamlfile.loads(text, "f.yaml")
    assert str(error.value) == said


def test_the_loader_reads_what_safe_load_reads():
    text = "base: &b {p: 1, q: [2, 3]}\nd:\n  <<: *b\n  p: 5\n'1': text\n1: number\nwhen: 2024-01-02\n"
    assert yamlfile.loads(text, "f.yaml") == yaml.safe_load(text)  # a merge key's value may be overridden
    assert yamlfile.loads("", "f.yaml") is None
    with pytest.raises(yamlfile.YamlFileError, match=r"^f.yaml:2:1: not valid YAML: "):
        yamlfile.loads("a: [1, 2\n", "f.yaml")


def test_a_file_that_cannot_be_read_is_named(tmp_path):
    with pytest.raises(yamlfile.YamlFileError, match=f"^{tmp_path}/nope.yaml: No such file or directory$"):
        yamlfile.load(tmp_path / "nope.yaml")


def test_a_config_file_with_a_key_twice_is_a_config_error(tmp_path):
    path = tmp_path / "my.yaml"
    path.write_text("scale: quick\nrepetitions: 3\ntestbed: local\nrepetitions: 5\n")
    with pytest.raises(ConfigError) as error:
        read_config_file(path)
    assert str(error.value) == f"config file {path}:4: key 'repetitions' given twice (first on line 2)"


def test_run_refuses_a_configfile_with_a_key_twice(tmp_path):
    path = tmp_path / "my.yaml"
    path.write_text("scale: quick\nrepetitions: 3\nrepetitions: 5\n")
    line = one_error_line(command("-m", "virtrepro", "-n", "--configfile", str(path)))
    assert line == f"error: config file {path}:3: key 'repetitions' given twice (first on line 2)"


def test_plain_snakemake_refuses_a_configfile_with_a_key_twice(tmp_path):
    path = tmp_path / "my.yaml"
    path.write_text("scales:\n  quick:\n    mbw: {repetitions: 2, repetitions: 4}\n")
    line = one_error_line(command("-m", "snakemake", "-n", "--snakefile", str(REPO / "Snakefile"),
                                  "--directory", str(tmp_path), "--configfile", str(path), cwd=tmp_path))
    assert line == f"error: config file {path}:3: key 'scales.quick.mbw.repetitions' given twice (first on line 3)"


def test_the_plan_refuses_a_config_value_with_a_key_twice():
    line = one_error_line(command("-m", "virtrepro.measurement.estimate", "--estimate", "--config", "guest={vcpus: 1, vcpus: 2}"))
    assert line == "error: --config guest:1: key 'vcpus' given twice (first on line 1)"


def committed_yaml() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "*.yaml", "*.yml", "*.cff"], cwd=REPO, capture_output=True,
                            text=True, check=True).stdout.split()
    assert {"config/config.yaml", "data/reference/claims.yaml", "workflow/schemas/config.schema.yaml"} <= set(listed)
    return listed


@pytest.mark.parametrize("name", committed_yaml())
def test_every_committed_yaml_file_loads(name):
    yamlfile.load(REPO / name)


def test_the_packages_yaml_is_read_by_the_one_loader():
    """Every YAML the package reads (configuration, claims, causes, schema, declarations) goes through
    virtrepro.yamlfile; only a tool's own YAML output (parsers/) is its parser's."""
    direct = [f"{path.relative_to(REPO)}:{number}"
              for path in PACKAGE.rglob("*.py") if path.name != "yamlfile.py" and "parsers" not in path.parts
              for number, line in enumerate(path.read_text().splitlines(), 1)
              if "yaml.safe_load(" in line or "yaml.load(" in line]
    assert direct == []


# -- claims.yaml and faster_than_native.yaml ----------------------------------------------------

CLAIM = {"id": "walters2008-x", "paper": "walters2008", "source": "s", "quote": "q", "published": "p",
         "paper_platform": "OpenVZ", "testable": True,
         "check": {"kind": "overhead_at_most", "benchmark": "netperf", "metric": "half_round_trip_latency",
                   "platform": "lxc", "baseline": "native", "threshold": 0.1}}


def write_claims(tmp_path, *entries) -> Path:
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump(list(entries), sort_keys=False))
    return path


def with_check(**changes) -> dict:
    check = {key: value for key, value in {**CLAIM["check"], **changes}.items() if value is not None}
    return {**CLAIM, "check": check}


@pytest.mark.parametrize("entries, said", [
    ([with_check(kind="faster")], "claim 'walters2008-x': check.kind: unknown check kind 'faster' (one of "
                                  + ", ".join(claims.KINDS) + ")"),
    ([CLAIM, {**CLAIM, "note": "again"}], "claim 'walters2008-x': id repeated (claims 1 and 2 of the list)"),
    ([with_check(threshold=None)], "claim 'walters2008-x': check: check lacks threshold (a overhead_at_most check needs them)"),
    ([with_check(threshold="10%")], "claim 'walters2008-x': check.threshold: a number, not '10%'"),
    ([with_check(threshold=True)], "claim 'walters2008-x': check.threshold: a number, not True"),
    ([with_check(treshold=0.1)], "claim 'walters2008-x': check.treshold: unknown key (known: kind, benchmark, "),
    ([{**CLAIM, "testable": "yes"}], "claim 'walters2008-x': testable: true or false, not 'yes'"),
    ([{**CLAIM, "id": None}], "claim 1 of the list: no id (a mapping with an id: text)"),
    (["just text"], "claim 1 of the list: no id (a mapping with an id: text)"),
])
def test_a_bad_claim_is_a_named_error(tmp_path, entries, said):
    path = write_claims(tmp_path, *entries)
    with pytest.raises(VirtreproError) as error:
        claims.load_claims(path)
    assert str(error.value).startswith(f"{path}: {said}"), str(error.value)


def test_a_claim_with_a_key_twice_names_the_line(tmp_path):
    path = tmp_path / "claims.yaml"
    path.write_text(textwrap.dedent("""\
        - id: walters2008-x
          paper: walters2008
          paper_platform: OpenVZ
          testable: true
          check: {kind: overhead_at_most, benchmark: netperf, metric: half_round_trip_latency,
                  platform: lxc, baseline: native, threshold: 0.1, threshold: 0.5}
        """))
    with pytest.raises(VirtreproError, match=f"^{path}:6: key '\\[0\\].check.threshold' given twice"):
        claims.load_claims(path)


def test_a_bad_cause_is_a_named_error(tmp_path):
    path = tmp_path / "causes.yaml"
    path.write_text("- {platform: lxc, benchmark: fio, cause: drift, confounded: 'no'}\n")
    with pytest.raises(VirtreproError) as error:
        claims.load_causes(path)
    assert str(error.value) == f"{path}: entry 1 of the list (lxc/fio): confounded: true or false, not 'no'"


def test_the_committed_claims_and_causes_load():
    assert len(claims.load_claims(REFERENCE / "claims.yaml")) > 100
    assert all(entry["cause"] for entry in claims.load_causes(REFERENCE / "faster_than_native.yaml"))


def copy_data(target: Path) -> Path:
    """The committed data of testbed TESTBED (its raw logs and tables) under ``target``."""
    shutil.copytree(REPO / "data" / "raw" / TESTBED, target / "raw" / TESTBED)
    (target / "tables").mkdir(parents=True)
    for path in (REPO / "data" / "tables").glob(f"{TESTBED}.*"):
        shutil.copy2(path, target / "tables" / path.name)
    return target


def test_the_claims_table_command_names_a_bad_claim_in_one_line(tmp_path):
    path = write_claims(tmp_path, with_check(kind="faster"))
    data = copy_data(tmp_path / "data")
    out = data / "tables" / f"{TESTBED}.claims.csv"
    before = digest(out)
    line = one_error_line(command("-m", "virtrepro.analysis.claims", "--data-dir", str(data), "--testbed", TESTBED,
                                  "--claims", str(path)))
    assert line.startswith(f"error: {path}: claim 'walters2008-x': check.kind: unknown check kind 'faster'")
    assert digest(out) == before


def test_writing_the_claims_table_keeps_the_old_one_when_the_claims_are_bad(tmp_path):
    out = tmp_path / "t.claims.csv"
    out.write_text("the previous verdicts\n")
    with pytest.raises(VirtreproError):
        claims.write_claims_table(write_claims(tmp_path, with_check(kind="faster")), None, out)
    assert out.read_text() == "the previous verdicts\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["claims.yaml", "t.claims.csv"]


# -- the workflow: a copy of the repository's rules and reference data with the committed fair-quick data


@pytest.fixture
def workflow_copy(tmp_path):
    for name in ("Snakefile", "workflow", "config", "notebooks", "data/reference"):
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
        else:
            shutil.copy2(source, tmp_path / name)
    copy_data(tmp_path / "data")
    return tmp_path


def claims_csv_job(work: Path) -> subprocess.CompletedProcess:
    """The claims_table job alone (the table is taken as it is), as plain Snakemake runs it."""
    target = f"data/tables/{TESTBED}.claims.csv"
    return subprocess.run(
        [sys.executable, "-m", "snakemake", target, "--snakefile", str(work / "Snakefile"), "--directory", str(work),
         "--cores", "1", "--config", f"testbed={TESTBED}", "data_dir=data", "--allowed-rules", "claims_table"],
        cwd=work, capture_output=True, text=True, env=environment(VIRTREPRO_STATE=str(work / "state"),
                                                                   PYTHONPATH=str(work / "workflow")), timeout=600)


def test_a_bad_claims_file_stops_the_workflow_with_one_line_and_keeps_the_verdicts(workflow_copy):
    work = workflow_copy
    csv = work / "data" / "tables" / f"{TESTBED}.claims.csv"
    before = digest(csv)
    path = work / "data" / "reference" / "claims.yaml"
    listed = yaml.safe_load(path.read_text())
    first = listed[0]["id"]
    path.write_text(path.read_text().replace("kind: overhead_at_most", "kind: overhead_at_mots", 1))
    line = one_error_line(claims_csv_job(work))
    assert line.startswith(f"error: {path}: claim '{first}': check.kind: unknown check kind 'overhead_at_mots'")
    assert digest(csv) == before


def test_a_failing_claims_table_job_keeps_the_previous_verdicts(workflow_copy):
    """Snakemake deletes a job's outputs before it runs and after it fails, unless flagged ``update``."""
    work = workflow_copy
    csv = work / "data" / "tables" / f"{TESTBED}.claims.csv"
    before = digest(csv)
    table = work / "data" / "tables" / f"{TESTBED}.parquet"
    table.write_bytes(b"not a parquet file")  # newer than the verdicts: the job runs, and fails
    result = claims_csv_job(work)
    assert result.returncode != 0 and "Error in rule claims_table" in result.stderr, result.stderr[-3000:]
    said = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert said == [f"error: data/tables/{TESTBED}.parquet: not a readable Parquet table (Could not open Parquet input "
                    f"source 'data/tables/{TESTBED}.parquet': Parquet magic bytes not found in footer. Either the file "
                    "is corrupted or this is not a parquet file.); build it again from the raw logs (`python -m "
                    "virtrepro.results <testbed>`, or the workflow's table rule)"], result.stderr[-3000:]
    assert digest(csv) == before
    assert not [p for p in csv.parent.iterdir() if p.name.endswith(".partial")]
