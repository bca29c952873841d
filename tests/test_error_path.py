"""One error path, everywhere (issue 37): an error a user can cause is one line ``error: ...``
and no traceback, inside Snakemake too; Ctrl-C is one line and exit status 130; a log is the
same log with a byte-order mark and CRLF line endings; ``python -m virtrepro.testbed.remote`` merges
``--configfile`` as Snakemake does.

The rules' Python code is checked structurally: the Snakefile and every ``workflow/rules/*.smk``
are compiled with Snakemake's own parser into the Python it runs, and every function, lambda,
``run:`` block and hook in it must be wrapped in ``virtrepro.cli.one_line_errors`` (the files'
top-level code through the Snakefile's ``with one_line_errors():`` around the includes)."""

from __future__ import annotations

import ast
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import types
from pathlib import Path

import pytest
import yaml

from conftest import REPO
from test_bad_input import command, environment, one_error_line
from test_parsers_corruption import CASES
from virtrepro.planning import config as configuration
from virtrepro.rawdata import rawlog
from virtrepro.planning.config import ConfigError

WRAPPER = "one_line_errors"
RULE_FILES = [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]


# -- every piece of the rules' code is wrapped -----------------------------------------------------

def compiled(path: Path) -> ast.Module:
    """The Python that Snakemake makes of a Snakefile or .smk file (its parser, as it runs them)."""
    from snakemake import parser
    from snakemake.sourcecache import LocalSourceFile

    class Cache:
        @staticmethod
        def open(source):
            return open(source.get_path_or_uri(secret_free=True))

    code, _ = parser.parse(LocalSourceFile(str(path)), types.SimpleNamespace(sourcecache=Cache()), {})
    return ast.parse(code, str(path))


def _is_wrapper(node: ast.AST) -> bool:
    """``one_line_errors`` or ``one_line_errors(...)``."""
    if isinstance(node, ast.Call):
        node = node.func
    return isinstance(node, ast.Name) and node.id == WRAPPER


def _wrapped_body(body: list[ast.stmt]) -> bool:
    """A body that is imports, then ``with one_line_errors(), ...:`` blocks holding the rest."""
    rest = body[next((i for i, statement in enumerate(body)
                      if not isinstance(statement, (ast.Import, ast.ImportFrom))), len(body)):]
    return bool(rest) and all(isinstance(statement, ast.With) and _is_wrapper(statement.items[0].context_expr)
                              for statement in rest)


def _snakemake_body(function: ast.FunctionDef) -> bool:
    """A rule without code of its own: a shell command (which runs a command line with its own
    error path) or no action."""
    body = function.body
    return len(body) == 1 and (isinstance(body[0], ast.Pass) or (
        isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Call)
        and isinstance(body[0].value.func, ast.Name) and body[0].value.func.id == "shell"))


def unwrapped(tree: ast.Module, snakefile: bool = False) -> list[str]:
    """Every function, lambda, run: block, hook (and, in the Snakefile, include) not wrapped."""
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name.startswith("__"):  # what Snakemake makes of a rule's run:/shell: or a hook
                if not (_snakemake_body(node) or _wrapped_body(node.body)):
                    found.append(f"line {node.lineno}: {node.name} (a run: block or hook) is not in `with {WRAPPER}():`")
            elif not any(_is_wrapper(decorator) for decorator in node.decorator_list):
                found.append(f"line {node.lineno}: def {node.name} has no @{WRAPPER}")
        elif isinstance(node, ast.Lambda):
            parent = parents.get(node)
            if not (isinstance(parent, ast.Call) and _is_wrapper(parent) and node in parent.args):
                found.append(f"line {node.lineno}: a lambda not inside {WRAPPER}(...)")
        elif snakefile and isinstance(node, ast.Call) and ast.unparse(node.func) == "workflow.include":
            ancestor = parents.get(node)
            while ancestor is not None and not (isinstance(ancestor, ast.With) and _is_wrapper(ancestor.items[0].context_expr)):
                ancestor = parents.get(ancestor)
            if ancestor is None:
                found.append(f"line {node.lineno}: include {ast.unparse(node.args[0])} outside `with {WRAPPER}():`")
    return found


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.name)
def test_every_function_lambda_run_block_and_hook_of_the_rules_is_wrapped(path):
    tree = compiled(path)
    assert unwrapped(tree, snakefile=path.name == "Snakefile") == []
    # the check saw what it checks: each file has functions or rules
    assert any(isinstance(node, ast.FunctionDef) for node in ast.walk(tree))


