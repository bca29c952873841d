"""Where a number was measured: on disk, in the page cache, in memory or in the CPU caches.

A benchmark that means to measure a disk measures the page cache when its file fits in the
cache of a layer on the way (the instance's, and for a VM whose host cache mode is not
``none`` the testbed host's too); one that means to measure memory bandwidth measures the CPU
caches when its arrays are not much larger than the last-level cache. The functions here
decide which, from a run's parameters and the facts its sidecar records (``host``: the
instance as the benchmark saw it; ``testbed_host``: the testbed's host, for guests). They are
pure: the benchmarks call them to label their records (``Benchmark.regime``), and the tidy
table carries the label as its ``regime`` column beside ``measures``, what the paper measured.
docs/methodology.md, "What each benchmark measures at each scale", says which rule applies to
which benchmark.
"""

from __future__ import annotations

import math
import re

DISK, PAGE_CACHE, MEMORY, CPU_CACHE, UNKNOWN = "disk", "page-cache", "memory", "cpu-cache", "unknown"
REGIMES = (DISK, PAGE_CACHE, MEMORY, CPU_CACHE, UNKNOWN)

# A file is on disk only when it is at least this many times every cache on the way (bonnie++'s
# own rule: twice the RAM); STREAM's rule: each array at least four times the last-level cache.
FILE_CACHE_MULTIPLE = 2
STREAM_LLC_MULTIPLE = 4

# How each regime is said in verdicts and figures.
WHERE = {DISK: "on disk", PAGE_CACHE: "in the page cache", MEMORY: "in memory", CPU_CACHE: "in the CPU caches",
         UNKNOWN: "where: not known (the sidecar lacks the memory or cache sizes)"}  # fmt: skip

_SIZE = re.compile(r"^([0-9]+)([KMGT]?)$", re.I)


def size_bytes(text) -> int:
    """``32768K``, ``1024k``, ``64m``, ``1G`` or a plain byte count as bytes."""
    match = _SIZE.match(str(text).strip())
    if match is None:
        raise ValueError(f"size {text!r} is not like 64m")
    return int(match.group(1)) * 1024 ** " KMGT".index((match.group(2) or " ").upper())


def cache_sizes(facts: dict | None) -> dict[str, int]:
    """The CPU caches the facts record (``cache_sizes``: ``L1d=32K L1i=32K L2=1024K L3=32768K``), in bytes."""
    text = (facts or {}).get("cache_sizes") or ""
    out = {}
    for item in str(text).split():
        name, _, size = item.partition("=")
        try:
            out[name] = size_bytes(size)
        except ValueError:
            continue
    return out


def llc_bytes(*facts: dict | None) -> int | None:
    """The largest last-level cache among the given facts (the instance's and the testbed host's:
    a guest's vCPUs run on the host's caches, whatever the guest is told); None when none is recorded."""
    sizes = []
    for one in facts:
        caches = cache_sizes(one)
        unified = {k: v for k, v in caches.items() if not k.endswith(("d", "i"))}
        if unified:
            sizes.append(unified[max(unified, key=lambda k: int(k.lstrip("L") or 0))])
    return max(sizes) if sizes else None


def usable_memory_bytes(facts: dict | None) -> int | None:
    """What the instance's page cache (or a program) may use: MemTotal, or less where a cgroup
    memory limit caps it (a container); None when MemTotal is not recorded."""
    facts = facts or {}
    total = facts.get("mem_total_kb")
    if not isinstance(total, int):
        return None
    usable = total * 1024
    limit = facts.get("memory_limit_bytes")
    if isinstance(limit, int) and 0 < limit < usable:
        usable = limit
    return usable


