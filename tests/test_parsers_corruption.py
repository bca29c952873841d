"""Property test: a corrupt log is never a number (issue 15, point 1).

Every good capture in tests/data/ is corrupted the way logs get corrupted, and the
parser that reads it must either refuse it with a named error (a ParseError subclass,
parsers/errors.py) or return exactly what it returns for the intact capture:

(a) cut: the text ends at every line boundary and at a sample of positions inside lines;
(b) a number replaced, in turn, by ``nan``, ``inf``, ``-``, nothing, and its negative;
(c) a real error line of the same tool (taken from its bad-* captures) appended.

"Exactly what it returns for the intact capture" is the only allowance: it means the
damage did not reach a number the parser reports (a cut after the last result line, a
number the parser does not read, such as an interval row of iperf3, the progress lines
of fio, or bonnie++'s rounded table when its CSV line is there). String labels copied
as printed (a version, a host name) are not numbers and are not compared. An appended
error line has no allowance at all: it must always be refused.

Each parser is called the way the workflow calls it (benchmarks/*.py): with what the
caller knows about the run (``expected_requests``, ``expected_runs``, ``expected_bytes``,
``expected_seconds``, the hpccinf.txt), since some cuts can only be seen that way (a
quiet mbw log cut between two methods, an ioping run cut short).

Per tool, what the allowance covers (why an unchanged result is right) is in ``WHY``.
Positions inside lines and numbers of long captures are sampled with a fixed seed to
keep the test under a minute; VIRTREPRO_CORRUPT_ALL=1 tries every one.
"""

from __future__ import annotations

import os
import random
import re
from dataclasses import dataclass, field
from typing import Callable

import pytest

from conftest import DATA
from virtrepro.parsers import (
    ParseError,
    parse_bonnie,
    parse_dd,
    parse_fio,
    parse_hpcc,
    parse_ioping,
    parse_iozone,
    parse_iperf3,
    parse_lifecycle,
    parse_mbw,
    parse_netperf,
    parse_npb,
    parse_stress_ng,
    parse_stress_ng_yaml,
    parse_sysbench,
)
from virtrepro.parsers.apps import parse_amqp_load, parse_openssl_speed, parse_pgbench, parse_pyperf, parse_wrk
from virtrepro.parsers.lmbench import parse_lmbench
from virtrepro.parsers.mitgcm import parse_mitgcm

EVERYTHING = os.environ.get("VIRTREPRO_CORRUPT_ALL") == "1"
MAX_MIDLINE_CUTS = 12  # per capture, besides every line boundary
MAX_NUMBERS = 120  # numbers replaced per capture (all of them when fewer)
REPLACEMENTS = ("nan", "inf", "-", "", "NEG")

MIB = 1024**2


@dataclass
class Case:
    """One good capture: its files (role -> file name), which one holds the results, and the call."""

    tool: str
    files: dict[str, str]
    call: Callable[[dict[str, str | None], str], list[dict]]
    target: str = "text"
    errors: list[str] = field(default_factory=list)  # real error lines of this tool
    cut_may_drop_labels: str = ""  # why a cut between lines may lose labels (never a value) of this capture

    @property
    def name(self) -> str:
        return self.files[self.target]

    def texts(self) -> dict[str, str | None]:
        return {role: (DATA / self.tool / name).read_text() if name else None for role, name in self.files.items()}


def _lines(tool: str, *wanted: tuple[str, str]) -> list[str]:
    """Real error lines: (bad-* capture, start of the line) -> the whole line as captured."""
    found = []
    for name, start in wanted:
        text = (DATA / tool / name).read_text()
        line = next((line for line in text.splitlines() if line.lstrip().startswith(start)), None)
        assert line is not None, (tool, name, start)
        found.append(line)
    return found