def test_the_check_finds_each_kind_of_unwrapped_code(tmp_path):
    smk = tmp_path / "new.smk"
    smk.write_text('''
include: "other.smk"

def helper(wildcards):
    return []

@one_line_errors
def fine(wildcards):
    def inner(wildcards):
        return []
    return inner

rule new:
    input: helper, one_line_errors(lambda wc: []), lambda wc: []
    output: "x"
    params: p=lambda wc: 1
    run:
        with open(log[0], "w") as handle:
            pass

rule fine:
    output: "y"
    run:
        import json
        with one_line_errors(), open(output[0], "w") as handle:
            json.dump({}, handle)

rule shelled:
    output: "z"
    shell: "touch {output}"

onerror:
    print("no")
''')
    found = unwrapped(compiled(smk), snakefile=True)
    said = "\n".join(found)
    assert "include 'other.smk' outside" in said
    assert "def helper has no" in said and "def inner has no" in said and "def fine" not in said
    assert said.count("a lambda not inside") == 2  # the input's second lambda and the params lambda
    assert "__rule_new (a run: block or hook)" in said and "__rule_fine" not in said and "__rule_shelled" not in said
    assert "__onerror (a run: block or hook)" in said
    assert len(found) == 7, said


# -- real Snakemake: one line ------------------------------------------------------------------------

def test_a_named_error_in_a_run_block_fails_the_job_with_its_line_and_snakemake_goes_on(tmp_path):
    """Snakemake runs a run: block in a worker thread, where a SystemExit would leave it waiting for
    the job forever: the job fails with the one line instead, and the other job still runs."""
    (tmp_path / "Snakefile").write_text('''
from virtrepro.cli import one_line_errors
from virtrepro.planning.config import ConfigError

rule all:
    input: "bad", "good"

rule bad:
    output: "bad"
    run:
        with one_line_errors():
            raise ConfigError("config key 'x': not a number")

rule good:
    output: "good"
    run:
        with one_line_errors(), open(output[0], "w") as handle:
            handle.write("made")
''')
    result = command("-m", "snakemake", "--cores", "1", "--keep-going", "--snakefile", str(tmp_path / "Snakefile"),
                     "--directory", str(tmp_path), cwd=tmp_path)  # a hang is the 120 s timeout
    assert result.returncode == 1
    said = result.stdout + result.stderr
    assert "Traceback" not in said, said
    assert "error: config key 'x': not a number" in said.splitlines(), said
    assert (tmp_path / "good").read_text() == "made" and not (tmp_path / "bad").exists()


def snakemake_dry_run(tmp_path: Path, config: dict) -> subprocess.CompletedProcess:
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    return command("-m", "snakemake", "-n", "--snakefile", str(REPO / "Snakefile"), "--directory", str(tmp_path),
                   "--configfile", str(tmp_path / "c.yaml"), cwd=tmp_path)


def test_a_testbed_that_lists_a_host_twice_stops_snakemake_with_one_line(tmp_path):
    (tmp_path / "known_hosts").write_text("")
    host = {"hostname": "node1.example.org", "user": "root"}
    config = {"testbed": "twice", "testbeds": {"twice": {"kind": "ssh", "hosts": [host, dict(host)],
                                                         "known_hosts": str(tmp_path / "known_hosts")}}}
    line = one_error_line(snakemake_dry_run(tmp_path, config))
    assert line == "error: testbed twice: a host is listed twice (twice/node1.example.org, twice/node1.example.org)"


@pytest.mark.parametrize("where, said", [
    ("a-file", "{path} is a file, not a directory"),
    ("a-file/data", "{path} cannot be created: {tmp}/a-file is a file, not a directory"),
])
def test_a_data_dir_that_is_no_directory_stops_snakemake_with_one_line(tmp_path, where, said):
    (tmp_path / "a-file").write_text("not a directory\n")
    path = str(tmp_path / where)
    line = one_error_line(snakemake_dry_run(tmp_path, {"data_dir": path}))
    assert line == "error: config key 'data_dir': " + said.format(path=path, tmp=tmp_path)


def test_output_directories_are_checked_without_creating_anything(tmp_path):
    check_output_directory = configuration.check_output_directory
    check_output_directory("data_dir", tmp_path)  # a directory
    check_output_directory("data_dir", tmp_path / "new" / "deeper")  # can be created
    assert not (tmp_path / "new").exists()
    (tmp_path / "link").symlink_to(tmp_path / "gone")
    with pytest.raises(ConfigError, match=f"^config key 'figures_dir': {tmp_path}/link is a broken symbolic link"):
        check_output_directory("figures_dir", tmp_path / "link")
    if os.geteuid() != 0:  # root may write anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(ConfigError, match=f"cannot be created: {locked} is not writable"):
            check_output_directory("data_dir", locked / "data")


# -- a log with a byte-order mark and CRLF line endings is the same log --------------------------------

