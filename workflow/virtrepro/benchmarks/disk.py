"""Disk benchmarks: IOZone (Walters, Regola), sysbench fileio, ioping, fio and dd (thesis), Bonnie++ (Youseff)."""

from __future__ import annotations

import json
import re

from ..declarations import regimes
from ..platforms import catalog as platform_catalog
from ..parsers import ParseError, TruncatedLogError, parse_bonnie, parse_dd, parse_fio, parse_ioping, parse_iozone
from .base import SCRATCH, Benchmark, Variant, size_to_kb
from .cpu_memory import SYSBENCH_METRICS, Sysbench


def _disk_regime(sidecar: dict, file_bytes: int, direct: bool) -> str:
    """Where a run on a file of ``file_bytes`` was measured, from its sidecar's facts (regimes.disk_regime)."""
    instance, host, host_cache = regimes.sidecar_facts(sidecar)
    return regimes.disk_regime(file_bytes, direct, instance, host, host_cache)


# what fio reports, for each benchmark that runs it (Benchmark.metric_declaration)
FIO_METRICS = """
    bw               KiB/s          higher
    clat_max         us             lower
    clat_mean        us             lower
    clat_min         us             lower
    clat_percentile  us             lower
    clat_stdev       us             lower
    group_bw         KiB/s          higher
    io               KiB            higher
    iops             IOPS           higher
    lat_max          us             lower
    lat_mean         us             lower
    lat_min          us             lower
    lat_stdev        us             lower
    runtime          ms             lower
    slat_max         us             lower
    slat_mean        us             lower
    slat_min         us             lower
    slat_stdev       us             lower
"""


# what IOZone reports, for each benchmark that runs it (Benchmark.metric_declaration)
IOZONE_METRICS = """
    random_read   kB/s           higher
    random_write  kB/s           higher
    read          kB/s           higher
    reread        kB/s           higher
    rewrite       kB/s           higher
    write         kB/s           higher
"""