def _cases() -> list[Case]:
    cases: list[Case] = []

    def add(tool, names, call, errors, **files):
        for name in names:
            cases.append(Case(tool, {"text": name, **{k: v(name) for k, v in files.items()}}, call, errors=errors))

    # --- sysbench: as in benchmarks/cpu_memory.py
    errors = _lines("sysbench", ("bad-invalid-option.log", "invalid option:"), ("bad-fileio-run-without-prepare.log", "FATAL:"))
    names = sorted(p.name for p in (DATA / "sysbench").iterdir() if not p.name.startswith("bad-")
                   and p.name not in ("fileio-prepare-1G.log", "fileio-cleanup.log"))  # not measurements
    add("sysbench", names, lambda t, s: parse_sysbench(t["text"], s), errors)

    # --- iozone
    errors = _lines("iozone", ("bad-nonexistent-dir.log", "Can not open temp file"), ("bad-truncated-sigterm.log", "iozone: interrupted"))
    add("iozone", ["auto-r1m-n1m-g64m-i0-i1.log", "s64m-r1m-i012-direct-fsync.log"], lambda t, s: parse_iozone(t["text"], s), errors)

    # --- NPB
    errors = _lines("npb", ("bad_mpi_bt.S.np2-nonsquare.log", "*** ERROR"), ("bad_mpi_bt.S.np2-nonsquare.log", "MPI_ABORT was invoked"))
    names = sorted(p.name for p in (DATA / "npb").glob("*.log") if p.name.startswith(("mpi_", "omp_", "ser_")))
    add("npb", names, lambda t, s: parse_npb(t["text"], s), errors)

    # --- HPCC: hpccoutf.txt is the result; the mpirun log and hpccinf.txt come with it
    errors = _lines(
        "hpcc",
        ("bad-PxQ-exceeds-np-P2Q2-np2.log", "HPL ERROR from process"),
        ("bad-missing-hpccinf.log", "HPL WARNING from process"),
    ) + _lines("npb", ("bad_mpi_bt.S.np2-nonsquare.log", "MPI_ABORT was invoked"))  # the same Open MPI's abort line

    # the caller knows how many reports the file holds (benchmarks/hpc.py removes it before a run)
    for stem, log, reports in (("mpirun-np2-N3000-NB80-P1Q2", "mpirun-np2-N3000-NB80-P1Q2.log", 1),
                               ("quirk-append-N1000-two-runs-same-dir", "quirk-append-N1000-run2-same-dir.log", 2)):
        cases.append(Case("hpcc", {"text": f"{stem}.hpccoutf.txt", "log": log, "inf": f"{stem}.hpccinf.txt"},
                          lambda t, s, r=reports: parse_hpcc(t["text"], s, mpirun_log=t["log"], hpccinf=t["inf"],
                                                             expected={"reports": r}), errors=errors))

    # --- ioping: the workflow passes the -c count
    errors = _lines("ioping", ("bad-nonexistent-path.log", "ioping:"), ("bad-invalid-option.log", "ioping:"))
    counts = {"batch-B-c20-i100ms.log": 20, "c3-i100ms-split.stdout": 3, "dir-c20-i200ms.log": 20,
              "dir-direct-c20-i200ms.log": 20, "json-c5-i100ms.log": 5, "quiet-p5-c20-i100ms.log": 20,
              "write-direct-1M-c10.log": 10}
    for name, count in counts.items():
        cases.append(Case("ioping", {"text": name}, lambda t, s, c=count: parse_ioping(t["text"], s, expected_requests=c), errors=errors))

    # --- iperf3
    errors = _lines(
        "iperf3",
        ("bad-no-server-text.log", "iperf3: error -"),
        ("bad-truncated-sigterm-text.client.log", "iperf3: interrupt"),
        ("bad-truncated-sigterm-text.server.log", "iperf3: the client has terminated"),
    )
    names = sorted(p.name for p in (DATA / "iperf3").iterdir() if not p.name.startswith("bad-"))
    add("iperf3", names, lambda t, s: parse_iperf3(t["text"], s), errors)

    # --- bonnie++: stdout, with its stderr when split; -x count known to the caller
    errors = _lines(
        "bonnie++",
        ("bad-nonexistent-dir.log", "Can't"),
        ("bad-size-less-than-2x-ram.log", "File size should be double RAM"),
        ("bad-root-without-u.log", 'You must use the "-u" switch'),
        ("bad-direct-per-char.log", "Can't write()"),
    )
    runs = {"quiet-fast-s2048-n128-x2.stdout": 2, "fast-s1024-r512-n1-split.stdout": 1,
            "bon_csv2txt-of-data-rows-only.log": 1, "bon_csv2txt-of-quiet-fast-x2.log": 2, "direct-fast-s256-x1.log": 1}
    for name, count in runs.items():
        stderr = name.replace(".stdout", ".stderr") if name.endswith(".stdout") else None
        cases.append(Case("bonnie++", {"text": name, "stderr": stderr},
                          lambda t, s, c=count, table=name.startswith("bon_csv2txt"): parse_bonnie(
                              t["text"], s, stderr=t["stderr"], expected_runs=c, csv2txt=table), errors=errors))

    # --- dd: bs x count known to the caller
    errors = _lines("dd", ("bad-no-space-left-tmpfs-2m.log", "dd: error writing"), ("bad-missing-input.log", "dd: failed to open"))
    asked = {"benchmark-write-fdatasync-read-direct-32MiB.log": [32 * MIB, 32 * MIB], "read-bs1M-count256-cached.log": 256 * MIB,
             "read-bs1M-count256-direct.log": 256 * MIB, "write-bs1M-count256-fdatasync.log": 256 * MIB,
             "write-bs1k-count3-fdatasync.log": 3072}
    for name, size in asked.items():
        cases.append(Case("dd", {"text": name}, lambda t, s, b=size: parse_dd(t["text"], s, expected_bytes=b), errors=errors))

    # --- fio
    errors = _lines(
        "fio",
        ("bad-normal-einval-unaligned-direct-io.log", "fio: io_u error"),
        ("bad-truncated-sigterm-normal.log", "fio: terminating on signal"),
        ("bad-invalid-option.log", "fio: unrecognized option"),
    )
    names = ["randread-4k-libaio-qd32-normal.log", "jobfile-three-groups-normal.log", "randrw70-4k-2jobs-normal.log",
             "randread-4k-eta-always.log", "null-engine-normal-split.stdout", "randread-4k-libaio-qd32-json.log",
             "jobfile-three-groups.json", "seqwrite-1m-psync-2jobs-group-jsonplus.log",
             "quirk-json-filename-in-missing-dir-is-created.log", "randread-4k-terse.log"]
    for name in names:
        stderr = name.replace(".stdout", ".stderr") if name.endswith(".stdout") else None
        cases.append(Case("fio", {"text": name, "stderr": stderr}, lambda t, s: parse_fio(t["text"], s, stderr=t["stderr"]), errors=errors))

    # --- mbw: as in benchmarks/cpu_memory.py (runs and methods known to the caller)
    errors = _lines("mbw", ("bad-size-too-large-for-ram.log", "Error"), ("bad-no-size-argument.log", "Error"))
    every = ("MEMCPY", "DUMB", "MCBLOCK")
    mbw = {"all-tests-n10-256MiB.log": (10, every, True), "memcpy-n3-64MiB-split.stdout": (3, ("MEMCPY",), True),
           "memcpy-only-no-avg-n5-128MiB.log": (5, ("MEMCPY",), False), "quiet-all-tests-n5-512MiB.log": (5, every, True)}
    for name, (count, methods, averages) in mbw.items():
        cases.append(Case("mbw", {"text": name}, lambda t, s, c=count, m=methods, a=averages: parse_mbw(
            t["text"], s, expected_runs=c, expected_methods=m, expected_averages=a), errors=errors))

    # --- netperf
    errors = _lines("netperf", ("bad-no-server.log", "establish control"), ("bad-unknown-test.log", "The test you requested"))
    names = sorted(p.name for p in (DATA / "netperf").glob("*.log") if not p.name.startswith("bad-") and p.name != "netserver.log")
    add("netperf", names, lambda t, s: parse_netperf(t["text"], s, returncode=0), errors)
    # netperf -k prints one KEY=VALUE line per output selector asked for, in that order, and
    # nothing after the last: a cut between two lines loses the selectors after it. THROUGHPUT
    # and THROUGHPUT_UNITS, the reported value, come first and are required; the rest are labels.
    next(c for c in cases if c.name == "omni-stream-keyval.log").cut_may_drop_labels = (
        "netperf -k output has no end marker; the value's lines come first")

    # --- stress-ng: the --timeout is known to the caller
    errors = _lines(
        "stress-ng",
        ("bad-temp-path-readonly-proc.log", "stress-ng: fail:"),
        ("bad-hdd-temp-path-missing.log", "aborting:"),
        ("bad-invalid-option.log", "stress-ng: unrecognized option"),
    )
    seconds = {"cpu1-verify-perf-5s.log": 5, "cpu2-matrixprod-10s-metrics-brief.log": 10,
               "cpu2-matrixprod-5s-metrics-brief-split.stderr": 5, "hdd1-256M-10s-metrics-brief-times.log": 10,
               "mixed-cpu-vm-matrix-10s-metrics-yaml.log": 10, "cpu2-matrixprod-5s-container-late-start.log": 5,
               "vm2-256M-1s-tcg-late-start.log": 1,
               "stream1-10s-metrics-brief-memory-rate.log": 10}
    for name, timeout in seconds.items():
        cases.append(Case("stress-ng", {"text": name},
                          lambda t, s, e=timeout: parse_stress_ng(t["text"], s, expected_seconds=e), errors=errors))
    cases.append(Case("stress-ng", {"text": "mixed-cpu-vm-matrix-10s-metrics.yaml"},
                      lambda t, s: parse_stress_ng_yaml(t["text"], s, expected_seconds=10), errors=[]))

    # --- lmbench: the caller knows what the run asked for (benchmarks/lmbench.py)
    errors = _lines("lmbench", ("bad-invalid-option.log", "Usage:"), ("bad-missing-program.log", "sh: 1:"),
                    ("bad-stat-missing-file.log", "/var/tmp"), ("bad-lat_ctx-truncated-sigkill.log", "Killed"))
    asked = {
        "lat_syscall-N3-null-read-write-stat-open.log": {"syscalls": ["null", "read", "write", "stat", "open"]},
        "lat_ctx-N3-s0-s16-p2-p8.log": {"ctx": [(0, 2), (0, 8), (16, 2), (16, 8)]},
        "lat_mem_rd-N3-4MiB-stride64-stride128.log": {"mem_rd": {"strides": [64, 128], "mib": 4}},
        "bw_mem-N3-64MiB-rd-wr-cp.log": {"bw_mem": [("rd", 67.11), ("wr", 67.11), ("cp", 67.11)]},
        "quick-all-programs.log": {"syscalls": ["null", "read", "write", "stat", "open"],
                                   "ctx": [(0, 2), (0, 8), (16, 2), (16, 8)], "mem_rd": {"strides": [128], "mib": 8},
                                   "bw_mem": [("rd", 67.11), ("wr", 67.11), ("cp", 67.11)]},
    }
    for name, expected in asked.items():
        cases.append(Case("lmbench", {"text": name}, lambda t, s, e=expected: parse_lmbench(t["text"], s, e), errors=errors))

    # --- lifecycle (the log is written by virtrepro itself)
    errors = []
    add("lifecycle", ["lxc.log", "podman.log"], lambda t, s: parse_lifecycle(t["text"], s), errors)

    # --- application workloads
    add("wrk", ["file64k-t2-c16-3s-latency.log"], lambda t, s: parse_wrk(t["text"], s),
        _lines("wrk", ("bad-connection-refused.log", "unable to connect")))
    add("pgbench", ["select-s1-c4-j2-3s.log", "tpcb-s1-c4-j2-3s.log"], lambda t, s: parse_pgbench(t["text"], s),
        _lines("pgbench", ("bad-server-stopped-mid-run.log", "pgbench: error: Run was aborted"),
               ("bad-connection-refused.log", "pgbench: error:")))
    add("amqp_load", ["m20000-s1024-p2-c2.log"], lambda t, s: parse_amqp_load(t["text"], s), [])
    add("pyperf", ["json_dumps-fast.log", "nbody-fast.log"], lambda t, s: parse_pyperf(t["text"], s), [])
    add("openssl", ["evp-aes-256-gcm-1s.log", "evp-sha256-bytes16384-1s.log", "rsa2048-1s.log", "sha256-1s.log"],
        lambda t, s: parse_openssl_speed(t["text"], s), [])
    # --- MITgcm exp2: the benchmark passes the time steps it asked for (benchmarks/mitgcm.py)
    errors = _lines("mitgcm", ("bad-diverged-deltaTmom-96000.log", "STOP ABNORMAL END"),
                    ("bad-missing-topog-bin.log", "STOP ABNORMAL END"))
    add("mitgcm", ["exp2-days-5-steps-4.log"], lambda t, s: parse_mitgcm(t["text"], s, time_steps=4), errors)
    return cases


