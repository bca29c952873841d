"""What runs: for each benchmark, its variants, its command line, its tools and its parser.

Install (``packages``/``check_command``), run (``command``) and parse
(``parse``) are kept apart so that each can be tested alone. A variant's key is
the directory name of its raw logs and spells out every parameter that changes
the measurement, so runs at different scales never share a directory.
"""

from __future__ import annotations

from .apps import NginxWrk, OpensslSpeed, Pgbench, Pyperformance, Rabbitmq
from .base import HOSTS, SCRATCH, SCRATCH_DIR, Benchmark, Variant, key_spells, peer, size_to_kb, threads_arg
from .cpu_memory import Mbw, StressNg, SysbenchCpu, SysbenchMemory
from .disk import Bonnie, Dd, Fio, Ioping, Iozone, IozoneDisk, SysbenchFileio
from .hpc import Hpcc
from .lifecycle import Lifecycle
from .network import Iperf3, Netperf
from .npb import NpbMpi, NpbOmp, NpbSerial
from .thesis import CpuScaling, Isolation, MemoryScaling

# every benchmark the configuration can name, by name (tests/test_declarations.py: every Benchmark class
# with a name of its own is here, and the schema lists exactly these)
BENCHMARKS: dict[str, Benchmark] = {
    b.name: b
    for b in (
        SysbenchCpu(), SysbenchMemory(), Mbw(), StressNg(),
        Iozone(), IozoneDisk(), SysbenchFileio(), Ioping(), Fio(), Bonnie(), Dd(),
        Hpcc(),
        Netperf(), Iperf3(),
        NpbSerial(), NpbOmp(), NpbMpi(),
        Lifecycle(),
        CpuScaling(), MemoryScaling(), Isolation(),
        NginxWrk(), Pgbench(), Rabbitmq(), Pyperformance(), OpensslSpeed(),
    )
}

# what the benchmarks' commands use in an instance (native: the host; the others: the guest image),
# for virtrepro.packages (no package named: dpkg says which)
INSTANCE_PATHS: dict[str, str | None] = {path: None for b in BENCHMARKS.values() for path in b.programs}

__all__ = ["BENCHMARKS", "HOSTS", "key_spells", "peer", "SCRATCH", "SCRATCH_DIR", "Benchmark", "Variant", "size_to_kb", "threads_arg"]
