"""Where a number was measured (virtrepro.declarations.regimes): the regime decision, the sizing rules and the claim
gate. Expectations are computed by hand from the rules (bonnie++'s twice-the-memory rule for files,
STREAM's four-times-the-last-level-cache rule for arrays), not by the code under test."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import table_row
from virtrepro.analysis import claims
from virtrepro.declarations import regimes
from virtrepro.benchmarks import BENCHMARKS
from virtrepro.benchmarks.hpc import sized_n


GIB, MIB = 1024**3, 1024**2
# a 24 GiB host with a 32 MiB L3, as the sidecar's facts record it (machines.HOST_FACTS_COMMAND)
HOST = {"mem_total_kb": 24 * 1024 * 1024, "cache_sizes": "L1d=32K L1i=32K L2=1024K L3=32768K"}
CONTAINER = {**HOST, "memory_limit_bytes": 2 * GIB}  # sees the host's MemTotal, capped by its cgroup
GUEST = {"mem_total_kb": 2 * 1024 * 1024, "cache_sizes": "L1d=32K L1i=32K L2=512K L3=16384K"}


def test_facts():
    assert regimes.size_bytes("32768K") == 32 * MIB
    assert regimes.size_bytes("64m") == 64 * MIB and regimes.size_bytes("1g") == GIB
    assert regimes.llc_bytes(HOST) == 32 * MIB
    # a guest told of a 16 MiB L3 runs on the host's 32 MiB one: the larger counts
    assert regimes.llc_bytes(GUEST, HOST) == 32 * MIB
    assert regimes.llc_bytes({}, None) is None
    assert regimes.usable_memory_bytes(HOST) == 24 * GIB
    assert regimes.usable_memory_bytes(CONTAINER) == 2 * GIB
    assert regimes.usable_memory_bytes({"mem_total_kb": 1024, "memory_limit_bytes": 9223372036854771712}) == 1024 * 1024


@pytest.mark.parametrize("file_bytes, direct, instance, host, cache, expected", [
    (64 * MIB, False, HOST, HOST, None, "page-cache"),       # the IOZone: 64 MB on a 24 GiB host
    (48 * GIB, False, HOST, HOST, None, "disk"),             # twice the host's 24 GiB
    (47 * GIB, False, HOST, HOST, None, "page-cache"),       # just under twice
    (1 * GIB, True, HOST, HOST, None, "disk"),               # O_DIRECT on native or a container
    (4 * GIB, False, CONTAINER, CONTAINER, None, "disk"),    # twice the container's 2 GiB limit
    (1 * GIB, True, GUEST, HOST, "none", "disk"),            # VM, O_DIRECT in the guest, QEMU O_DIRECT on the host
    (4 * GIB, False, GUEST, HOST, "none", "disk"),           # twice the guest's 2 GiB, host cache off
    (4 * GIB, False, GUEST, HOST, "writeback", "page-cache"),  # the host's 24 GiB page cache holds it
    (1 * GIB, True, GUEST, None, "writeback", "unknown"),    # the host's memory not recorded (older sidecars)
    (64 * MIB, False, {}, None, None, "unknown"),
])  # fmt: skip
def test_disk_regime(file_bytes, direct, instance, host, cache, expected):
    assert regimes.disk_regime(file_bytes, direct, instance, host, cache) == expected


def test_memory_regime_and_hpcc_array():
    # the numbers: N=1000 on 2 processes, 166,666 elements per array (HPCC's own log line)
    assert int(regimes.hpcc_stream_array_bytes(1000, 2) / 8) == 166_666
    assert int(regimes.hpcc_stream_array_bytes(1000, 4) / 8) == 83_333  # the two-node run's log
    assert regimes.memory_regime(166_666 * 8, 32 * MIB) == "cpu-cache"
    assert regimes.memory_regime(128 * MIB, 32 * MIB) == "memory"  # exactly four times
    assert regimes.memory_regime(128 * MIB - 8, 32 * MIB) == "cpu-cache"
    assert regimes.memory_regime(GIB, None) == "unknown"


@pytest.mark.parametrize("llc, procs, nb", [(32 * MIB, 2, 80), (32 * MIB, 2, 150), (16 * MIB, 12, 150), (512 * 1024, 1, 1)])
def test_hpcc_min_n_is_the_smallest_multiple_of_nb_meeting_streams_rule(llc, procs, nb):
    n = regimes.hpcc_min_n(llc, procs, nb)
    assert n % nb == 0
    # per process, each of the three arrays is N*N*8/procs/3 bytes; at least 4 x LLC, and not at N - NB
    assert n * n * 8 / procs / 3 >= 4 * llc
    assert (n - nb) ** 2 * 8 / procs / 3 < 4 * llc


def test_hpcc_n_from_memory_raised_for_stream_within_memory():
    # 32 MiB LLC, 2 processes, NB 150: STREAM needs N*N >= 3*4*32 MiB*2/8 = 100,663,296 -> N >= 10033 -> 10050
    assert regimes.hpcc_min_n(32 * MIB, 2, 150) == 10050
    two_gib_kb = 2 * 1024 * 1024
    # 45 % of 2 GiB gives N = floor(sqrt(0.45*2 GiB/8)/150)*150 = 10950, already above
    assert sized_n(10950, two_gib_kb, 150, 4, 32 * 1024, 2) == 10950
    # N fixed at 1000 (quick scale) with the rule asked for: raised to 10050 (808 MB of 2 GiB, under 80 %)
    assert sized_n(1000, two_gib_kb, 150, 4, 32 * 1024, 2) == 10050
    # in 1 GiB the 808 MB matrix is 75 %: raised; in 512 MiB (429 MB at 80 %) it would not fit: N stays,
    # and the label will say cpu-cache
    assert sized_n(1000, 1024 * 1024, 150, 4, 32 * 1024, 2) == 10050
    assert sized_n(1000, 512 * 1024, 150, 4, 32 * 1024, 2) == 1000
    # no rule asked for, or no cache size known: N as given
    assert sized_n(1000, two_gib_kb, 150, None, 32 * 1024, 2) == 1000
    assert sized_n(1000, two_gib_kb, 150, 4, 0, 2) == 1000


def sidecar(platform="native", facts=HOST, testbed_host=None, cache=None):
    family = {"native": "native", "lxc": "container", "qemu-tcg": "full-vm"}[platform]
    return {"host": facts, "platform": {"name": platform, "family": family, "spec": {"cache": cache}},
            **({"testbed_host": testbed_host} if testbed_host else {})}  # fmt: skip


def test_benchmarks_label_their_records():
    iozone = BENCHMARKS["iozone"]
    record = {"metric": "read", "file_size_kb": 65536, "o_direct": False}
    assert iozone.measures == "page-cache"  # Walters' own numbers were within the buffer cache
    assert iozone.regime({}, record, sidecar()) == "page-cache"
    disk = BENCHMARKS["iozone_disk"]
    params = {"size": "1g", "record": "1m", "mem": 512, "disk": "qcow2", "cache": "writeback", "direct": True}
    vm = sidecar("qemu-tcg", GUEST, HOST, "writeback")
    assert disk.regime(params, {"metric": "read", "o_direct": True}, vm) == "page-cache"  # host cache holds 1 GiB
    assert disk.regime(params, {"metric": "read", "o_direct": True}, sidecar("qemu-tcg", GUEST, HOST, "none")) == "disk"
    assert "-I" in disk.run(disk.variants({"file_size": "1g", "record_size": "1m", "guest_memory_mb": 512,
                                                "direct": True}, "native")[0])  # fmt: skip
    bonnie = BENCHMARKS["bonnie"]
    params = {"size": "1g", "files": 0, "direct": True}
    assert bonnie.regime(params, {"metric": "put_block"}, sidecar()) == "disk"
    assert bonnie.regime(params, {"metric": "put_block"}, sidecar()) == "disk"
    assert bonnie.regime({**params, "direct": False}, {"metric": "put_block"}, sidecar()) == "page-cache"
    hpcc = BENCHMARKS["hpcc"]
    assert hpcc.regime({}, {"metric": "star_stream_triad", "hpl_n": 1000, "processes": 2}, sidecar()) == "cpu-cache"
    assert hpcc.regime({}, {"metric": "star_stream_triad", "hpl_n": 10050, "processes": 2}, sidecar()) == "memory"
    assert hpcc.regime({}, {"metric": "avg_ping_pong_latency", "hpl_n": 1000, "processes": 2}, sidecar()) is None


def test_bonnie_and_hpcc_variants_keep_their_quick_keys():
    # a parameter only the larger scales set does not change the keys of the committed quick runs
    assert BENCHMARKS["bonnie"].variants({"file_sizes": ["32m"], "num_files": 0})[0].key == "size-32m_files-0"
    assert BENCHMARKS["hpcc"].variants({"procs": "all", "n": 1000, "nb": 80})[0].key == "procs-all_n-1000_nb-80"
    assert "stream-4" in BENCHMARKS["hpcc"].variants({"procs": "all", "memory_fraction": 0.45, "nb": 150,
                                                      "stream_llc_multiple": 4})[0].key  # fmt: skip


def records(platform, values, regime):
    """iozone_disk's records (the paper measured on disk: its declaration's ``measures``)."""
    return [table_row(testbed="t", platform=platform, benchmark="iozone_disk", variant="v", repetition=i,
                      metric="read", unit="kB/s", value=float(v), source_log=f"t/{platform}/iozone_disk/v/rep-{i}.log",
                      regime=regime) for i, v in enumerate(values)]  # fmt: skip


CLAIM = {"id": "x-disk", "paper": "x", "source": "Table I", "published": "p", "testable": True,
         "check": {"kind": "overhead_at_most", "benchmark": "iozone_disk", "metric": "read", "platform": "lxc",
                   "baseline": "native", "threshold": 0.10}}  # fmt: skip


def test_claim_gate():
    # lxc 1 % below native, tight intervals: holds when both were measured on disk
    native, lxc = [99.0, 99.5, 100.0, 100.5, 101.0], [98.0, 98.5, 99.0, 99.5, 100.0]
    on_disk = pd.DataFrame(records("native", native, "disk") + records("lxc", lxc, "disk"))
    assert claims.evaluate_claim(CLAIM, on_disk)["verdict"] == "holds"
    in_cache = pd.DataFrame(records("native", native, "page-cache") + records("lxc", lxc, "disk"))
    row = claims.evaluate_claim(CLAIM, in_cache)
    assert row["verdict"] == "not comparable here"
    assert row["note"].startswith("measured in the page cache, not on disk")
    assert row["verdict"] in claims.VERDICTS
    # a claim that does not hold on cache-resident data is not decided either
    slow = pd.DataFrame(records("native", native, "page-cache") + records("lxc", [49.0, 49.5, 50.0, 50.5, 51.0], "page-cache"))
    assert claims.evaluate_claim(CLAIM, slow)["verdict"] == "not comparable here"
    # not measured stays not measured
    assert claims.evaluate_claim(CLAIM, pd.DataFrame(records("native", native, "page-cache")))["verdict"] == "not measured"


def test_gate_reason():
    assert regimes.gate_reason("holds", ["disk"], ["disk"]) is None
    assert regimes.gate_reason("does not hold", ["memory"], ["cpu-cache"]) == "measured in the CPU caches, not in memory"
    # an interval from cache-resident data straddling a disk claim's threshold says nothing of the disk either
    assert regimes.gate_reason("inconclusive", ["disk"], ["page-cache"]) == "measured in the page cache, not on disk"
    assert regimes.gate_reason("holds", ["page-cache"], ["page-cache"]) is None
    assert regimes.gate_reason("not measured", ["disk"], ["page-cache"]) is None


def test_hpcc_command_sizes_n_as_sized_n(tmp_path):
    """The command's shell (awk) and sized_n, which the parser checks a log against, agree on this machine."""
    import re
    import subprocess

    bench = BENCHMARKS["hpcc"]
    variant = bench.variants({"procs": 2, "n": 1000, "nb": 150, "stream_llc_multiple": 4})[0]
    script = bench.run(variant).replace("@SCRATCH@", str(tmp_path)).split("cat > hpccinf.txt")[0]
    line = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True).stdout
    found = re.search(r"N=(\d+) .* usable_kb=(\d+) llc_kb=(\d+)", line)
    n, usable, llc = map(int, found.groups())
    assert n == sized_n(1000, usable, 150, 4, llc, 2)