@pytest.mark.parametrize("case", CASES, ids=lambda case: f"{case.tool}/{case.name}")
def test_a_log_with_a_bom_and_crlf_parses_to_the_same_records(tmp_path, case):
    expected = case.call(case.texts(), case.name)
    assert expected, "a good capture gives records"
    texts = {}
    for role, name in case.files.items():
        if name is None:
            texts[role] = None
            continue
        original = (REPO / "tests" / "data" / case.tool / name).read_bytes()
        copy = tmp_path / name
        copy.write_bytes(b"\xef\xbb\xbf" + original.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
        texts[role] = rawlog.read_log(copy)
        assert copy.read_bytes().startswith(b"\xef\xbb\xbf")  # the file is left as it is
    assert case.call(texts, case.name) == expected


# -- python -m virtrepro.testbed.remote: --configfile merged as Snakemake merges it -----------------------------

PARTIAL = {"guest": {"vcpus": 4}, "platforms": ["native", "lxc"]}


def test_remote_merges_a_partial_configfile_over_the_default(tmp_path):
    partial = tmp_path / "partial.yaml"
    partial.write_text(yaml.safe_dump(PARTIAL))
    config = configuration.config_with_files([partial])
    default_file = configuration.DEFAULT_CONFIG
    default = yaml.safe_load(default_file.read_text())
    assert config["guest"]["vcpus"] == 4 and config["platforms"] == ["native", "lxc"]
    # the nested keys the file does not name keep the default's values (merged, not replaced)
    assert {k: v for k, v in config["guest"].items() if k != "vcpus"} == {
        k: v for k, v in default["guest"].items() if k != "vcpus"}
    assert config["scales"] == default["scales"] and config["testbed"] == default["testbed"]
    # exactly what Snakemake itself makes of the Snakefile's configfile and this --configfile
    snakefile = tmp_path / "Snakefile"
    snakefile.write_text(f'configfile: "{default_file}"\n'
                         f'import json\nopen("{tmp_path}/seen.json", "w").write(json.dumps(config))\n'
                         'rule all:\n    output: []\n')
    subprocess.run([sys.executable, "-m", "snakemake", "-n", "--snakefile", str(snakefile), "--directory",
                    str(tmp_path), "--configfile", str(partial)], cwd=tmp_path, env=environment(),
                   capture_output=True, check=True, timeout=120)
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert {k: v for k, v in config.items() if k in seen} == seen


def test_remote_with_a_partial_configfile_reaches_the_testbed_and_names_the_file_when_wrong(tmp_path):
    partial = tmp_path / "partial.yaml"
    partial.write_text(yaml.safe_dump(PARTIAL))
    line = one_error_line(command("-m", "virtrepro.testbed.remote", "down", "--testbed", "local", "--configfile", str(partial)))
    assert line == "error: testbed 'local' is not a remote (kind: ssh) testbed"  # the whole configuration is there
    partial.write_text(yaml.safe_dump({"scale": "huge"}))
    line = one_error_line(command("-m", "virtrepro.testbed.remote", "down", "--testbed", "local", "--configfile", str(partial)))
    assert line.startswith(f"error: config file {partial} (over config/config.yaml): config key 'scale': ")


def test_the_estimate_takes_a_partial_configfile_as_snakemake_does(tmp_path):
    partial = tmp_path / "partial.yaml"
    partial.write_text(yaml.safe_dump({"benchmarks": ["sysbench_cpu"], "platforms": ["native"], "data_dir": str(tmp_path)}))
    result = command("-m", "virtrepro.measurement.estimate", "--estimate", "--configfile", str(partial))
    assert result.returncode == 0, result.stderr
    assert "native     sysbench_cpu" in result.stdout and "lxc" not in result.stdout
    partial.write_text(yaml.safe_dump({"scale": "huge"}))
    line = one_error_line(command("-m", "virtrepro.measurement.estimate", "--estimate", "--configfile", str(partial)))
    assert line.startswith(f"error: config file {partial} (over config/config.yaml): config key 'scale': ")


# -- Ctrl-C: one line and status 130 -------------------------------------------------------------------

def interrupt(args: list[str], cwd: Path, when) -> tuple[subprocess.CompletedProcess, bool]:
    """Start ``args``, send SIGINT when ``when(lines of output so far, seconds)`` says so, and
    return the result (its output, both streams, as stderr) and whether it was still running
    when the signal went."""
    process = subprocess.Popen(args, cwd=cwd, env=environment(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(process.stdout), daemon=True)
    reader.start()
    start = time.monotonic()
    try:
        while process.poll() is None and not when(list(lines), time.monotonic() - start):
            time.sleep(0.02)
        running = process.poll() is None
        if running:
            process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
        reader.join(timeout=10)
    finally:
        process.kill()
    return subprocess.CompletedProcess(args, process.returncode, "", "".join(lines)), running


def _interrupted_cleanly(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == 130, result.stderr[-3000:]
    assert "Traceback" not in result.stderr and "KeyboardInterrupt" not in result.stderr, result.stderr[-3000:]
    assert result.stderr.splitlines().count("interrupted") == 1, result.stderr[-3000:]


def imported(module: str):
    """When ``python -X importtime`` has said that ``module`` is imported (the moments below are
    phases of the process, not times, which a loaded machine would stretch)."""
    return lambda lines, elapsed: any(line.rstrip().endswith(f"| {module}") for line in lines)


@pytest.mark.parametrize("when", ["virtrepro", "snakemake", "Building DAG"])
def test_ctrl_c_during_virtrepro_run_is_one_line_and_status_130(tmp_path, when):
    """At any moment: while it imports its own dependencies (the package's handler), while Snakemake
    starts (cli.run), while Snakemake plans (the Snakefile's handler)."""
    args = [sys.executable, "-X", "importtime", "-m", "virtrepro", "-n", "--snakefile", str(REPO / "Snakefile"),
            "--directory", str(tmp_path)]
    moment = (lambda lines, elapsed: any(when in line for line in lines)) if " " in when else imported(when)
    result, running = interrupt(args, tmp_path, moment)
    assert running, result.stderr[-3000:]
    _interrupted_cleanly(result)


@pytest.mark.parametrize("args, when", [
    (["virtrepro.figures", "--help"], "virtrepro"),  # its imports: about a second, before its cli.run
    (["virtrepro.measurement.estimate", "--estimate"], "jsonschema"),  # inside its cli.run: validating, then estimating
])
def test_ctrl_c_during_a_command_line_is_one_line_and_status_130(args, when):
    """``python -m virtrepro.<module>`` while it imports its dependencies (the package's handler)
    and once its cli.run has started (a KeyboardInterrupt, mapped)."""
    result, running = interrupt([sys.executable, "-X", "importtime", "-m", *args], REPO, imported(when))
    assert running, result.stderr[-3000:]
    _interrupted_cleanly(result)


def test_ctrl_c_while_snakemake_plans_is_one_line_and_status_130(tmp_path):
    """Plain ``snakemake``, once it builds the plan (the Snakefile has been read)."""
    args = [sys.executable, "-m", "snakemake", "-n", "--snakefile", str(REPO / "Snakefile"), "--directory", str(tmp_path)]
    result, running = interrupt(args, tmp_path, lambda lines, elapsed: any("Building DAG" in line for line in lines))
    assert running, result.stderr[-3000:]
    _interrupted_cleanly(result)


@pytest.mark.integration
def test_ctrl_c_while_a_measurement_runs_ends_the_workflow_with_status_130(tmp_path):
    """A terminal's Ctrl-C reaches Snakemake and its jobs (one process group): Snakemake cancels
    the jobs, the onerror hook stops the testbed, and the status is 130; its lock is released."""
    args = [sys.executable, "-m", "virtrepro", "--cores", "1", "--snakefile", str(REPO / "Snakefile"),
            "--directory", str(tmp_path), "measurements", "--config", "platforms=[native]", "benchmarks=[sysbench_cpu]"]
    process = subprocess.Popen(args, cwd=tmp_path, env=environment(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, start_new_session=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(process.stdout), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 300
        while process.poll() is None and not any("rule measure:" in line for line in lines):
            assert time.monotonic() < deadline, "".join(lines[-40:])
            time.sleep(0.05)
        time.sleep(0.5)  # the job has started
        assert process.poll() is None, "".join(lines[-40:])
        os.killpg(process.pid, signal.SIGINT)
        process.wait(timeout=120)
        reader.join(timeout=10)
    finally:
        process.kill()
    said = "".join(lines)
    assert process.returncode == 130, said[-3000:]
    assert said.splitlines().count("interrupted") >= 1 and "Traceback" not in said, said[-3000:]
    assert not any((tmp_path / ".snakemake" / "locks").glob("*")), "Snakemake's lock is left behind"


def test_too_few_hosts_for_a_run_is_a_named_error():
    """Raised from the measurement jobs' resources and params functions (measure.smk): a named
    error, so the rules' wrapper makes it one line (a ValueError still, for its callers)."""
    from virtrepro.errors import VirtreproError
    from virtrepro.testbed.placement import spanned_hosts

    with pytest.raises(VirtreproError, match=r"^testbed tb has 1 host\(s\); a run across 2 hosts needs 2 ") as caught:
        spanned_hosts(["node1"], 2, "tb")
    assert isinstance(caught.value, ValueError)
