"""HPC Challenge 1.5 (``hpcc``) results: the Summary section of ``hpccoutf.txt``.

A good run prints nothing on stdout; everything is in ``hpccoutf.txt``, whose
``Begin of Summary section.`` .. ``End of Summary section.`` block holds
``key=value`` lines. This parser returns the headline values of that block.

Traps handled here:

* ``hpccoutf.txt`` is **appended to** by every run in the same directory. Only
  the *last* report in the file is parsed (the label ``reports_in_file`` says
  how many there were); if the last report has no complete Summary section the
  file is refused as truncated, even when an earlier report is complete: the
  numbers of an older run must never stand in for the run that was just made.
* When ``hpccinf.txt`` is missing, or asks for a P x Q grid larger than the
  number of MPI processes, HPL prints ``HPL WARNING``/``HPL ERROR`` to *stderr*
  and HPCC silently runs with built-in defaults (N=3520, NB=80, column-major)
  and reports ``Success=1`` with exit status 0. Nothing in the summary says so.
  The parser therefore needs to know what was asked for: pass the input file
  (``hpccinf=``) and/or ``expected=`` (N, NB, P, Q, processes), and the mpirun
  output (``mpirun_log=``, stdout+stderr) when you have it. The HPL result rows
  and ``HPL_*`` summary keys are compared with the request; any ``HPL ERROR`` /
  ``HPL WARNING`` in the mpirun log is a ToolReportedError. Without
  ``hpccinf`` or ``expected`` the parser refuses to return numbers.
* mpirun failures (run as root, not enough slots, unknown option, MPI_ABORT)
  leave no or a stale ``hpccoutf.txt``; they are found in ``mpirun_log``.
"""

from __future__ import annotations

import re

from .errors import ParseError, ToolReportedError, TruncatedLogError, finite_records, number
from .errors import count as count_of

_BANNER = "This is the DARPA/DOE HPC Challenge Benchmark"

_MPIRUN_ERRORS = [
    re.compile(r"^HPL (?:ERROR|WARNING) from process .*$", re.M),
    re.compile(r"^mpirun: Error: .*$", re.M),
    re.compile(r"^mpirun has detected an attempt to run as root\.$", re.M),
    re.compile(r"^There are not enough slots available in the system.*$", re.M),
    re.compile(r"^MPI_ABORT was invoked .*$", re.M),
    re.compile(r"^mpirun noticed that .*$", re.M),
    re.compile(r"^Primary job\s+terminated normally, but .*$", re.M),
    re.compile(r"^mpirun was unable to .*$", re.M),
    re.compile(r"^.*(?:Segmentation fault|signal \d+ \(|Killed).*$", re.M),
    re.compile(r"^--------------------------------------------------------------------------\n(.+)$", re.M),
]

# summary key -> (metric, unit)
# errors HPCC or Open MPI may write into hpccoutf.txt itself (the mpirun log's other patterns,
# such as a line after a row of dashes, are ordinary in hpccoutf.txt)
_OUTF_ERRORS = [
    _MPIRUN_ERRORS[0],  # HPL ERROR / HPL WARNING
    re.compile(r"^MPI_ABORT was invoked .*$", re.M),
    re.compile(r"^mpirun noticed that .*$", re.M),
    re.compile(r"^[^\n]*(?:Segmentation fault|Program received signal)[^\n]*$", re.M),
]

