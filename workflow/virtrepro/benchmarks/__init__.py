"""What runs: for each benchmark, its declaration (what it needs, its parameters and metrics) and its
stages, prepare / run / parse / cleanup (:class:`base.Benchmark`).

The stages are kept apart so that each can be tested alone; the parser each calls is a pure function of
virtrepro.parsers. A variant's key is the directory name of its raw logs and spells out every parameter
that changes the measurement, so runs at different scales never share a directory.
"""

from __future__ import annotations

import importlib
import pkgutil

from .base import BUILT, HOSTS, SCRATCH, SCRATCH_DIR, Benchmark, Variant, key_spells, peer, size_to_kb, threads_arg

# every module of this package declares benchmarks: importing them all is what registers them
for _module in pkgutil.iter_modules(__path__):
    if not _module.ispkg:
        importlib.import_module(f"{__name__}.{_module.name}")


def _declared(cls: type = Benchmark):
    """Every Benchmark class that has a name of its own (an abstract base, such as Sysbench, has none)."""
    for sub in cls.__subclasses__():
        if "name" in vars(sub):
            yield sub
        yield from _declared(sub)


# every benchmark the configuration can name, by name: a module declares a benchmark by defining its
# class, and nothing else lists it (tests/test_declarations.py: the schema lists exactly these)
BENCHMARKS: dict[str, Benchmark] = {cls.name: cls() for cls in sorted(_declared(), key=lambda c: c.name)}

# what the benchmarks' commands use in an instance (native: the host; the others: the guest image),
# for virtrepro.testbed.packages (no package named: dpkg says which)
INSTANCE_PATHS: dict[str, str | None] = {path: None for b in BENCHMARKS.values() for path in b.programs}

__all__ = ["BENCHMARKS", "BUILT", "HOSTS", "key_spells", "peer", "SCRATCH", "SCRATCH_DIR", "Benchmark", "Variant", "size_to_kb", "threads_arg"]