CASES = _cases()

# Why an unchanged result is right, per tool: the damage is outside every line whose
# numbers the parser reports (each sentence names the lines it covers).
WHY = {
    "sysbench": "the banner, the option echo, interval lines and the 'Threads fairness' block are not reported",
    "iozone": "the banner, the option echo and the lines after 'iozone test complete.' are not reported",
    "npb": "the lines before '<X> Benchmark Completed' (iteration/time-step progress) and the compile options"
           " after the summary are not reported",
    "hpcc": "the sections' details (HPL's timing lines, STREAM's per-run lines, the LatencyBandwidth tables) are"
            " not reported: only the Summary section and the HPL result rows/residual checks are",
    "ioping": "the per-request rows are not reported (only the statistics block); a row's size is a label that"
              " the first row gives, the others are not read",
    "iperf3": "interval rows, the connection lines and, in JSON, every interval and stream object are not"
              " reported: only the end-of-test summary rows / end.sum_* objects are",
    "bonnie++": "when the CSV line is there the rounded text table is not read; progress lines are not reported",
    "dd": "nothing outside the 'records in/out' and 'bytes copied' lines is read",
    "fio": "the eta/progress lines, job option echo, disk stats and cpu lines are not reported",
    "mbw": "the header lines are labels at most; every result row is reported",
    "netperf": "the header lines (column titles) are not reported",
    "stress-ng": "the info lines other than the announced duration and the dispatched hogs are not reported",
    "lmbench": "lat_ctx's overhead on its title line is read but not reported; every other number is",
    "lifecycle": "only the '<step>_s=' lines are reported",
    "wrk": "the thread statistics' Stdev and +/- Stdev columns and the distribution's header are not reported",
    "pgbench": "initial connection time and the lines of the run's setup are not reported",
    "amqp_load": "the header line is not reported",
    "pyperf": "the JSON's metadata and the warm-up values are not reported",
    "openssl": "the 'Doing ...' progress lines and the build options are not reported",
    "mitgcm": "the parameter echo (but nTimeSteps and nIter0), the monitor statistics' values (checked finite only),"
              " the solver's lines and the section timers other than ALL [THE_MODEL_MAIN] are not reported",
}