_SUMMARY = {
    "HPL_Tflops": ("hpl_tflops", "Tflop/s"),
    "HPL_time": ("hpl_time", "s"),
    "StarDGEMM_Gflops": ("star_dgemm", "Gflop/s"),
    "SingleDGEMM_Gflops": ("single_dgemm", "Gflop/s"),
    "PTRANS_GBs": ("ptrans", "GB/s"),
    "PTRANS_time": ("ptrans_time", "s"),
    "MPIRandomAccess_GUPs": ("mpi_random_access", "GUP/s"),
    "MPIRandomAccess_LCG_GUPs": ("mpi_random_access_lcg", "GUP/s"),
    "StarRandomAccess_GUPs": ("star_random_access", "GUP/s"),
    "SingleRandomAccess_GUPs": ("single_random_access", "GUP/s"),
    "StarRandomAccess_LCG_GUPs": ("star_random_access_lcg", "GUP/s"),
    "SingleRandomAccess_LCG_GUPs": ("single_random_access_lcg", "GUP/s"),
    "StarSTREAM_Copy": ("star_stream_copy", "GB/s"),
    "StarSTREAM_Scale": ("star_stream_scale", "GB/s"),
    "StarSTREAM_Add": ("star_stream_add", "GB/s"),
    "StarSTREAM_Triad": ("star_stream_triad", "GB/s"),
    "SingleSTREAM_Copy": ("single_stream_copy", "GB/s"),
    "SingleSTREAM_Scale": ("single_stream_scale", "GB/s"),
    "SingleSTREAM_Add": ("single_stream_add", "GB/s"),
    "SingleSTREAM_Triad": ("single_stream_triad", "GB/s"),
    "StarFFT_Gflops": ("star_fft", "Gflop/s"),
    "SingleFFT_Gflops": ("single_fft", "Gflop/s"),
    "MPIFFT_Gflops": ("mpi_fft", "Gflop/s"),
    # the LatencyBandwidth section prints msecs; the summary keys are in usec
    "MinPingPongLatency_usec": ("min_ping_pong_latency", "us"),
    "AvgPingPongLatency_usec": ("avg_ping_pong_latency", "us"),
    "MaxPingPongLatency_usec": ("max_ping_pong_latency", "us"),
    "NaturallyOrderedRingLatency_usec": ("naturally_ordered_ring_latency", "us"),
    "RandomlyOrderedRingLatency_usec": ("randomly_ordered_ring_latency", "us"),
    # 1 GB = 10^9 bytes here (the section says 1 MB/s = 10**6 byte/sec)
    "MinPingPongBandwidth_GBytes": ("min_ping_pong_bandwidth", "GB/s"),
    "AvgPingPongBandwidth_GBytes": ("avg_ping_pong_bandwidth", "GB/s"),
    "MaxPingPongBandwidth_GBytes": ("max_ping_pong_bandwidth", "GB/s"),
    "NaturallyOrderedRingBandwidth_GBytes": ("naturally_ordered_ring_bandwidth", "GB/s"),
    "RandomlyOrderedRingBandwidth_GBytes": ("randomly_ordered_ring_bandwidth", "GB/s"),
}
_REQUIRED = ("Success", "CommWorldProcs", "HPL_Tflops", "HPL_N", "HPL_NB", "HPL_nprow", "HPL_npcol")

_HPL_ROW = re.compile(
    r"^(W[RC]\w+)\s+([0-9]+)\s+([0-9]+)\s+([0-9]+)\s+([0-9]+)\s+([0-9.]+)\s+([0-9.]+e[+-][0-9]+)\s*$", re.M
)
_RESIDUAL = re.compile(r"^\|\|Ax-b\|\|.*\.\.\.\.\.\. (PASSED|FAILED)\s*$", re.M)


def _check_mpirun(log: str, source: str, patterns: list[re.Pattern] = _MPIRUN_ERRORS) -> None:
    for pattern in patterns:
        match = pattern.search(log)
        if match:
            line = (match.group(1) if match.groups() else match.group(0)).strip()
            raise ToolReportedError(source, f"mpirun/hpcc reported: {line}")


def parse_hpccinf(text: str, source: str = "<hpccinf.txt>") -> dict:
    """The HPL part of an ``hpccinf.txt``: Ns, NBs, PMAP and the (P, Q) grids."""
    lines = text.splitlines()
    if len(lines) < 12 or not lines[0].startswith("HPLinpack benchmark input file"):
        raise ParseError(source, "not an hpccinf.txt (no 'HPLinpack benchmark input file' first line)")

    def ints(index: int, count: int, what: str) -> list[int]:
        words = lines[index].split()[:count]
        if len(words) < count or not all(w.isdigit() for w in words):
            raise ParseError(source, f"hpccinf.txt line {index + 1}: expected {count} value(s) for {what}")
        return [int(w) for w in words]

    n_count = ints(4, 1, "# of problem sizes")[0]
    ns = ints(5, n_count, "Ns")
    nb_count = ints(6, 1, "# of NBs")[0]
    nbs = ints(7, nb_count, "NBs")
    pmap = ints(8, 1, "PMAP")[0]
    grid_count = ints(9, 1, "# of process grids")[0]
    ps = ints(10, grid_count, "Ps")
    qs = ints(11, grid_count, "Qs")
    return {"N": ns, "NB": nbs, "PMAP": pmap, "grids": list(zip(ps, qs))}


def _as_list(value) -> list:
    return list(value) if isinstance(value, (list, tuple, set)) else [value]


def _check_request(rows: list[tuple], summary: dict, request: dict, source: str) -> None:
    fallback = (
        " (HPCC falls back to built-in defaults when hpccinf.txt is missing or P*Q exceeds the"
        " number of processes)"
    )
    for variant, n, nb, p, q in rows:
        if "N" in request and n not in request["N"]:
            raise ToolReportedError(source, f"HPL ran N={n}, not the requested N in {request['N']}{fallback}")
        if "NB" in request and nb not in request["NB"]:
            raise ToolReportedError(source, f"HPL ran NB={nb}, not the requested NB in {request['NB']}{fallback}")
        if "grids" in request and (p, q) not in request["grids"]:
            raise ToolReportedError(source, f"HPL ran P x Q = {p} x {q}, not a requested grid {request['grids']}{fallback}")
        if "PMAP" in request and variant[1] != ("R" if request["PMAP"] == 0 else "C"):
            raise ToolReportedError(source, f"HPL ran {variant} (process mapping differs from hpccinf PMAP){fallback}")
    if "N" in request and "NB" in request and "grids" in request:
        wanted = len(request["N"]) * len(request["NB"]) * len(request["grids"])
        if len(rows) != wanted:
            raise ToolReportedError(source, f"HPL printed {len(rows)} result rows, the input asks for {wanted}")
    if "processes" in request and count_of(summary["CommWorldProcs"], source, "hpcc summary CommWorldProcs") != int(request["processes"]):
        raise ToolReportedError(
            source, f"hpcc ran on {summary['CommWorldProcs']} processes, {request['processes']} were requested"
        )


