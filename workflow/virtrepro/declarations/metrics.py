"""How a benchmark declares its metrics (a leaf module, standard library only).

Each benchmark class declares ``metric_declaration = (subsystem, table, *overview)``: a table line
is ``metric unit direction`` (``higher``, ``lower`` or ``none``: no better side), then optionally
another subsystem than the benchmark's; ``overview`` names the metrics that stand for their
subsystem in the summary's overview of overheads. A metric that two tools of one benchmark report
(isolation) may have two units. :mod:`virtrepro.declarations.metric_catalog` collects the declarations.
"""

from __future__ import annotations

from dataclasses import dataclass

SUBSYSTEMS = ("cpu", "memory", "disk", "network", "hpc", "operations", "isolation", "application", "os")
DIRECTIONS = {"higher": True, "lower": False, "none": None}


@dataclass(frozen=True)
class Metric:
    benchmark: str
    name: str
    unit: str  # alternatives separated by "|"
    higher_is_better: bool | None  # None: no better side (a t-value, a size)
    subsystem: str
    overview: bool = False  # stands for its subsystem in the summary's overview

    def units(self) -> tuple:
        return tuple(self.unit.split("|"))


class UnknownMetric(ValueError):
    pass


def read_declaration(benchmark: str, declaration: tuple) -> dict:
    """A benchmark's ``metric_declaration`` as Metric objects by name; ValueError naming a line
    that cannot be read."""
    subsystem, text, *overview = declaration
    metrics: dict = {}
    for line in filter(str.strip, text.splitlines()):
        name, unit, direction, *rest = line.split()
        if len(rest) > 1 or (rest and rest[0] not in SUBSYSTEMS) or direction not in DIRECTIONS:
            raise ValueError(f"{benchmark}: cannot read the metric line {line.strip()!r}")
        metric = Metric(benchmark, name, unit, DIRECTIONS[direction], rest[0] if rest else subsystem, name in overview)
        if name in metrics:  # one metric from two tools (isolation): the same but for the unit
            earlier = metrics[name]
            if (earlier.higher_is_better, earlier.subsystem) != (metric.higher_is_better, metric.subsystem):
                raise ValueError(f"{benchmark}: metric {name} is declared twice, differently")
            metric = Metric(benchmark, name, f"{earlier.unit}|{unit}", metric.higher_is_better, metric.subsystem,
                            metric.overview)
        metrics[name] = metric
    if set(overview) - set(metrics):
        raise ValueError(f"{benchmark}: overview names undeclared {sorted(set(overview) - set(metrics))}")
    return metrics
