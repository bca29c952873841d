"""NAS Parallel Benchmarks 3.4 (SER, OMP, MPI) standard output.

Every kernel ends with a ``<NAME> Benchmark Completed`` block of ``key = value``
lines (Class, Size, Iterations, Time in seconds, Mop/s total, Mop/s/thread or
Mop/s/process, Verification, ...). Only a run whose ``Verification`` is
``SUCCESSFUL`` gives numbers; ``UNSUCCESSFUL`` / ``NOT PERFORMED`` are errors.

Failures seen in real output: an MPI run with a process count the benchmark
does not accept (``*** ERROR determining processor topology``, then
``MPI_ABORT``) and a run killed by SIGTERM (the log stops after ``Time step``
lines: no ``Benchmark Completed`` block).
"""

from __future__ import annotations

import re

from .errors import ParseError, ToolReportedError, TruncatedLogError, count, finite_records, number

_ERRORS = [
    re.compile(r"^\s*\*\*\* ERROR.*$", re.M),
    re.compile(r"^MPI_ABORT was invoked .*$", re.M),
    re.compile(r"^mpirun (?:noticed|was unable|has detected) .*$", re.M),
    re.compile(r"^mpirun: Error: .*$", re.M),
    re.compile(r"^There are not enough slots available in the system.*$", re.M),
    re.compile(r"^Primary job\s+terminated normally, but .*$", re.M),
    re.compile(r"^.*Program received signal .*$", re.M),
    re.compile(r"^.*Segmentation fault.*$", re.M),
    re.compile(r"^\s*(?:Error|ERROR): .*$", re.M),
]

_BANNER = re.compile(r"^\s*NAS Parallel Benchmarks\s*(?:\((NPB[0-9.]+-(\w+))\)|([0-9.]+))\s*-+\s*(\w+) Benchmark", re.M)
_COMPLETED = re.compile(r"^\s*(\w+) Benchmark Completed\.?\s*$", re.M)
_FIELD = re.compile(r"^\s*([A-Za-z][A-Za-z/ ]*?)\s*=\s*(.*?)\s*$")


@finite_records
def parse_npb(text: str, source: str = "<NPB log>") -> list[dict]:
    """Return the records of one complete, verified NPB run.

    Records: ``mops_total`` (Mop/s), ``mops_per_thread`` (OMP) or
    ``mops_per_process`` (MPI) (Mop/s), ``time`` (s). Labels: ``benchmark``
    (``BT``, ``CG``, ...), ``class``, ``size``, ``iterations``, ``mode``
    (``serial``/``omp``/``mpi``), ``threads`` or ``processes`` (and
    ``active_processes``), ``operation_type``, ``version``, ``verification``.
    """
    for pattern in _ERRORS:
        match = pattern.search(text)
        if match:
            raise ToolReportedError(source, f"NPB run reported an error: {match.group(0).strip()}")
    banner = _BANNER.search(text)
    if banner is None:
        raise ParseError(source, "not an NPB log (no 'NAS Parallel Benchmarks ... Benchmark' banner)")
    benchmark = banner.group(4)
    completed = _COMPLETED.search(text)
    if completed is None:
        raise TruncatedLogError(source, f"NPB {benchmark} log ends before '{benchmark} Benchmark Completed'")
    if completed.group(1) != benchmark:
        raise ParseError(source, f"NPB banner says {benchmark} but the summary is for {completed.group(1)}")

    fields: dict[str, str] = {}
    for line in text[completed.end() :].splitlines():
        if line.strip() == "Compile options:":
            break
        match = _FIELD.match(line)
        if match:
            fields[re.sub(r"\s+", " ", match.group(1))] = match.group(2)
    verification = fields.get("Verification")
    if verification is None:
        raise TruncatedLogError(source, f"NPB {benchmark} summary has no 'Verification' line")
    if verification != "SUCCESSFUL":
        raise ToolReportedError(source, f"NPB {benchmark} verification is {verification}, not SUCCESSFUL")
    for key in ("Class", "Mop/s total", "Time in seconds"):
        if key not in fields:
            raise TruncatedLogError(source, f"NPB {benchmark} summary has no '{key}' line")

    if "Total processes" in fields:
        mode = "mpi"
    elif "Total threads" in fields:
        mode = "omp"
    else:
        # NPB3.4-SER, or NPB 3.4's OpenMP code compiled without OpenMP (its serial program): no thread lines
        mode = "serial"
    labels: dict = {
        "benchmark": benchmark,
        "class": fields["Class"],
        "size": re.sub(r"\s+", "", fields.get("Size", "")),
        "mode": mode,
        "verification": verification,
    }
    what = f"NPB {benchmark} summary"
    if "Iterations" in fields:
        labels["iterations"] = count(fields["Iterations"], source, f"{what} 'Iterations'")
    if mode == "mpi":
        labels["processes"] = count(fields["Total processes"], source, f"{what} 'Total processes'")
        if "Active processes" in fields:
            labels["active_processes"] = count(fields["Active processes"], source, f"{what} 'Active processes'")
    elif "Total threads" in fields:
        labels["threads"] = count(fields["Total threads"], source, f"{what} 'Total threads'")
        if "Avail threads" in fields:
            labels["available_threads"] = count(fields["Avail threads"], source, f"{what} 'Avail threads'")
    elif mode == "serial":
        labels["threads"] = 1
    total = number(fields["Mop/s total"], source, f"{what} 'Mop/s total'")
    seconds = number(fields["Time in seconds"], source, f"{what} 'Time in seconds'")
    per_worker = {k: number(v, source, f"{what} {k!r}") for k, v in fields.items() if k in ("Mop/s/thread", "Mop/s/process")}
    for key in ("Operation type", "Version"):
        if key in fields:
            labels[key.lower().replace(" ", "_")] = fields[key]

    records = [
        {"metric": "mops_total", "unit": "Mop/s", "value": total, **labels},
        {"metric": "time", "unit": "s", "value": seconds, **labels},
    ]
    for key, value in per_worker.items():
        metric = "mops_per_thread" if key.endswith("thread") else "mops_per_process"
        records.append({"metric": metric, "unit": "Mop/s", "value": value, **labels})
    return records
