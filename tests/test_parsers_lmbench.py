"""lmbench: the parser on real captured output (tests/data/lmbench/, README there), values read
by hand from the files; every bad-* capture refused; the benchmark's command, variant and
completeness check against the same captures."""

from __future__ import annotations

import pytest
import yaml

from conftest import DATA, REPO, bad_fixtures, fixture_text
from virtrepro.benchmarks import BENCHMARKS
from virtrepro.parsers import ParseError, ToolReportedError, TruncatedLogError
from virtrepro.parsers.lmbench import parse_lmbench

TOOL = "lmbench"
LMBENCH = BENCHMARKS["lmbench"]


def values(records, metric, *labels):
    return {tuple(r[label] for label in labels): r["value"] for r in records if r["metric"] == metric}


def test_lat_syscall():
    records = parse_lmbench(fixture_text(TOOL, "lat_syscall-N3-null-read-write-stat-open.log"), "x.log")
    assert values(records, "syscall_latency", "syscall") == {
        ("null",): 0.1862, ("read",): 0.2104, ("write",): 0.1982, ("stat",): 1.1015, ("open",): 2.2162}
    assert {r["unit"] for r in records} == {"us"}


def test_lat_ctx():
    records = parse_lmbench(fixture_text(TOOL, "lat_ctx-N3-s0-s16-p2-p8.log"), "x.log")
    assert values(records, "context_switch", "size_kb", "processes") == {
        (0, 2): 2.45, (0, 8): 5.02, (16, 2): 1.96, (16, 8): 4.84}
    assert len(records) == 4 and {r["unit"] for r in records} == {"us"}


def test_lat_mem_rd_two_strides():
    records = parse_lmbench(fixture_text(TOOL, "lat_mem_rd-N3-4MiB-stride64-stride128.log"), "x.log")
    latency = values(records, "memory_latency", "stride", "size_mib")
    assert len(latency) == 2 * 25  # 512 B to 4 MiB: 2^k and 1.5 x 2^k
    assert latency[(64, 0.00049)] == 1.096 and latency[(64, 4.0)] == 1.155
    assert latency[(128, 0.03125)] == 1.104 and latency[(128, 0.04688)] == 2.904  # past the 32 KiB L1
    assert latency[(128, 4.0)] == 5.891
    assert {r["unit"] for r in records} == {"ns"}


def test_bw_mem_titles_name_the_operation():
    records = parse_lmbench(fixture_text(TOOL, "bw_mem-N3-64MiB-rd-wr-cp.log"), "x.log")
    assert values(records, "memory_bandwidth", "operation", "size_mb") == {
        ("rd", 67.11): 24580.49, ("wr", 67.11): 18142.30, ("cp", 67.11): 10039.79}
    assert {r["unit"] for r in records} == {"MB/s"}


def test_the_quick_scale_run_is_one_log_of_every_program():
    """The benchmark's own command at the quick scale, captured: parsed with what the variant asked for."""
    params = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["scales"]["quick"]["lmbench"]
    variant = LMBENCH.variants(params)[0]
    records = LMBENCH.parse(fixture_text(TOOL, "quick-all-programs.log"), "x.log", variant.param_dict)
    assert [r["syscall"] for r in records if r["metric"] == "syscall_latency"] == ["null", "read", "write", "stat", "open"]
    assert len([r for r in records if r["metric"] == "context_switch"]) == 4
    assert max(r["size_mib"] for r in records if r["metric"] == "memory_latency") == 8.0
    assert [r["operation"] for r in records if r["metric"] == "memory_bandwidth"] == ["rd", "wr", "cp"]


def test_what_the_run_asked_for_must_all_be_there():
    text = fixture_text(TOOL, "lat_ctx-N3-s0-s16-p2-p8.log")
    assert len(parse_lmbench(text, "x.log", {"ctx": [(0, 2), (0, 8), (16, 2), (16, 8)]})) == 4
    with pytest.raises(TruncatedLogError, match=r"lat_ctx .* asked for"):
        parse_lmbench(text, "x.log", {"ctx": [(0, 2), (0, 8), (16, 2), (16, 8), (64, 2)]})
    with pytest.raises(TruncatedLogError, match="lat_syscall calls"):  # a program the run did not ask for
        parse_lmbench(fixture_text(TOOL, "lat_syscall-N3-null-read-write-stat-open.log"), "x.log", {})
    mem_rd = fixture_text(TOOL, "lat_mem_rd-N3-4MiB-stride64-stride128.log")
    assert parse_lmbench(mem_rd, "x.log", {"mem_rd": {"strides": [64, 128], "mib": 4}})
    with pytest.raises(TruncatedLogError, match="stops at 4.0 MiB, the run asked for 8"):
        parse_lmbench(mem_rd, "x.log", {"mem_rd": {"strides": [64, 128], "mib": 8}})
    first_stride = mem_rd[: mem_rd.index('"stride=128')]
    with pytest.raises(TruncatedLogError, match=r"strides \[64\], the run asked for \[64, 128\]"):
        parse_lmbench(first_stride, "x.log", {"mem_rd": {"strides": [64, 128], "mib": 4}})


def test_a_cut_stride_or_line_is_truncated_without_expectations():
    mem_rd = fixture_text(TOOL, "lat_mem_rd-N3-4MiB-stride64-stride128.log")
    with pytest.raises(TruncatedLogError, match="without its closing blank line"):
        parse_lmbench(mem_rd[: mem_rd.index("0.50000")], "x.log")
    with pytest.raises(TruncatedLogError, match="ends inside a line"):
        parse_lmbench(fixture_text(TOOL, "lat_ctx-N3-s0-s16-p2-p8.log")[:-2], "x.log")