def sidecar_facts(sidecar: dict) -> tuple[dict, dict | None, str | None]:
    """From a run's sidecar: the instance's facts (``host``), the testbed host's (``testbed_host``,
    recorded for guests; for native and containers the instance's own kernel and caches are the
    host's) and, for a VM, its host cache mode (the guest spec's ``cache``)."""
    instance = sidecar.get("host") if isinstance(sidecar.get("host"), dict) else {}
    platform = sidecar.get("platform") if isinstance(sidecar.get("platform"), dict) else {}
    if platform.get("family") != "full-vm":
        return instance, instance, None
    host = sidecar.get("testbed_host") if isinstance(sidecar.get("testbed_host"), dict) else None
    return instance, host, (platform.get("spec") or {}).get("cache")


def disk_regime(file_bytes: int, direct: bool, instance: dict | None, host: dict | None = None,
                host_cache: str | None = None) -> str:  # fmt: skip
    """``disk`` when every page cache on the way is bypassed (O_DIRECT) or at most half the file,
    else ``page-cache`` (``unknown`` when a cache's size is not recorded).

    The instance's page cache is bypassed by ``direct``; the testbed host's is on the way only for
    a VM whose host cache mode (``host_cache``) is not ``none`` (QEMU opens the image with O_DIRECT
    for ``none``; a container's and native's page cache is the host's, i.e. the instance's)."""
    layers = [] if direct else [instance]
    if host_cache not in (None, "none", "host"):
        layers.append(host)
    for facts in layers:
        usable = usable_memory_bytes(facts)
        if usable is None:
            return UNKNOWN
        if file_bytes < FILE_CACHE_MULTIPLE * usable:
            return PAGE_CACHE
    return DISK


def memory_regime(array_bytes: float, llc: int | None, multiple: float = STREAM_LLC_MULTIPLE) -> str:
    """``memory`` when an array (per process) is at least ``multiple`` x the last-level cache, else
    ``cpu-cache``; ``unknown`` without a cache size."""
    if llc is None:
        return UNKNOWN
    return MEMORY if array_bytes >= multiple * llc else CPU_CACHE


def hpcc_stream_array_bytes(n: int, processes: int) -> float:
    """HPCC sizes STREAM's three arrays (and RandomAccess' table) from HPL's matrix: each process's
    share of the N x N doubles, split in three (N=1000 on 2 processes: 166,666 elements, 1.3 MB)."""
    return n * n * 8 / processes / 3


def hpcc_min_n(llc: int, processes: int, nb: int, multiple: float = STREAM_LLC_MULTIPLE) -> int:
    """The smallest HPL N (a multiple of NB) whose STREAM arrays are each ``multiple`` x ``llc`` bytes
    per process: N*N*8 / processes / 3 >= multiple * llc."""
    n = math.ceil(math.sqrt(3 * multiple * llc * processes / 8) / nb) * nb
    while hpcc_stream_array_bytes(n, processes) < multiple * llc:  # float rounding at the boundary
        n += nb
    return n


# ---------------------------------------------------------------------------
# Claims: a number measured in a cache is not compared with a published disk or memory number
# ---------------------------------------------------------------------------


def mismatch(measures: str, regimes) -> str | None:
    """Why data measured in ``regimes`` cannot stand for a paper's ``measures`` (``disk``,
    ``memory``, ``page-cache``), or None when every record was measured where the paper measured."""
    found = sorted({r for r in regimes if isinstance(r, str) and r} - {measures})
    if not measures or not found:
        return None
    return f"measured {' / '.join(WHERE[r] if r in WHERE else r for r in found)}, not {WHERE.get(measures, measures)}"


def gate_reason(verdict: str, measures, regimes) -> str | None:
    """Why a verdict (``holds`` / ``does not hold`` / ``inconclusive``, also a qualified one) on data
    that was not measured where the paper measured (``measures``: the papers' regimes of the records,
    ``regimes``: ours) answers another question, or None: the claim is then not comparable here
    (:mod:`virtrepro.analysis.conditions`), with this reason."""
    if not verdict.startswith(("holds", "does not hold", "inconclusive")):
        return None
    paper = {m for m in measures if isinstance(m, str) and m}
    why = [w for w in (mismatch(m, regimes) for m in sorted(paper)) if w]
    return "; ".join(why) or None
