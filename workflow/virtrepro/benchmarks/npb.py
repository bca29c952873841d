"""NAS Parallel Benchmarks 3.4: serial, OpenMP and MPI (also MPI across several instances).

The binaries are built on the testbed host (:mod:`virtrepro.builds.npb`) and uploaded
into the run's scratch directory of every instance before the run
(the prepare stage's uploads, :meth:`Benchmark.prepare`): guests are Debian 12 like the host, with the
Fortran, OpenMP and Open MPI run-time libraries in their image.

MPI over ``nodes`` > 1 instances: mpirun runs in instance 0 with
``--host <address>:<slots>,...`` and starts its daemons in the others over SSH
with a key made for this run only, trusting only the peers' real host keys
(see :data:`PEER_SSH_KEY` in :mod:`.base` and ``measure``).
"""

from __future__ import annotations

import math

from ..parsers import ParseError, parse_npb
from .base import (BUILT, HOSTS, MPIRUN_SCHEDULED, SCRATCH, Benchmark, Preparation, Variant, across_hosts, check_rank_map,
                   mpi_across_instances, mpi_spread)

KERNELS = ("bt", "cg", "ep", "ft", "is", "lu", "mg", "sp")
MPIRUN = "mpirun --allow-run-as-root --bind-to none --oversubscribe"


def _is_square(n: int) -> bool:
    return math.isqrt(n) ** 2 == n


def _is_power_of_two(n: int) -> bool:
    return n >= 1 and n & (n - 1) == 0


def process_count_problem(kernel: str, processes: int, nodes: int = 1) -> str | None:
    """Why NPB ``kernel`` cannot run with ``processes`` MPI processes over ``nodes`` instances (None: it can)."""
    if kernel in ("bt", "sp") and not _is_square(processes):
        return f"{kernel.upper()} needs a square number of processes (1, 4, 9, 16, ...), not {processes}"
    if kernel in ("cg", "ft", "is", "mg") and not _is_power_of_two(processes):
        return f"{kernel.upper()} needs a power-of-two number of processes, not {processes}"
    if processes < nodes:
        return f"{processes} processes cannot fill {nodes} instances"
    if processes % nodes:
        return f"{processes} processes do not spread evenly over {nodes} instances"
    return None


def kernel_class(params: dict, kernel: str) -> str:
    """The problem class a scale gives ``kernel``: ``class`` is one class for every kernel (``W``)
    or a mapping with a ``default`` and classes for some kernels (``{default: W, is: A}``): a
    kernel that finishes in hundredths of a second at one class (NPB prints two decimals) is run
    at a larger one, on every platform alike."""
    chosen = params["class"]
    return chosen if isinstance(chosen, str) else chosen.get(kernel, chosen["default"])


