"""CPU and memory benchmarks: sysbench cpu and memory, mbw, stress-ng."""

from __future__ import annotations

from ..declarations import regimes
from ..parsers import ParseError, parse_mbw, parse_stress_ng, parse_sysbench
from .base import SCRATCH, Benchmark, Variant, size_to_kb, threads_arg


# what sysbench reports, for each benchmark that runs it (Benchmark.metric_declaration)
SYSBENCH_METRICS = """
    events_per_second      events/s       higher
    fsyncs_per_second      ops/s          higher
    latency_avg            ms             lower
    latency_max            ms             lower
    latency_p95            ms             lower
    latency_p99            ms             lower
    operations_per_second  ops/s          higher
    read_throughput        MiB/s          higher
    reads_per_second       ops/s          higher
    throughput             MiB/s          higher
    total_events           events         higher
    total_time             s              lower
    write_throughput       MiB/s          higher
    writes_per_second      ops/s          higher
"""


class Sysbench(Benchmark):
    """What every sysbench test shares: the tool, its package and its parser, which checks the
    options a run echoes and its total time against the run's parameters (:meth:`expected`)."""

    tool = "sysbench"
    check_command = "sysbench --version"
    version_command = "sysbench --version"

    def parse(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        return parse_sysbench(text, source, self.expected(params) if params else None)

    def expected(self, params: dict) -> dict:
        """What a log of a run with ``params`` echoes (see parse_sysbench's ``expected``)."""
        raise NotImplementedError


def sysbench_cpu_expected(prime, threads, seconds) -> dict:
    """What sysbench cpu echoes when run with these options (``threads`` all: any count)."""
    return {"test": "cpu", "cpu_max_prime": int(prime), "seconds": int(seconds),
            **({} if threads == "all" else {"threads": int(threads)})}


class SysbenchCpu(Sysbench):
    """sysbench cpu: prime-number verification, events per second (thesis 4.2 CPU overhead)."""

    name = "sysbench_cpu"
    parameters = """
        required: [threads, cpu_max_prime, seconds]
        properties:
          threads: {$ref: "#/$defs/counts_or_all"}
          cpu_max_prime: {type: integer, minimum: 3}
          seconds: {type: integer, minimum: 1}
    """
    metric_declaration = ("cpu", SYSBENCH_METRICS, "events_per_second")

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        return [
            self._variant(threads=threads, prime=params["cpu_max_prime"], seconds=params["seconds"])
            for threads in params["threads"]
        ]

    def run(self, variant: Variant) -> str:
        p = variant.param_dict
        return f"sysbench cpu --cpu-max-prime={int(p['prime'])} --threads={threads_arg(p['threads'])} --time={int(p['seconds'])} run"

    def expected(self, params: dict) -> dict:
        return sysbench_cpu_expected(params["prime"], params["threads"], params["seconds"])


def sysbench_memory_command(p: dict) -> str:
    """sysbench memory, sequential access, from a variant's parameters (block, total, oper, threads, seconds)."""
    return (
        f"sysbench memory --memory-block-size={p['block']} --memory-total-size={p['total']} "
        f"--memory-oper={p['oper']} --memory-access-mode=seq --threads={threads_arg(p['threads'])} "
        f"--time={int(p['seconds'])} run"
    )


def sysbench_memory_expected(p: dict) -> dict:
    """What sysbench memory echoes when run with :func:`sysbench_memory_command` (the access mode is not echoed)."""
    return {"test": "memory", "block_size_kib": size_to_kb(p["block"].lower()), "total_size_kib": size_to_kb(p["total"].lower()),
            "operation": p["oper"], "seconds": int(p["seconds"]),
            **({} if p["threads"] == "all" else {"threads": int(p["threads"])})}


class SysbenchMemory(Sysbench):
    """sysbench memory: sequential read and write bandwidth (thesis Figs. 4.5-4.7 memory overhead)."""

    name = "sysbench_memory"
    parameters = """
        required: [operations, block_sizes, threads, total_size, seconds]
        properties:
          operations: {type: array, minItems: 1, uniqueItems: true, items: {enum: [read, write]}}
          block_sizes: {type: array, minItems: 1, uniqueItems: true, items: {type: string, pattern: "^[0-9]+[KMG]$"}}
          threads: {$ref: "#/$defs/counts_or_all"}
          total_size: {type: string, pattern: "^[0-9]+[KMG]$"}
          seconds: {type: integer, minimum: 1}
    """
    metric_declaration = ("memory", SYSBENCH_METRICS, "throughput")

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        return [
            self._variant(oper=oper, block=block, total=params["total_size"], threads=threads, seconds=params["seconds"])
            for oper in params["operations"]
            for block in params["block_sizes"]
            for threads in params["threads"]
        ]

    def run(self, variant: Variant) -> str:
        return sysbench_memory_command(variant.param_dict)

    def expected(self, params: dict) -> dict:
        return sysbench_memory_expected(params)


class Mbw(Benchmark):
    """mbw: memory copy bandwidth with memcpy, a byte loop and block copies (thesis chapter 4 memory)."""

    name = "mbw"
    parameters = """
        required: [runs, array_mib]
        properties:
          runs: {type: integer, minimum: 1}
          array_mib: {type: integer, minimum: 1}
    """
    metric_declaration = ("memory", """
        copy_bandwidth      MiB/s          higher
        copy_bandwidth_avg  MiB/s          higher
        elapsed             s              lower
        elapsed_avg         s              lower
    """, "copy_bandwidth_avg")
    tool = "mbw"
    version_command = "dpkg-query -W -f='mbw ${Version}' mbw 2>/dev/null || echo mbw"
    measures = regimes.MEMORY

    def regime(self, params: dict, record: dict, sidecar: dict) -> str | None:
        """Each of mbw's two arrays (one process) against the last-level cache, as STREAM's rule."""
        instance, host, _ = regimes.sidecar_facts(sidecar)
        return regimes.memory_regime(int(params["mib"]) * 1024 * 1024, regimes.llc_bytes(instance, host))

    def parse(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        runs = int(params["runs"]) if params else None
        return parse_mbw(
            text, source, expected_runs=runs, expected_methods=("MEMCPY", "DUMB", "MCBLOCK"), expected_averages=True if params else None
        )

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        return [self._variant(runs=params["runs"], mib=params["array_mib"])]

    def run(self, variant: Variant) -> str:
        p = variant.param_dict
        return f"mbw -n {int(p['runs'])} {int(p['mib'])}"

    def memory_mib(self, variant: Variant) -> int:
        """mbw allocates two arrays of the size given (source and destination of each copy)."""
        return 2 * int(variant.param_dict["mib"])


class StressNg(Benchmark):
    """stress-ng: a CPU and a memory (vm) stressor, bogo ops per second (thesis chapter 6 stressors).

    ``workers`` instances of one stressor for ``seconds`` (``all`` = every core of
    the platform, resolved on the host); the main metric is ``bogo_ops_per_second_real``.
    stress-ng exits 0 with complete looking metrics when stopped by SIGTERM: the
    parser compares the duration with the ``--timeout`` asked for.
    """

    name = "stress_ng"
    parameters = """
        required: [stressors, workers, cpu_method, vm_bytes, seconds]
        properties:
          stressors: {type: array, minItems: 1, uniqueItems: true, items: {enum: [cpu, vm]}}
          workers: {$ref: "#/$defs/counts_or_all"}
          cpu_method: {type: string, pattern: "^[a-z0-9_]+$"}
          vm_bytes: {type: string, pattern: "^[0-9]+[KMG]$"}
          seconds: {type: integer, minimum: 1}
    """
    metric_declaration = ("cpu", """
        add_matrix_ops_per_second        ops/s          higher
        bogo_ops                         bogo-ops       higher
        bogo_ops_per_second_real         bogo-ops/s     higher
        bogo_ops_per_second_usr_sys      bogo-ops/s     higher
        copy_matrix_ops_per_second       ops/s          higher
        cpu_used_per_instance            %              higher
        div_matrix_ops_per_second        ops/s          higher
        frobenius_matrix_ops_per_second  ops/s          higher
        hadamard_matrix_ops_per_second   ops/s          higher
        identity_matrix_ops_per_second   ops/s          higher
        mean_matrix_ops_per_second       ops/s          higher
        memory_read_rate                 MB/s           higher
        memory_write_rate                MB/s           higher
        mflops                           Mflop/s        higher
        mult_matrix_ops_per_second       ops/s          higher
        negate_matrix_ops_per_second     ops/s          higher
        prod_matrix_ops_per_second       ops/s          higher
        read_rate                        MB/s           higher
        read_write_combined_rate         MB/s           higher
        real_time                        s              lower
        rss_max                          KB             lower
        run_time                         s              lower
        square_matrix_ops_per_second     ops/s          higher
        sub_matrix_ops_per_second        ops/s          higher
        sys_time                         s              lower
        trans_matrix_ops_per_second      ops/s          higher
        usr_time                         s              lower
        write_rate                       MB/s           higher
        zero_matrix_ops_per_second       ops/s          higher
    """, "bogo_ops_per_second_real")
    tool = "stress-ng"
    version_command = "stress-ng --version"
    scratch = "instance"  # --temp-path: stressors that write files write them there

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        variants = []
        for stressor in params["stressors"]:
            extra = {"method": params["cpu_method"]} if stressor == "cpu" else {"bytes": params["vm_bytes"]}
            for workers in params["workers"]:
                variants.append(self._variant(stressor=stressor, workers=workers, **extra, seconds=params["seconds"]))
        return variants

    def run(self, variant: Variant) -> str:
        p = variant.param_dict
        workers = threads_arg(p["workers"])
        if p["stressor"] == "cpu":
            what = f"--cpu {workers} --cpu-method {p['method']}"
        else:
            what = f"--vm {workers} --vm-bytes {p['bytes']}"
        return f"stress-ng {what} --timeout {int(p['seconds'])}s --metrics-brief --temp-path {SCRATCH}"

    def parse(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        if params is None:
            return parse_stress_ng(text, source)
        records = parse_stress_ng(text, source, expected_seconds=float(params["seconds"]))
        rates = [r for r in records if r["metric"] == "bogo_ops_per_second_real" and r["stressor"] == params["stressor"]]
        if not rates:
            raise ParseError(source, f"stress-ng log has no metrics row for the {params['stressor']} stressor")
        if params["workers"] != "all" and any(r["instances"] != int(params["workers"]) for r in rates):
            raise ParseError(source, f"stress-ng ran {rates[0]['instances']} {params['stressor']} instances, {params['workers']} were asked for")
        return records