# Number tokens: digits with an optional fraction and exponent, not part of a name (x86_64, NB80, 3.4.1).
NUMBER = re.compile(r"(?<![A-Za-z_.0-9])[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?(?![0-9_])")


def comparable(records: list[dict]) -> list[tuple]:
    """Records as compared: values and every label that is not free text (str labels are copied as printed)."""
    return [tuple(sorted((k, repr(v)) for k, v in r.items() if k in ("metric", "unit") or not isinstance(v, str)))
            for r in records]


def only_labels_lost(records: list[dict], original: list[dict]) -> bool:
    """The same values, metrics and units, and every label left is one of the original's."""
    if [(r["metric"], r["unit"], r["value"]) for r in records] != [(r["metric"], r["unit"], r["value"]) for r in original]:
        return False
    return all(r.items() <= o.items() for r, o in zip(records, original))


def outcome(case: Case, texts: dict, original: list[dict], kind: str) -> str:
    """'refused' (named error), 'unchanged', 'labels lost' (an allowed cut), or what got through."""
    try:
        records = case.call(texts, f"corrupt/{case.name}")
    except ParseError as error:
        assert f"corrupt/{case.name}" in str(error)
        return "refused"
    except Exception as error:  # noqa: BLE001 - anything but a named error is a finding
        return f"crash {type(error).__name__}: {error}"
    if comparable(records) == comparable(original):
        return "unchanged"
    if kind == "cut" and case.cut_may_drop_labels and only_labels_lost(records, original):
        return "unchanged"
    return "through"