class _Npb(Benchmark):
    tool = "npb"
    flavour = ""
    build = "npb"  # virtrepro.builds.registry: obtained and built by virtrepro.builds.npb
    packages = ("libgfortran5", "libgomp1")
    programs = ("/usr/lib/x86_64-linux-gnu/libgfortran.so.5", "/usr/lib/x86_64-linux-gnu/libgomp.so.1")
    version_command = "echo NPB 3.4"
    scratch = "instance"

    def parse(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        return parse_npb(text, source)

    def binary(self, variant: Variant) -> str:
        p = variant.param_dict
        return f"{p['kernel']}.{p['class']}.x"

    def remote_binary(self, variant: Variant) -> str:
        return f"{SCRATCH}/npb-{self.flavour}-{self.binary(variant)}"

    def prepare(self, variant: Variant, config: dict | None = None) -> Preparation:
        """Its binary, built on the controller (virtrepro.builds.npb's build: ``@BUILT@/<flavour>/<binary>``),
        uploaded; over several instances on one host instance 0's mpirun logs in to the others over SSH."""
        return Preparation(uploads=((f"{BUILT}/{self.flavour}/{self.binary(variant)}", self.remote_binary(variant)),),
                           peer_ssh=self.instances(variant) > 1 and not across_hosts(variant))

    def _check(self, records: list[dict], source: str, params: dict | None, **expected) -> list[dict]:
        if not params:
            return records
        got = records[0]
        if got["benchmark"] != params["kernel"].upper() or got["class"] != params["class"]:
            raise ParseError(source, f"NPB log is {got['benchmark']} class {got['class']}, "
                                     f"not the {params['kernel'].upper()} class {params['class']} asked for")
        for key, value in expected.items():
            if got.get(key) != value:
                raise ParseError(source, f"NPB log has {key} {got.get(key)}, not the {value} asked for")
        return records


class NpbSerial(_Npb):
    """NPB serial (NPB3.4-SER; NPB 3.4 has none: the OpenMP code compiled without -fopenmp)."""

    name = "npb_serial"
    parameters = """
        required: [kernels, class]
        properties:
          kernels: {$ref: "#/$defs/npb_kernels"}
          class: {$ref: "#/$defs/npb_class"}
    """
    metric_declaration = ("cpu", """
        mops_per_process  Mop/s          higher
        mops_per_thread   Mop/s          higher
        mops_total        Mop/s          higher
        time              s              lower
    """, "time")
    flavour = "serial"

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        return [self._variant(kernel=k, **{"class": kernel_class(params, k)}) for k in params["kernels"]]

    def run(self, variant: Variant) -> str:
        return f"cd {SCRATCH} && OMP_NUM_THREADS=1 {self.remote_binary(variant)}"

    def parse(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        records = self._check(parse_npb(text, source), source, params)
        if params and records[0].get("threads", 1) != 1:
            raise ParseError(source, f"NPB serial run used {records[0]['threads']} threads")
        return records


class NpbOmp(_Npb):
    """NPB OpenMP (NPB3.4-OMP) with the configured thread counts."""

    name = "npb_omp"
    parameters = """
        required: [kernels, class, threads]
        properties:
          kernels: {$ref: "#/$defs/npb_kernels"}
          class: {$ref: "#/$defs/npb_class"}
          threads: {type: array, minItems: 1, uniqueItems: true, items: {type: integer, minimum: 1}}
    """
    metric_declaration = ("cpu", """
        mops_per_process  Mop/s          higher
        mops_per_thread   Mop/s          higher
        mops_total        Mop/s          higher
        parallel_speedup  1              higher
        time              s              lower
    """, "time")
    flavour = "omp"

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        return [self._variant(kernel=k, **{"class": kernel_class(params, k)}, threads=int(t))
                for k in params["kernels"] for t in params["threads"]]

    def run(self, variant: Variant) -> str:
        return f"cd {SCRATCH} && OMP_NUM_THREADS={int(variant.param_dict['threads'])} {self.remote_binary(variant)}"

    def parse(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        records = parse_npb(text, source)
        if params:
            self._check(records, source, params, mode="omp", threads=int(params["threads"]))
        return records


class NpbMpi(_Npb):
    """NPB MPI (NPB3.4-MPI) with the configured process counts, in one instance or spread over several."""

    name = "npb_mpi"
    parameters = """
        required: [kernels, class, processes]
        properties:
          kernels: {$ref: "#/$defs/npb_kernels"}
          class: {$ref: "#/$defs/npb_class"}
          processes: {type: array, minItems: 1, uniqueItems: true, items: {type: integer, minimum: 1}}
          nodes: {type: array, minItems: 1, uniqueItems: true, items: {type: integer, minimum: 1, maximum: 18}, default: [1]}
          across: {$ref: "#/$defs/mpi_across"}
    """
    metric_declaration = ("hpc", """
        mops_per_process  Mop/s          higher
        mops_per_thread   Mop/s          higher
        mops_total        Mop/s          higher
        parallel_speedup  1              higher
        time              s              lower
    """, "time")
    flavour = "mpi"
    packages = ("openmpi-bin", "libgfortran5", "openssh-client")
    programs = (*_Npb.programs, "mpirun", "ssh")
    check_command = "command -v mpirun"
    version_command = "mpirun --version 2>&1 | head -n 1"

    def planning(self, params: dict, platform: str | None = None) -> tuple[list[Variant], list[str]]:
        """The runnable variants (on ``platform``; None: on any) and, for each one left out, why."""
        variants, skipped = [], []
        for kernel in params["kernels"]:
            for nodes in params.get("nodes", [1]):
                spread = mpi_spread(params, int(nodes), platform)
                where = "host(s)" if spread != {} else "instance(s)"  # None: across hosts, not on this platform
                for processes in params["processes"]:
                    problem = process_count_problem(kernel, int(processes), int(nodes))
                    if spread is None:
                        problem = f"{platform}'s instances cannot be on different hosts"
                    if problem:
                        skipped.append(f"npb_mpi {kernel} class {kernel_class(params, kernel)}, {processes} processes "
                                       f"on {nodes} {where}: {problem}")
                    else:
                        variants.append(self._variant(kernel=kernel, **{"class": kernel_class(params, kernel)},
                                                      procs=int(processes), nodes=int(nodes), **spread))
        return variants, skipped

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        return self.planning(params, platform)[0]

    def instances(self, variant: Variant) -> int:
        return int(variant.param_dict["nodes"])

    def run(self, variant: Variant) -> str:
        p = variant.param_dict
        procs, nodes = int(p["procs"]), int(p["nodes"])
        if nodes == 1:
            return f"cd {SCRATCH} && {MPIRUN} -np {procs} {self.remote_binary(variant)}"
        slots = procs // nodes
        if across_hosts(variant):  # through the testbed's scheduler, which knows the hosts
            launcher = MPIRUN.replace("mpirun", MPIRUN_SCHEDULED, 1)
            return (f"cd {SCRATCH} && per_node={slots} && {launcher} --display-map --map-by ppr:{slots}:node -np {procs} "
                    f"{self.remote_binary(variant)}")
        hosts = f"$(echo {HOSTS} | sed -e 's/,/:{slots},/g' -e 's/$/:{slots}/')"
        return f"cd {SCRATCH} && {MPIRUN} --host {hosts} -np {procs} {mpi_across_instances()} {self.remote_binary(variant)}"

    def parse(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        records = parse_npb(text, source)
        if params:
            self._check(records, source, params, mode="mpi", processes=int(params["procs"]))
            if params.get("across") == "hosts":  # the ranks really were on that many nodes
                nodes = int(params["nodes"])
                check_rank_map(text, source, nodes, int(params["procs"]) // nodes)
        return records
