"""Disk benchmarks: IOZone (Walters, Regola), sysbench fileio and ioping (thesis)."""

from __future__ import annotations

from ..parsers import parse_ioping, parse_iozone
from .base import SCRATCH, Benchmark, Variant, size_to_kb
from .cpu_memory import Sysbench


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
            size_to_kb(size)
        if size_to_kb(params["min_file_size"]) > size_to_kb(params["max_file_size"]):
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
        size_to_kb(params["file_size"])
        size_to_kb(params["record_size"])
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
