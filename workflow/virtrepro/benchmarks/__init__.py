"""What runs: for each benchmark, its variants, its command line, its tools and its parser.

Install (``packages``/``check_command``), run (``command``) and parse
(``parse``) are kept apart so that each can be tested alone. A variant's key is
the directory name of its raw logs and spells out every parameter that changes
the measurement, so runs at different scales never share a directory.
"""

from __future__ import annotations

from .base import HOSTS, SCRATCH, SCRATCH_DIR, Benchmark, Variant, peer, size_to_kb, threads_arg
from .cpu_memory import Mbw, SysbenchCpu, SysbenchMemory
from .disk import Ioping, Iozone, IozoneDisk, SysbenchFileio
from .lifecycle import Lifecycle
from .network import Iperf3, Netperf

# every benchmark the configuration can name, by name (each module adds its own here)
BENCHMARKS: dict[str, Benchmark] = {
    b.name: b
    for b in (
        SysbenchCpu(), SysbenchMemory(), Mbw(),
        Iozone(), IozoneDisk(), SysbenchFileio(), Ioping(),
        Netperf(), Iperf3(),
        Lifecycle(),
    )
}

__all__ = ["BENCHMARKS", "HOSTS", "peer", "SCRATCH", "SCRATCH_DIR", "Benchmark", "Variant", "size_to_kb", "threads_arg"]