def corruptions(case: Case, text: str):
    """(kind, description, corrupted text) for one capture."""
    rng = random.Random(f"{case.tool}/{case.name}")
    boundaries = [m.end() for m in re.finditer(r"\n", text)]
    for end in [0, *boundaries[:-1]]:
        yield "cut", f"cut at byte {end} (line boundary)", text[:end]
    inside = [i for i in range(1, len(text)) if text[i - 1] != "\n" and text[i] != "\n"]
    for end in (inside if EVERYTHING else rng.sample(inside, min(MAX_MIDLINE_CUTS, len(inside)))):
        yield "cut", f"cut at byte {end}", text[:end]
    numbers = list(NUMBER.finditer(text))
    if not EVERYTHING and len(numbers) > MAX_NUMBERS:
        numbers = sorted(rng.sample(numbers, MAX_NUMBERS), key=lambda m: m.start())
    for match in numbers:
        line = text.count("\n", 0, match.start()) + 1
        for replacement in REPLACEMENTS:
            new = "-" + match.group() if replacement == "NEG" else replacement
            yield "number", f"line {line}: {match.group()!r} -> {new!r}", text[: match.start()] + new + text[match.end():]
    for error in case.errors:
        separator = "" if text.endswith("\n") or not text else "\n"
        yield "error", f"appended {error.strip()!r}", text + separator + error + "\n"