@finite_records
def parse_hpcc(
    outf_text: str,
    source: str = "<hpccoutf.txt>",
    mpirun_log: str | None = None,
    hpccinf: str | None = None,
    expected: dict | None = None,
) -> list[dict]:
    """Return the summary records of the last complete HPCC report in ``hpccoutf.txt``.

    ``mpirun_log``: the mpirun stdout+stderr (a good run prints nothing).
    ``hpccinf``: the text of the ``hpccinf.txt`` the run used.
    ``expected``: any of ``N``, ``NB`` (int or list), ``P``, ``Q``, ``processes``, and
    ``reports``, the number of reports the file must hold (1 when it was removed before
    the run: an appended file cut after an earlier report looks complete otherwise).
    At least one of ``hpccinf`` / ``expected`` is required (see module doc).
    """
    if mpirun_log is not None:
        _check_mpirun(mpirun_log, source)
    request: dict = {}
    if hpccinf is not None:
        request.update(parse_hpccinf(hpccinf, f"{source} (hpccinf)"))
    if expected:
        for key in ("N", "NB"):
            if key in expected:
                request[key] = _as_list(expected[key])
        if "P" in expected and "Q" in expected:
            request["grids"] = list(zip(_as_list(expected["P"]), _as_list(expected["Q"])))
        if "processes" in expected:
            request["processes"] = int(expected["processes"])
    if not request:
        raise ParseError(
            source,
            "parse_hpcc needs hpccinf= or expected=: HPCC reports Success=1 even when it ignored"
            " the requested input and ran its built-in defaults",
        )

    reports = outf_text.split(_BANNER)
    if len(reports) < 2:
        if not outf_text.strip():
            raise TruncatedLogError(source, "hpccoutf.txt is empty: hpcc did not run or was killed at once")
        raise ParseError(source, f"not an hpccoutf.txt (no '{_BANNER}' banner)")
    count = len(reports) - 1
    if expected and "reports" in expected and count != int(expected["reports"]):
        raise TruncatedLogError(source, f"hpccoutf.txt holds {count} report(s), {expected['reports']} expected")
    report = reports[-1]
    _check_mpirun(report, source, _OUTF_ERRORS)
    begin = report.find("Begin of Summary section.")
    end = report.find("End of Summary section.")
    if begin < 0 or end < begin:
        which = "the last of its reports" if count > 1 else "the report"
        raise TruncatedLogError(source, f"hpccoutf.txt: {which} has no complete Summary section (run killed or cut)")

    summary: dict[str, str] = {}
    for line in report[begin:end].splitlines()[1:]:
        key, sep, value = line.partition("=")
        if sep:
            summary[key.strip()] = value.strip()
    missing = [k for k in _REQUIRED if k not in summary]
    if missing:
        raise ParseError(source, f"hpcc Summary section lacks {', '.join(missing)}")
    if summary["Success"] != "1":
        raise ToolReportedError(source, f"hpcc Summary says Success={summary['Success']}")

    hpl = report[report.find("Begin of HPL section.") : report.find("End of HPL section.")]
    rows = [(m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5))) for m in _HPL_ROW.finditer(hpl)]
    checks = _RESIDUAL.findall(hpl)
    if not rows:
        raise ParseError(source, "hpcc HPL section has no result row")
    if "FAILED" in checks or len(checks) != len(rows):
        raise ToolReportedError(source, "an HPL residual check FAILED (or is missing): results are wrong")
    best = tuple(count_of(summary[key], source, f"hpcc summary {key}") for key in ("HPL_N", "HPL_NB", "HPL_nprow", "HPL_npcol"))
    if best not in [row[1:] for row in rows]:
        raise ParseError(source, f"hpcc summary HPL_N/NB/nprow/npcol {best} match no HPL result row")
    _check_request(rows, summary, request, source)

    labels = {"processes": count_of(summary["CommWorldProcs"], source, "hpcc summary CommWorldProcs"), "reports_in_file": count}
    hpl_labels = {"n": best[0], "nb": best[1], "p": best[2], "q": best[3], "hpl_runs": len(rows)}
    records = []
    for key, (metric, unit) in _SUMMARY.items():
        if key not in summary:
            continue
        value = number(summary[key], source, f"hpcc summary {key}")
        extra = hpl_labels if key.startswith("HPL_") else {}
        records.append({"metric": metric, "unit": unit, "value": value, **labels, **extra})
        if key == "HPL_Tflops":
            records.append({"metric": "hpl_gflops", "unit": "Gflop/s", "value": value * 1e3, **labels, **extra})
    return records
