"""What runs: for each benchmark, its variants, its command line, its tools and its parser.

Install (``packages``/``check_command``), run (``command``) and parse
(``parse``) are kept apart so that each can be tested alone. A variant's key is
the directory name of its raw logs and spells out every parameter that changes
the measurement, so runs at different scales never share a directory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from .parsers import parse_ioping, parse_iozone, parse_lifecycle, parse_mbw, parse_sysbench

SCRATCH_DIR = "/var/tmp/virtrepro"
# Commands write their files into SCRATCH; measure replaces it with a directory of
# its own per run (under SCRATCH_DIR), created before and removed after the run, so
# that two runs on one host never touch each other's files.
SCRATCH = "@SCRATCH@"


@dataclass(frozen=True)
class Variant:
    benchmark: str
    key: str
    params: tuple = field(default=())  # sorted (name, value) pairs

    @property
    def param_dict(self) -> dict:
        return dict(self.params)


def _size_to_kb(size: str) -> int:
    match = re.fullmatch(r"([0-9]+)([kmg])", size)
    if match is None:
        raise ValueError(f"size {size!r} is not like 64m")
    return int(match.group(1)) * {"k": 1, "m": 1024, "g": 1024 * 1024}[match.group(2)]


class Benchmark:
    name: str
    tool: str
    packages: tuple[str, ...]
    check_command: str
    version_command: str
    parse: Callable[[str, str], list[dict]]
    uses_scratch = False
    host_side = False  # True: the harness itself does the work on the host (no command in a guest)

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        raise NotImplementedError

    def command(self, variant: Variant) -> str:
        raise NotImplementedError

    def guest_overrides(self, variant: Variant) -> dict:
        """Changes to the configured guest spec that this variant needs (disk format, memory...)."""
        return {}

    def parse_run(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        """Parse one run's log, checking it against the run's parameters where the tool's output alone
        cannot show a cut-short run (the number of requests or repetitions asked for)."""
        return self.parse(text, source)

    def _variant(self, **params) -> Variant:
        key = "_".join(f"{name}-{value}" for name, value in params.items())
        return Variant(self.name, key, tuple(sorted(params.items())))


def _threads(value) -> str:
    """sysbench's --threads: a number, or every core of the platform (resolved on the host)."""
    return "$(nproc)" if value == "all" else str(int(value))


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
        return f"sysbench cpu --cpu-max-prime={int(p['prime'])} --threads={_threads(p['threads'])} --time={int(p['seconds'])} run"


class Iozone(Benchmark):
    """IOZone auto mode with a fixed record size over a sweep of file sizes (Walters 2008 Fig. 2)."""

    name = "iozone"
    tool = "iozone"
    packages = ("iozone3",)
    check_command = "command -v iozone"
    version_command = "iozone -v 2>&1 | sed -n 's/.*Version \\$Revision: \\([0-9.]*\\).*/iozone \\1/p'"
    uses_scratch = True
    _TEST_NUMBERS = {"write": 0, "read": 1}

    @staticmethod
    def parse(text: str, source: str) -> list[dict]:
        return parse_iozone(text, source)

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        for size in (params["record_size"], params["min_file_size"], params["max_file_size"]):
            _size_to_kb(size)
        if _size_to_kb(params["min_file_size"]) > _size_to_kb(params["max_file_size"]):
            raise ValueError("iozone: min_file_size is larger than max_file_size")
        tests = "+".join(sorted(params["tests"], key=self._TEST_NUMBERS.__getitem__))
        return [
            self._variant(
                record=params["record_size"],
                sizes=f"{params['min_file_size']}-{params['max_file_size']}",
                tests=tests,
            )
        ]

    def command(self, variant: Variant) -> str:
        p = variant.param_dict
        low, high = p["sizes"].split("-")
        # iozone needs the writer (-i 0) to create the file any other test reads
        numbers = sorted({0} | {self._TEST_NUMBERS[t] for t in p["tests"].split("+")})
        tests = " ".join(f"-i {n}" for n in numbers)
        return f"iozone -a -r {p['record']} -n {low} -g {high} {tests} -f {SCRATCH}/iozone.tmp"


