"""Every metric, by benchmark: what each benchmark class declares (``metric_declaration``, read by
:mod:`virtrepro.declarations.metrics`) and, for the direction of the papers' own numbers, what the papers report
that no benchmark of ours measures. The claims' direction of a metric and the summary's overview read
it; ``tests/test_declarations.py`` checks it against the parsers, the committed tables and the
papers' numbers. An undeclared metric is an error (:class:`UnknownMetric`) wherever a metric is
looked up, never a silent drop.
"""

from __future__ import annotations

from ..benchmarks import BENCHMARKS
from .metrics import SUBSYSTEMS, Metric, UnknownMetric, read_declaration

__all__ = ["METRICS", "PUBLISHED", "SUBSYSTEMS", "Metric", "UnknownMetric", "higher_is_better", "metric", "metrics",
           "overview", "require_declared"]

# what the papers report that no benchmark of ours measures (their benchmarks or their derived
# numbers): read for the direction of a published number only
_PUBLISHED = {
    "guest_clock": ("operations", """
        clock_skew                        min/day        none
    """),
    "hpcc": ("hpc", """
        performance                       %              higher
        single_stream                     MB/s|%         higher memory
        single_stream_t_value             1              none   memory
    """),
    "hpcc_npb": ("hpc", """
        performance                       %              higher
    """),
    "mit_gcm": ("hpc", """
        file_size                         MB             none   disk
        io_volume                         MB             none   disk
        write_size                        bytes          none   disk
    """),
    "netperf": ("network", """
        performance                       %              higher
        size_at_max_throughput            bytes          none
        size_matching_other_host_kernels  bytes          none
        size_outperforming_others_up_to   bytes          none
    """),
    "npb_mpi": ("hpc", """
        mops_total_stddev                 Mop/s          lower
        time_stddev                       s              lower
    """),
    "osu_bw": ("hpc", """
        bandwidth                         MB/s           higher
    """),
    "osu_latency": ("hpc", """
        latency                           us             lower
    """),
    "spec_mpi2007": ("hpc", """
        performance                       %              higher
    """),
}


# benchmark -> metric name -> Metric
METRICS: dict = {name: benchmark.metrics for name, benchmark in BENCHMARKS.items()}
PUBLISHED: dict = {name: read_declaration(name, declaration) for name, declaration in _PUBLISHED.items()}


def metrics(benchmark: str) -> dict:
    """The metrics ``benchmark`` (one of ours) declares, by name."""
    try:
        return METRICS[benchmark]
    except KeyError:
        raise UnknownMetric(f"benchmark {benchmark!r} declares no metrics (virtrepro.benchmarks)") from None


def metric(benchmark: str, name: str) -> Metric:
    """The declaration of ``benchmark``'s metric ``name`` (ours, else a paper's); UnknownMetric if neither."""
    for table in (METRICS, PUBLISHED):
        if name in table.get(benchmark, {}):
            return table[benchmark][name]
    raise UnknownMetric(f"metric {name!r} of benchmark {benchmark!r} is declared neither by that benchmark's class (metric_declaration) nor in virtrepro/declarations/metric_catalog.py (a paper's)")


def higher_is_better(name: str, benchmark: str | None = None) -> bool:
    """Whether a larger value of metric ``name`` is better. Without ``benchmark`` (or for a benchmark
    nobody declares: a hand-made claim), every declaration of that name must agree. UnknownMetric for
    an undeclared metric or one with no better side."""
    if benchmark in METRICS or benchmark in PUBLISHED:
        found = {metric(benchmark, name).higher_is_better}
    else:
        found = {m.higher_is_better for table in (METRICS, PUBLISHED) for b in table.values() for m in b.values()
                 if m.name == name}
        if not found:
            raise UnknownMetric(f"no benchmark declares a metric {name!r} (virtrepro.benchmarks, virtrepro/declarations/metric_catalog.py)")
    if found == {None}:
        raise UnknownMetric(f"metric {name!r} has no better direction (virtrepro.benchmarks, virtrepro/declarations/metric_catalog.py)")
    if len(found) > 1:
        raise UnknownMetric(f"metric {name!r} is better higher in one benchmark and lower in another: name the benchmark")
    return found.pop()


def overview() -> dict:
    """(benchmark, metric) -> subsystem of the metrics that stand for their subsystem in the summary."""
    return {(m.benchmark, m.name): m.subsystem for b in METRICS.values() for m in b.values() if m.overview}


def require_declared(pairs) -> None:
    """Raise UnknownMetric naming every (benchmark, metric) in ``pairs`` that no declaration covers."""
    unknown = sorted({(b, m) for b, m in pairs if m not in METRICS.get(b, {}) and m not in PUBLISHED.get(b, {})})
    if unknown:
        raise UnknownMetric(f"{len(unknown)} metrics are not declared (benchmarks' metric_declaration, virtrepro/declarations/metric_catalog.py): "
                            + ", ".join(f"{b} {m}" for b, m in unknown[:10]))
