"""Operational flexibility timings, done by the harness on the host."""

from __future__ import annotations

from ..platforms import catalog as platform_catalog
from ..parsers import parse_lifecycle
from .base import Benchmark, Variant


class Lifecycle(Benchmark):
    """Operational flexibility (thesis Tables 5.1-5.3): provision, boot to SSH, reboot, clone and
    destroy a fresh guest, timed by the harness on the host. Not applicable to ``native``."""

    name = "lifecycle"
    parameters = ""  # only the repetitions
    metric_declaration = ("operations", """
        boot       s              lower
        clone      s              lower
        destroy    s              lower
        provision  s              lower
        reboot     s              lower
    """)
    tool = "virtrepro"
    packages = programs = ()
    version_command = "echo virtrepro lifecycle"
    host_side = True

    def parse(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        return parse_lifecycle(text, source)

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        if platform_catalog.lacks(platform, "lifecycle"):
            return []
        return [self._variant(steps="provision+boot+reboot+clone+destroy")]

    def run(self, variant: Variant) -> str:
        return "(harness) provision, boot, reboot, clone, destroy a fresh guest"