class IozoneDisk(Iozone):
    """IOZone read, random read, write and random write on one file (Regola 2010 Tables I and II).

    On full VMs every disk image format x host cache mode is its own variant,
    each run in a guest with that disk; other platforms have one variant,
    their own file system (``disk-host``). The guest's memory can be set below
    the file size, as Regola did, so the page cache cannot hold the file.
    """

    name = "iozone_disk"
    VM_PLATFORMS = ("qemu-kvm", "qemu-tcg")

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        _size_to_kb(params["file_size"])
        _size_to_kb(params["record_size"])
        common = {"size": params["file_size"], "record": params["record_size"], "mem": params["guest_memory_mb"]}
        if platform in self.VM_PLATFORMS:
            return [
                self._variant(disk=disk, cache=cache, **common)
                for disk in params["disk_formats"]
                for cache in params["cache_modes"]
            ]
        return [self._variant(disk="host", cache="host", **common)]

    def command(self, variant: Variant) -> str:
        p = variant.param_dict
        return f"iozone -s {p['size']} -r {p['record']} -i 0 -i 1 -i 2 -f {SCRATCH}/iozone.tmp"

    def guest_overrides(self, variant: Variant) -> dict:
        p = variant.param_dict
        if p["disk"] == "host":
            return {}
        return {"disk_format": p["disk"], "cache": p["cache"], "memory_mb": int(p["mem"])}


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
            f"--memory-oper={p['oper']} --memory-access-mode=seq --threads={_threads(p['threads'])} "
            f"--time={int(p['seconds'])} run"
        )


class SysbenchFileio(Sysbench):
    """sysbench fileio: sequential and random file I/O (thesis Figs. 4.9-4.10).

    prepare, run and cleanup in one command on the platform's scratch directory;
    the log holds the run's output only, and the command fails if prepare does.
    """

    name = "sysbench_fileio"
    uses_scratch = True

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        return [self._variant(mode=mode, size=params["total_size"], seconds=params["seconds"]) for mode in params["modes"]]

    def command(self, variant: Variant) -> str:
        p = variant.param_dict
        files = f"--file-total-size={p['size']} --file-num=4"
        return (
            f"cd {SCRATCH} && sysbench fileio {files} prepare > /dev/null && "
            f"sysbench fileio {files} --file-test-mode={p['mode']} --time={int(p['seconds'])} run; status=$?; "
            f"sysbench fileio {files} cleanup > /dev/null; exit $status"
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


class Ioping(Benchmark):
    """ioping: disk I/O latency on the platform's file system (thesis chapter 4 disk)."""

    name = "ioping"
    tool = "ioping"
    packages = ("ioping",)
    check_command = "command -v ioping"
    version_command = "ioping -v 2>&1 | head -n 1"
    uses_scratch = True

    @staticmethod
    def parse(text: str, source: str) -> list[dict]:
        return parse_ioping(text, source)

    def parse_run(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        count = int(params["count"]) if params else None
        return parse_ioping(text, source, expected_requests=count)

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        return [self._variant(count=params["count"], interval=params["interval"], direct=params["direct"])]

    def command(self, variant: Variant) -> str:
        p = variant.param_dict
        direct = " -D" if p["direct"] else ""
        return f"ioping -c {int(p['count'])} -i {p['interval']}{direct} {SCRATCH}"


class Lifecycle(Benchmark):
    """Operational flexibility (thesis Tables 5.1-5.3): provision, boot to SSH, reboot, clone and
    destroy a fresh guest, timed by the harness on the host. Not applicable to ``native``."""

    name = "lifecycle"
    tool = "virtrepro"
    packages = ()
    check_command = "true"
    version_command = "echo virtrepro lifecycle"
    host_side = True

    @staticmethod
    def parse(text: str, source: str) -> list[dict]:
        return parse_lifecycle(text, source)

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        if platform == "native":
            return []
        return [self._variant(steps="provision+boot+reboot+clone+destroy")]

    def command(self, variant: Variant) -> str:
        return "(harness) provision, boot, reboot, clone, destroy a fresh guest"


BENCHMARKS: dict[str, Benchmark] = {
    b.name: b
    for b in (SysbenchCpu(), SysbenchMemory(), SysbenchFileio(), Mbw(), Ioping(), Iozone(), IozoneDisk(), Lifecycle())
}
