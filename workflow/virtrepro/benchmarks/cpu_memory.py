"""CPU and memory benchmarks: sysbench cpu and memory, mbw."""

from __future__ import annotations

from ..parsers import parse_mbw, parse_sysbench
from .base import Benchmark, Variant, threads_arg


class Sysbench(Benchmark):
    """What every sysbench test shares: the tool, its package and its parser."""

    tool = "sysbench"
    packages = ("sysbench",)
    check_command = "sysbench --version"
    version_command = "sysbench --version"

    @staticmethod
    def parse(text: str, source: str) -> list[dict]:
        return parse_sysbench(text, source)


class SysbenchCpu(Sysbench):
    """sysbench cpu: prime-number verification, events per second (thesis 4.2 CPU overhead)."""

    name = "sysbench_cpu"

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        return [
            self._variant(threads=threads, prime=params["cpu_max_prime"], seconds=params["seconds"])
            for threads in params["threads"]
        ]

    def command(self, variant: Variant) -> str:
        p = variant.param_dict
        return f"sysbench cpu --cpu-max-prime={int(p['prime'])} --threads={threads_arg(p['threads'])} --time={int(p['seconds'])} run"


class SysbenchMemory(Sysbench):
    """sysbench memory: sequential read and write bandwidth (thesis Figs. 4.5-4.7 memory overhead)."""

    name = "sysbench_memory"

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        return [
            self._variant(oper=oper, block=block, total=params["total_size"], threads=threads, seconds=params["seconds"])
            for oper in params["operations"]
            for block in params["block_sizes"]
            for threads in params["threads"]
        ]

    def command(self, variant: Variant) -> str:
        p = variant.param_dict
        return (
            f"sysbench memory --memory-block-size={p['block']} --memory-total-size={p['total']} "
            f"--memory-oper={p['oper']} --memory-access-mode=seq --threads={threads_arg(p['threads'])} "
            f"--time={int(p['seconds'])} run"
        )


class Mbw(Benchmark):
    """mbw: memory copy bandwidth with memcpy, a byte loop and block copies (thesis chapter 4 memory)."""

    name = "mbw"
    tool = "mbw"
    packages = ("mbw",)
    check_command = "command -v mbw"
    version_command = "dpkg-query -W -f='mbw ${Version}' mbw 2>/dev/null || echo mbw"

    @staticmethod
    def parse(text: str, source: str) -> list[dict]:
        return parse_mbw(text, source)

    def parse_run(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        runs = int(params["runs"]) if params else None
        return parse_mbw(text, source, expected_runs=runs, expected_methods=("MEMCPY", "DUMB", "MCBLOCK"))

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        return [self._variant(runs=params["runs"], mib=params["array_mib"])]

    def command(self, variant: Variant) -> str:
        p = variant.param_dict
        return f"mbw -n {int(p['runs'])} {int(p['mib'])}"