def run_case(case: Case) -> tuple[int, list[str]]:
    texts = case.texts()
    original = case.call(texts, case.name)
    tried, found = 0, []
    for kind, description, corrupted in corruptions(case, texts[case.target]):
        tried += 1
        result = outcome(case, {**texts, case.target: corrupted}, original, kind)
        if result == "refused" or (result == "unchanged" and kind != "error"):
            continue
        found.append(f"{case.tool}/{case.name}: {description}: {result}")
    return tried, found


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.tool}/{c.name}")
def test_corrupt_capture_is_refused_or_gives_the_same_numbers(case):
    tried, found = run_case(case)
    assert tried > 0
    assert not found, f"{len(found)} of {tried} corruptions got through:\n" + "\n".join(found[:40])


def test_every_good_capture_is_corrupted():
    """Every capture that is not bad-* is in CASES, or is listed here with the reason it is not."""
    not_results = {
        "sysbench": {"fileio-prepare-1G.log", "fileio-cleanup.log"},  # file preparation, not a measurement
        "hpcc": {
            # the mpirun output of good runs (empty) and input files: read with their hpccoutf.txt
            "mpirun-np2-N2000+2500-NB64+128-P1Q2.hpccinf.txt", "mpirun-np2-N2000+2500-NB64+128-P1Q2.log",
            "mpirun-np2-N3000-NB80-P1Q2.hpccinf.txt", "mpirun-np2-N3000-NB80-P1Q2.log", "quirk-append-N1000-run1.log",
            "quirk-append-N1000-run2-same-dir.log", "quirk-append-N1000-two-runs-same-dir.hpccinf.txt",
            # a whole run's log across two SLURM nodes, for mpirun's rank map (test_across_hosts.py): its
            # hpccoutf.txt section is the same report the hpccoutf captures above are corrupted for
            "across-two-slurm-nodes-p1.log",
        },
        "npb": {"availability-check.log", "bad_mpi_bt.S.np2-nonsquare.log", "bad_omp_lu.W.t1-sigterm-unbuffered.log"},
        "netperf": {"netserver.log"},  # the server's log holds no result
        "fio": {"two-groups.fio", "jobfile-three-groups-json-stdout.log"},  # a job file; the empty stdout of --output
        "stress-ng": {"stream1-10s-metrics-brief.log"},  # stream could not measure its rate: refused on purpose
        "lmbench": {"README.md"},  # what each capture is
        "mitgcm": {"README.md"},
    }
    covered = {(c.tool, name) for c in CASES for name in c.files.values() if name}
    # guests/: the platform tools' own output of failed guest starts (tests/test_guest_failures.py), no results;
    # stats/: reference values of the interval methods (tests/test_rank_intervals.py), no tool's output
    for tool_dir in sorted(p for p in DATA.iterdir() if p.is_dir() and p.name not in ("guests", "stats")):
        for path in sorted(tool_dir.iterdir()):
            if path.name.startswith("bad-") or path.name in not_results.get(tool_dir.name, ()):
                continue
            if path.suffix == ".stdout" and (tool_dir.name, path.name) not in covered:
                # the empty stdout of a good split capture whose results are on stderr
                assert not path.read_text().strip() or tool_dir.name != "stress-ng", path
                continue
            assert (tool_dir.name, path.name) in covered or (
                path.name.endswith(".stderr") and (tool_dir.name, path.name.replace(".stderr", ".stdout")) in covered
            ), f"{tool_dir.name}/{path.name} is a good capture that the property test does not corrupt"
    assert set(WHY) == {c.tool for c in CASES}


# --- the cases issue 15 found, one by one ------------------------------------------------------

from conftest import fixture_text  # noqa: E402
from virtrepro.parsers import ToolReportedError, TruncatedLogError  # noqa: E402
from virtrepro.parsers.errors import finite_records  # noqa: E402


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-4741.56"])
@pytest.mark.parametrize("key", ["Mop/s total", "Time in seconds", "Mop/s/process"])
def test_npb_value_that_is_not_a_finite_positive_number_is_refused(key, value):
    text = fixture_text("npb", "mpi_bt.S.np4.log")
    edited = re.sub(rf"^(\s*{re.escape(key)}\s*=\s*)\S+", lambda m: m.group(1) + value, text, count=1, flags=re.M)
    assert edited != text
    with pytest.raises(ParseError, match=re.escape(key)):
        parse_npb(edited, "x.log")