@pytest.mark.parametrize("path", bad_fixtures(TOOL), ids=lambda p: p.name)
def test_bad_captures_are_refused(path):
    expected = {
        "bad-invalid-option.log": ToolReportedError,  # usage line
        "bad-unknown-syscall.log": ToolReportedError,
        "bad-missing-program.log": ToolReportedError,  # sh: ...: not found
        "bad-stat-missing-file.log": ToolReportedError,  # exit status 0, no result line
        "bad-bw_mem-size-too-small.log": ToolReportedError,
        "bad-lat_mem_rd-truncated-sigterm.log": TruncatedLogError,
        "bad-lat_ctx-truncated-sigkill.log": ToolReportedError,  # the shell's "Killed" after a complete first size
    }[path.name]
    with pytest.raises(expected, match=path.name):
        parse_lmbench(path.read_text(), path.name)


def test_the_sigkilled_log_without_the_shells_line_is_caught_by_what_was_asked():
    """The runner kills the whole process group: no shell is left to print "Killed"."""
    text = fixture_text(TOOL, "bad-lat_ctx-truncated-sigkill.log").replace("Killed\n", "")
    assert len(parse_lmbench(text, "x.log")) == 2
    with pytest.raises(TruncatedLogError):
        LMBENCH.parse(text, "x.log", {"tries": 3, "ctxkb": "0+16", "procs": "2+8"})


def test_damaged_lines_are_refused():
    text = fixture_text(TOOL, "lat_syscall-N3-null-read-write-stat-open.log")
    for damaged, match in ((text.replace("0.1862", "nan"), "not a finite number"),
                           (text.replace("0.1862", "-0.1862"), "negative"),
                           (text.replace("Simple read", "Simple fork"), "not understood"),
                           (text + '"stride=abc\n', "lat_mem_rd stride"),
                           ("2 2.45\n" + text, "not an lmbench result line")):
        with pytest.raises(ParseError, match=match):
            parse_lmbench(damaged, "x.log")
    with pytest.raises(TruncatedLogError, match="empty"):
        parse_lmbench("", "x.log")


def test_command_and_variant():
    params = {"programs": ["lat_ctx", "bw_mem"], "tries": 3, "enough_us": 5000, "cpu": "any", "syscalls": ["null"], "ctx_processes": [2, 8],
              "ctx_sizes_kb": [0], "mem_rd_mib": 8, "mem_rd_strides": [128], "bw_mem_mib": [1, 64], "bw_mem_ops": ["rd"]}
    (variant,) = LMBENCH.variants(params)
    assert variant.key == "tries-3_enough-5000_cpu-any_ctxkb-0_procs-2+8_bwmib-1+64_ops-rd"
    assert LMBENCH.run(variant) == (
        "export ENOUGH=5000 TIMING_O=0 LOOP_O=0"
        " && /usr/lib/lmbench/bin/*/lat_ctx -N 3 -s 0 2 8 && echo '\"bw_mem rd' >&2"
        " && /usr/lib/lmbench/bin/*/bw_mem -N 3 1m rd && /usr/lib/lmbench/bin/*/bw_mem -N 3 64m rd")
    # bw_mem prints sizes in 10^6 bytes: 1 MiB is 1.05, 64 MiB 67.11 (the capture above)
    assert LMBENCH.expected(variant.param_dict) == {"ctx": [(0, 2), (0, 8)], "bw_mem": [("rd", 1.05), ("rd", 67.11)]}
    with pytest.raises(ValueError, match="power of two"):
        LMBENCH.variants({**params, "programs": ["lat_mem_rd"], "mem_rd_mib": 6})


ONE_CPU = {"programs": ["lat_syscall", "lat_ctx"], "tries": 1, "enough_us": 5000, "cpu": "one", "syscalls": ["null"],
           "ctx_processes": [2], "ctx_sizes_kb": [0], "mem_rd_mib": 8, "mem_rd_strides": [128], "bw_mem_mib": [1],
           "bw_mem_ops": ["rd"]}


def test_cpu_one_runs_every_program_on_one_cpu():
    (variant,) = LMBENCH.variants(ONE_CPU)
    assert variant.key == "tries-1_enough-5000_cpu-one_calls-null_ctxkb-0_procs-2"
    command = LMBENCH.run(variant)
    programs = [part for part in command.split(" && ") if "/usr/lib/lmbench/bin/*/" in part]
    assert len(programs) == 2 and all(part.startswith("taskset -c $cpu /usr/lib/lmbench/bin/*/") for part in programs)
    assert command.index("cpu=$(") < command.index("taskset")
    assert LMBENCH.placement(variant)["how"].startswith("taskset -c")
    assert LMBENCH.placement(LMBENCH.variants({**ONE_CPU, "cpu": "any"})[0]) is None


@pytest.mark.parametrize("allowed", [{0}, {1}, {0, 1}, {1, 2}])
def test_cpu_one_is_the_first_cpu_the_run_may_use(allowed):
    """The command's own first steps, run by sh under an affinity set here, name the lowest CPU of it."""
    import os
    import subprocess

    allowed &= os.sched_getaffinity(0)
    if not allowed:
        pytest.skip("this machine has none of these CPUs")
    command = LMBENCH.run(LMBENCH.variants(ONE_CPU)[0])
    prefix = command[:command.index(" && touch")]  # export ..., then cpu=$(...) && test -n "$cpu"
    out = subprocess.run(["sh", "-c", prefix + ' && echo "$cpu"'], capture_output=True, text=True, check=True,
                         preexec_fn=lambda: os.sched_setaffinity(0, allowed))
    assert out.stdout.strip() == str(min(allowed))


def test_every_capture_is_described():
    readme = (DATA / TOOL / "README.md").read_text()
    for path in (DATA / TOOL).iterdir():
        if path.name != "README.md":
            assert f"`{path.name}`" in readme, path.name