class Iozone(Benchmark):
    """IOZone auto mode with a fixed record size over a sweep of file sizes (Walters 2008 Fig. 2)."""

    name = "iozone"
    parameters = """
        required: [record_size, min_file_size, max_file_size, tests]
        properties:
          record_size: {$ref: "#/$defs/size"}
          min_file_size: {$ref: "#/$defs/size"}
          max_file_size: {$ref: "#/$defs/size"}
          tests:
            type: array
            minItems: 1
            uniqueItems: true
            items: {type: string, enum: [write, read]}
    """
    metric_declaration = ("disk", IOZONE_METRICS, "read", "write")
    tool = "iozone"
    packages = ("iozone3",)
    version_command = "iozone -v 2>&1 | sed -n 's/.*Version \\$Revision: \\([0-9.]*\\).*/iozone \\1/p'"
    scratch = "instance"
    _TEST_NUMBERS = {"write": 0, "read": 1}
    # Walters 2008: 1-512 MB files on hosts with 2 GB, "well within the buffer cache" (Regola 2010)
    measures = regimes.PAGE_CACHE

    def regime(self, params: dict, record: dict, sidecar: dict) -> str | None:
        if record.get("file_size_kb") is None:
            return None
        return _disk_regime(sidecar, int(record["file_size_kb"]) * 1024, bool(record.get("o_direct")))

    def parse(self, text: str, source: str, params: dict | None = None) -> list[dict]:
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

    def run(self, variant: Variant) -> str:
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
    parameters = """
        required: [file_size, record_size, guest_memory_mb, disk_formats, cache_modes]
        properties:
          file_size: {$ref: "#/$defs/size"}
          record_size: {$ref: "#/$defs/size"}
          guest_memory_mb: {type: integer, minimum: 256}
          direct: {type: boolean, description: "iozone -I: O_DIRECT, past the instance's page cache"}
          disk_formats:
            type: array
            minItems: 1
            uniqueItems: true
            items: {type: string, enum: [raw, qcow2, vmdk]}
          cache_modes:
            type: array
            minItems: 1
            uniqueItems: true
            items: {type: string, enum: [none, writeback, writethrough]}
    """
    measures = regimes.DISK  # Regola 2010: files larger than the guest's memory, up to 32 GB on 24 GB hosts

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        size_to_kb(params["file_size"])
        size_to_kb(params["record_size"])
        common = {"size": params["file_size"], "record": params["record_size"], "mem": params["guest_memory_mb"],
                  **({"direct": True} if params.get("direct") else {})}  # fmt: skip
        if platform_catalog.has(platform, "disk_formats"):
            return [
                self._variant(disk=disk, cache=cache, **common)
                for disk in params["disk_formats"]
                for cache in params["cache_modes"]
            ]
        return [self._variant(disk="host", cache="host", **common)]

    def run(self, variant: Variant) -> str:
        p = variant.param_dict
        direct = " -I" if p.get("direct") else ""  # O_DIRECT: past the instance's page cache
        return f"iozone -s {p['size']} -r {p['record']}{direct} -i 0 -i 1 -i 2 -f {SCRATCH}/iozone.tmp"

    def parse(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        records = parse_iozone(text, source)
        if params and params.get("direct") and not all(r.get("o_direct") for r in records):
            raise ParseError(source, "iozone did not report O_DIRECT, which the run asked for (-I)")
        return records

    def regime(self, params: dict, record: dict, sidecar: dict) -> str | None:
        return _disk_regime(sidecar, size_to_kb(params["size"]) * 1024, bool(record.get("o_direct")))

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
    parameters = """
        required: [modes, total_size, seconds]
        properties:
          modes: {type: array, minItems: 1, uniqueItems: true, items: {enum: [seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw]}}
          total_size: {type: string, pattern: "^[0-9]+[KMG]$"}
          seconds: {type: integer, minimum: 1}
    """
    metric_declaration = ("disk", SYSBENCH_METRICS)
    scratch = "instance"
    measures = regimes.DISK  # thesis Figs. 4.9-4.10: disk I/O

    def regime(self, params: dict, record: dict, sidecar: dict) -> str | None:
        return _disk_regime(sidecar, size_to_kb(params["size"].lower()) * 1024, False)

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        return [self._variant(mode=mode, size=params["total_size"], seconds=params["seconds"]) for mode in params["modes"]]

    def run(self, variant: Variant) -> str:
        p = variant.param_dict
        files = f"--file-total-size={p['size']} --file-num=4"
        return (
            f"cd {SCRATCH} && sysbench fileio {files} prepare > /dev/null && "
            f"sysbench fileio {files} --file-test-mode={p['mode']} --time={int(p['seconds'])} run; status=$?; "
            f"sysbench fileio {files} cleanup > /dev/null; exit $status"
        )

    def expected(self, params: dict) -> dict:
        return {"test": "fileio", "threads": 1, "file_num": 4, "file_total_size_kib": size_to_kb(params["size"].lower()),
                "file_test_mode": params["mode"], "seconds": int(params["seconds"])}


class Ioping(Benchmark):
    """ioping: disk I/O latency on the platform's file system (thesis chapter 4 disk)."""

    name = "ioping"
    parameters = """
        required: [count, interval, direct]
        properties:
          count: {type: integer, minimum: 2}
          interval: {type: string, pattern: "^[0-9]+(ms|us|s)?$"}
          direct: {type: boolean}
    """
    metric_declaration = ("disk", """
        bandwidth            KiB/s          higher
        generated_bandwidth  KiB/s          higher
        generated_iops       IOPS           higher
        iops                 IOPS           higher
        latency_avg          us             lower
        latency_max          us             lower
        latency_mdev         us             lower
        latency_min          us             lower
        requests             requests       higher
        total_time           us             lower
    """)
    tool = "ioping"
    version_command = "ioping -v 2>&1 | head -n 1"
    scratch = "instance"
    measures = regimes.DISK
    WORK_BYTES = 1024 * 1024  # ioping's default working set in a directory (-S 1m)

    def regime(self, params: dict, record: dict, sidecar: dict) -> str | None:
        return _disk_regime(sidecar, self.WORK_BYTES, bool(params["direct"]))

    def parse(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        count = int(params["count"]) if params else None
        return parse_ioping(text, source, expected_requests=count)

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        return [self._variant(count=params["count"], interval=params["interval"], direct=params["direct"])]

    def run(self, variant: Variant) -> str:
        p = variant.param_dict
        direct = " -D" if p["direct"] else ""
        return f"ioping -c {int(p['count'])} -i {p['interval']}{direct} {SCRATCH}"


def _direct_probe(directory: str, wanted: bool) -> str:
    """Shell that sets $direct to 1 if O_DIRECT works in ``directory`` (and is wanted), else 0, and logs it."""
    probe = f"{directory}/.virtrepro-direct-probe"
    test = f"dd if=/dev/zero of={probe} bs=4096 count=1 oflag=direct 2>/dev/null" if wanted else "false"
    return f"if {test}; then direct=1; else direct=0; fi; rm -f {probe}; echo \"virtrepro: direct=$direct\""


_DIRECT_LINE = re.compile(r"^virtrepro: direct=([01])\s*$", re.M)


class Fio(Benchmark):
    """fio: sequential and random read and write, one job per mode (thesis chapter 6 disk I/O stressor).

    One time-based job on a file of ``size`` in the run's scratch directory, with
    O_DIRECT where the file system allows it (the log says ``virtrepro: direct=1|0``,
    and every record carries it as the label ``direct``).
    """

    name = "fio"
    parameters = """
        required: [modes, seq_block_size, rand_block_size, file_size, seconds, direct]
        properties:
          modes: {type: array, minItems: 1, uniqueItems: true, items: {enum: [read, write, randread, randwrite]}}
          seq_block_size: {$ref: "#/$defs/size"}
          rand_block_size: {$ref: "#/$defs/size"}
          file_size: {$ref: "#/$defs/size"}
          seconds: {type: integer, minimum: 1}
          direct: {type: boolean}
    """
    metric_declaration = ("disk", FIO_METRICS, "bw")
    tool = "fio"
    version_command = "fio --version"
    scratch = "instance"
    MODES = {"read": "read", "write": "write", "randread": "read", "randwrite": "write"}
    measures = regimes.DISK  # thesis chapter 6: disk I/O

    def regime(self, params: dict, record: dict, sidecar: dict) -> str | None:
        return _disk_regime(sidecar, size_to_kb(params["size"]) * 1024, bool(record.get("direct")))

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        size_to_kb(params["file_size"])
        variants = []
        for mode in params["modes"]:
            block = params["seq_block_size"] if mode in ("read", "write") else params["rand_block_size"]
            size_to_kb(block)
            variants.append(
                self._variant(mode=mode, bs=block, size=params["file_size"], seconds=params["seconds"], direct=params["direct"])
            )
        return variants

    def run(self, variant: Variant) -> str:
        p = variant.param_dict
        return (
            f"{_direct_probe(SCRATCH, bool(p['direct']))}; "
            f"fio --name={p['mode']} --directory={SCRATCH} --rw={p['mode']} --bs={p['bs']} --size={p['size']} "
            f"--runtime={int(p['seconds'])} --time_based --ioengine=psync --direct=$direct --output-format=json"
        )

    def parse(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        records = parse_fio(text, source)
        if params is None:
            return records
        direct = _DIRECT_LINE.search(text)
        if direct is None:
            raise ParseError(source, "fio log lacks the 'virtrepro: direct=' line: O_DIRECT use unknown")
        # fio parses the JSON after any text; its options show what really ran
        start = next(i for i, line in enumerate(text.splitlines(keepends=True)) if line.strip() == "{")
        data, _ = json.JSONDecoder().raw_decode("".join(text.splitlines(keepends=True)[start:]))
        options = {"rw": params["mode"], "bs": params["bs"], "size": params["size"],
                   "runtime": str(int(params["seconds"])), "direct": direct.group(1)}
        for job in data["jobs"]:
            ran = job.get("job options", {})
            for key, value in options.items():
                if ran.get(key) != value:
                    raise ParseError(source, f"fio job {job.get('jobname')!r} ran {key}={ran.get(key)!r}, not {value!r}")
        direction = self.MODES[params["mode"]]
        runtimes = [r["value"] for r in records if r["metric"] == "runtime" and r["direction"] == direction]
        if not runtimes:
            raise ParseError(source, f"fio {params['mode']} job did no {direction} I/O")
        wanted_ms = int(params["seconds"]) * 1000
        if min(runtimes) < 0.99 * wanted_ms:
            raise TruncatedLogError(source, f"fio ran {min(runtimes):g} ms of the {wanted_ms} ms asked for")
        return [{**r, "direct": direct.group(1) == "1"} for r in records]


class Bonnie(Benchmark):
    """Bonnie++: per-character and block sequential I/O, rewrite and random seeks (Youseff 2006 Fig. 2).

    One file of each configured size in the run's scratch directory; ``-r`` is set to
    half the size so that bonnie++ accepts small files, ``-n`` file-creation tests as
    configured (0 = none, as Youseff's Bonnie had none), results as the CSV line (``-q``).
    ``direct``: ``-D -f``, the block tests past the page cache and no per-character tests
    (a byte-at-a-time write to an O_DIRECT file fails), so ``putc``/``getc`` are not measured.
    """

    name = "bonnie"
    parameters = """
        required: [file_sizes, num_files]
        properties:
          file_sizes: {type: array, minItems: 1, uniqueItems: true, items: {type: string, pattern: "^[0-9]+[mg]$"}}
          num_files: {type: integer, minimum: 0}
          direct: {type: boolean, description: "bonnie++ -D: O_DIRECT for the block tests"}
    """
    metric_declaration = ("disk", """
        get_block           KiB/s          higher
        get_block_cpu       %              lower
        get_block_latency   us             lower
        getc                KiB/s          higher
        getc_cpu            %              lower
        getc_latency        us             lower
        put_block           KiB/s          higher
        put_block_cpu       %              lower
        put_block_latency   us             lower
        putc                KiB/s          higher
        putc_cpu            %              lower
        putc_latency        us             lower
        ran_create          files/s        higher
        ran_create_cpu      %              lower
        ran_create_latency  us             lower
        ran_del             files/s        higher
        ran_del_cpu         %              lower
        ran_del_latency     us             lower
        ran_stat            files/s        higher
        ran_stat_cpu        %              lower
        ran_stat_latency    us             lower
        rewrite             KiB/s          higher
        rewrite_cpu         %              lower
        rewrite_latency     us             lower
        seeks               seeks/s        higher
        seeks_cpu           %              lower
        seeks_latency       us             lower
        seq_create          files/s        higher
        seq_create_cpu      %              lower
        seq_create_latency  us             lower
        seq_del             files/s        higher
        seq_del_cpu         %              lower
        seq_del_latency     us             lower
        seq_stat            files/s        higher
        seq_stat_cpu        %              lower
        seq_stat_latency    us             lower
    """, "get_block", "put_block")
    tool = "bonnie++"
    version_command = "bonnie++ 2>&1 | sed -n 's/^Version: */bonnie++ /p' | head -n 1"
    scratch = "instance"
    measures = regimes.DISK  # Youseff 2006: file sizes chosen "to eliminate any cache impact"

    def regime(self, params: dict, record: dict, sidecar: dict) -> str | None:
        return _disk_regime(sidecar, size_to_kb(params["size"]) * 1024, bool(params.get("direct")))

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        variants = []
        for size in params["file_sizes"]:
            if size_to_kb(size) < 2 * 1024:
                raise ValueError(f"bonnie: file size {size} is below 2m")
            variants.append(self._variant(size=size, files=params["num_files"], **({"direct": True} if params.get("direct") else {})))
        return variants

    def run(self, variant: Variant) -> str:
        p = variant.param_dict
        mib = size_to_kb(p["size"]) // 1024
        # -D: O_DIRECT for the block tests. -f: no per-character tests, which cannot run on an
        # O_DIRECT file (bonnie++ -D without -f stops with "Can't write() - disk full?").
        direct = " -D -f" if p.get("direct") else ""
        # -u: as whom it runs (root must name one); the instance's own user, root almost everywhere and
        # an unprivileged one in an unprivileged container, which may not switch to root
        return (f"bonnie++ -d {SCRATCH} -s {mib} -r {mib // 2} -n {int(p['files'])}{direct} "
                "-u \"$(id -u):$(id -g)\" -m virtrepro -q -x 1")

    def parse(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        records = parse_bonnie(text, source, expected_runs=1 if params else None)
        if params is None:
            return records
        if params.get("direct") and any(r["metric"] in ("putc", "getc") for r in records):
            raise ParseError(source, "bonnie++ ran per-character tests, which -D -f leaves out (not the command asked for)")
        wanted = size_to_kb(params["size"])
        for size in {r["file_size"] for r in records}:
            if not size or size_to_kb(size.lower()) != wanted:
                raise ParseError(source, f"bonnie++ used a {size} file, {params['size']} was asked for")
        return records


class Dd(Benchmark):
    """dd disk copy: write a file with fdatasync, then read it back past the page cache (thesis Fig. 4.11).

    The read uses O_DIRECT where the file system allows it, else the page cache is
    dropped where the instance may (root, writable /proc/sys); the log says which
    (``virtrepro: dd read page cache: direct|dropped|cached``) and so does the label ``read_cache``.
    """

    name = "dd"
    parameters = """
        required: [size_mib]
        properties:
          size_mib: {type: integer, minimum: 1}
    """
    metric_declaration = ("disk", """
        throughput  MB/s           higher
    """)
    tool = "dd"
    packages = ("coreutils",)
    version_command = "dd --version | head -n 1"
    scratch = "instance"
    measures = regimes.DISK  # thesis Fig. 4.11: disk copy
    _CACHE_LINE = re.compile(r"^virtrepro: dd read page cache: (direct|dropped|cached)\s*$", re.M)

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        return [self._variant(bs="1M", count=int(params["size_mib"]))]

    def regime(self, params: dict, record: dict, sidecar: dict) -> str | None:
        """The write is timed with its fdatasync; the read past the instance's cache when direct or dropped."""
        past = record.get("op") == "write" or record.get("read_cache") in ("direct", "dropped")
        return _disk_regime(sidecar, int(params["count"]) * size_to_kb(params["bs"].lower()) * 1024, past)

    def run(self, variant: Variant) -> str:
        p = variant.param_dict
        image = f"{SCRATCH}/dd.img"
        return (
            f"export LC_ALL=C; dd if=/dev/zero of={image} bs={p['bs']} count={int(p['count'])} conv=fdatasync || exit $?; "
            f"if dd if={image} of=/dev/null bs={p['bs']} count=1 iflag=direct 2>/dev/null; then cache=direct; flag=iflag=direct; "
            "elif sync && { echo 3 > /proc/sys/vm/drop_caches; } 2>/dev/null; then cache=dropped; flag=; "
            "else cache=cached; flag=; fi; "
            'echo "virtrepro: dd read page cache: $cache"; '
            f"dd if={image} of=/dev/null bs={p['bs']} $flag"
        )

    def parse(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        shell = re.search(r"^(?:sh|dash|bash)(?:: \d+)?: .*$", text, re.M)
        if shell:
            raise ParseError(source, f"the dd command failed in the shell: {shell.group(0)}")
        if params is None:
            return parse_dd(text, source)
        size = int(params["count"]) * size_to_kb(params["bs"].lower()) * 1024
        records = parse_dd(text, source, expected_bytes=[size, size])
        cache = self._CACHE_LINE.search(text)
        if cache is None:
            raise TruncatedLogError(source, "dd log lacks the 'virtrepro: dd read page cache:' line between write and read")
        ops = ({"op": "write"}, {"op": "read", "read_cache": cache.group(1)})
        return [{**r, **ops[r["copy"]]} for r in records]
