"""Source builds: benchmarks that no package archive carries are obtained and compiled by the
workflow (a general step: NPB, MITgcm). A benchmark names its build (``Benchmark.build``); this
module maps the name to the module that does it, which provides:

- ``python -m <module> obtain --output PROBE``: find or fetch the source, verify it, and write the
  probe record (``status``: ``available``, or ``skipped`` with the ``reason``), kept with the raw
  data as ``raw/<testbed>/probes/<build>.json`` (a checkpoint: the runs that need the build are
  planned only where it is available);
- ``python -m <module> build --source PROBE``: compile what the configuration wants, writing
  ``manifest_path(config)``;
- ``used(config)``, ``settings(config)`` (what decides the probe), ``wanted(config)`` (what decides
  the build), ``manifest_path(config)``;
- ``built_file(config, relative)``: a built file that a benchmark's uploads name as
  ``@BUILT@/<relative>`` (``benchmarks.BUILT``);
- ``record(config, benchmark)``: what a run's sidecar records of the build (under the build's name);
- ``why_no_runs(data_dir, testbed, benchmark)``: one line for a figure without runs.

Adding a compiled benchmark: its module here (one line in :data:`BUILDS`) and ``build = "<name>"`` in
its benchmark classes; ``workflow/rules/builds.smk`` makes the rules of every build in use.
"""

from __future__ import annotations

from types import ModuleType

from . import mitgcm, npb
from ..benchmarks import BENCHMARKS

BUILDS: dict[str, ModuleType] = {"npb": npb, "mitgcm": mitgcm}


def of(benchmark: str) -> ModuleType | None:
    """The build module of ``benchmark`` (None: it comes from a package)."""
    name = BENCHMARKS[benchmark].build
    return BUILDS[name] if name else None


def used(config: dict) -> dict[str, ModuleType]:
    """The builds the configuration's benchmarks need, by name."""
    return {name: module for name, module in BUILDS.items() if module.used(config)}


def probe_name(build: str) -> str:
    """The probe record's file name under raw/<testbed>/probes/."""
    return f"{build}.json"