@pytest.mark.parametrize("value", ["nan", "inf", "-0.0019565"])
def test_hpcc_summary_value_that_is_not_finite_is_refused(value):
    stem = "mpirun-np2-N3000-NB80-P1Q2"
    outf = fixture_text("hpcc", f"{stem}.hpccoutf.txt").replace("HPL_Tflops=0.0019565", f"HPL_Tflops={value}")
    with pytest.raises(ParseError, match="HPL_Tflops"):
        parse_hpcc(outf, "x", hpccinf=fixture_text("hpcc", f"{stem}.hpccinf.txt"))


def test_hpcc_mpi_abort_inside_hpccoutf_is_a_tool_error():
    stem = "mpirun-np2-N3000-NB80-P1Q2"
    abort = _lines("npb", ("bad_mpi_bt.S.np2-nonsquare.log", "MPI_ABORT was invoked"))[0]
    outf = fixture_text("hpcc", f"{stem}.hpccoutf.txt") + abort + "\n"
    with pytest.raises(ToolReportedError, match="MPI_ABORT"):
        parse_hpcc(outf, "x", hpccinf=fixture_text("hpcc", f"{stem}.hpccinf.txt"))


def test_iperf3_unreadable_sum_row_does_not_make_one_stream_the_total():
    text = fixture_text("iperf3", "tcp-P2-reverse-5s-text.server.log")
    damaged = text.replace("[SUM]   0.00-5.00   sec  10.9 GBytes  18.8 Gbits/sec", "[SUM]   0.00-5.00   sec  nan GBytes  18.8 Gbits/sec")
    assert damaged != text
    with pytest.raises(ParseError, match="nan"):
        parse_iperf3(damaged, "x.log")
    lines = text.splitlines(keepends=True)
    one_stream = "".join(line for line in lines if not line.startswith(("[  8]   0.00-5.00", "[SUM]   0.00-5.00")))
    with pytest.raises(TruncatedLogError, match=r"streams \[5\], the test connected \[5, 8\]"):
        parse_iperf3(one_stream, "x.log")


def test_bonnie_stdout_cut_inside_the_file_creation_table_is_truncated():
    text = fixture_text("bonnie++", "fast-s1024-r512-n1-split.stdout")
    cut = text[: text.index("Latency               171us")]
    with pytest.raises(TruncatedLogError):
        parse_bonnie(cut, "cut.stdout")


def test_nan_in_ioping_and_netperf_says_what_is_wrong():
    ioping = fixture_text("ioping", "dir-c20-i200ms.log")
    edited = re.sub(r"^(min/avg/max/mdev = )\S+", r"\1nan", ioping, flags=re.M)
    with pytest.raises(ParseError, match="'nan', not a finite number") as error:
        parse_ioping(edited, "x.log")
    assert not isinstance(error.value, TruncatedLogError)
    netperf = fixture_text("netperf", "tcp_rr-r1-3s.log").replace("17142.65", "nan")
    with pytest.raises(ParseError, match="'nan', not a finite number") as error:
        parse_netperf(netperf, "x.log")
    assert not isinstance(error.value, TruncatedLogError)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), "12", None, True])
def test_no_value_that_is_not_a_finite_number_leaves_a_parser(bad):
    @finite_records
    def parse_x(text: str, source: str = "<x log>") -> list[dict]:
        return [{"metric": "m", "unit": "s", "value": 1.0}, {"metric": "broken", "unit": "s", "value": bad}]

    with pytest.raises(ParseError, match=r"^x\.log: broken = .* is not a finite number"):
        parse_x("", "x.log")
    with pytest.raises(ParseError, match=r"^<x log>: broken"):
        parse_x("")


def test_every_public_parser_carries_the_finite_check():
    import importlib
    import pkgutil

    import virtrepro.parsers as parsers

    modules = [importlib.import_module(f"virtrepro.parsers.{m.name}") for m in pkgutil.iter_modules(parsers.__path__)]
    public = {getattr(module, name) for module in modules for name in dir(module)
              if name.startswith("parse_") and name != "parse_hpccinf" and callable(getattr(module, name))}
    assert parse_lmbench in public and parse_wrk in public
    for parse in public:
        assert getattr(parse, "__wrapped__", None) is not None, parse.__name__
