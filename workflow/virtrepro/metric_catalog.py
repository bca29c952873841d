"""The benchmarks' metrics as plain data: for each benchmark every metric its parser reports, with
its unit, which direction is better and the subsystem it measures; the one place for these (the
claims' direction of a metric and the summary's overview read it; ``tests/test_declarations.py``
checks it against the benchmarks, the committed tables and the papers' numbers).

A leaf module (standard library only) below ``claims`` and ``results`` in the import order; each
``Benchmark`` reads its own entry (``Benchmark.metrics``). An undeclared metric is an error
(:class:`UnknownMetric`) wherever a metric is looked up, never a silent drop.

Each entry is ``benchmark: (subsystem, table, *overview)``; a table line is ``metric unit
direction`` (``higher``, ``lower`` or ``none``: no better side), then optionally another subsystem
than the benchmark's. ``overview`` names the metrics that stand for their subsystem in the summary's
overview of overheads. A metric that two tools of one benchmark report (isolation) may have
two units.
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


# what one tool reports, shared by the benchmarks that run it
_SYSBENCH = """
    events_per_second      events/s       higher
    fsyncs_per_second      ops/s          higher
    latency_avg            ms             lower
    latency_max            ms             lower
    latency_p95            ms             lower
    latency_p99            ms             lower
    operations_per_second  ops/s          higher
    read_throughput        MiB/s          higher
    reads_per_second       ops/s          higher
    throughput             MiB/s          higher
    total_events           events         higher
    total_time             s              lower
    write_throughput       MiB/s          higher
    writes_per_second      ops/s          higher
"""
_FIO = """
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
_IPERF3 = """
    cpu_utilization_host    %              lower
    cpu_utilization_remote  %              lower
    jitter                  ms             lower
    loss                    %              lower
    lost_datagrams          datagrams      lower
    retransmits             segments       lower
    throughput              Mbit/s         higher
    total_datagrams         datagrams      higher
    transfer                bytes          higher
"""
_IOZONE = """
    random_read   kB/s           higher
    random_write  kB/s           higher
    read          kB/s           higher
    reread        kB/s           higher
    rewrite       kB/s           higher
    write         kB/s           higher
"""

_MEASURED = {
    "sysbench_cpu": ("cpu", _SYSBENCH, "events_per_second"),
    "sysbench_memory": ("memory", _SYSBENCH, "throughput"),
    "mbw": ("memory", """
        copy_bandwidth      MiB/s          higher
        copy_bandwidth_avg  MiB/s          higher
        elapsed             s              lower
        elapsed_avg         s              lower
    """, "copy_bandwidth_avg"),
    "lmbench": ("os", """
        context_switch    us             lower
        memory_bandwidth  MB/s           higher memory
        memory_latency    ns             lower  memory
        syscall_latency   us             lower
    """),
    "stress_ng": ("cpu", """
        add_matrix_ops_per_second        ops/s          higher
        bogo_ops                         bogo-ops       higher
        bogo_ops_per_second_real         bogo-ops/s     higher
        bogo_ops_per_second_usr_sys      bogo-ops/s     higher
        copy_matrix_ops_per_second       ops/s          higher
        cpu_used_per_instance            %              higher
        div_matrix_ops_per_second        ops/s          higher
        frobenius_matrix_ops_per_second  ops/s          higher
        hadamard_matrix_ops_per_second   ops/s          higher
        identity_matrix_ops_per_second   ops/s          higher
        mean_matrix_ops_per_second       ops/s          higher
        memory_read_rate                 MB/s           higher
        memory_write_rate                MB/s           higher
        mflops                           Mflop/s        higher
        mult_matrix_ops_per_second       ops/s          higher
        negate_matrix_ops_per_second     ops/s          higher
        prod_matrix_ops_per_second       ops/s          higher
        read_rate                        MB/s           higher
        read_write_combined_rate         MB/s           higher
        real_time                        s              lower
        rss_max                          KB             lower
        run_time                         s              lower
        square_matrix_ops_per_second     ops/s          higher
        sub_matrix_ops_per_second        ops/s          higher
        sys_time                         s              lower
        trans_matrix_ops_per_second      ops/s          higher
        usr_time                         s              lower
        write_rate                       MB/s           higher
        zero_matrix_ops_per_second       ops/s          higher
    """, "bogo_ops_per_second_real"),
    "iozone": ("disk", _IOZONE, "read", "write"),
    "iozone_disk": ("disk", _IOZONE, "read", "write"),
    "sysbench_fileio": ("disk", _SYSBENCH),
    "ioping": ("disk", """
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
    """),
    "fio": ("disk", _FIO, "bw"),
    "bonnie": ("disk", """
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
    """, "get_block", "put_block"),
    "dd": ("disk", """
        throughput  MB/s           higher
    """),
    "hpcc": ("hpc", """
        avg_ping_pong_bandwidth           GB/s           higher
        avg_ping_pong_latency             us             lower
        hpl_gflops                        Gflop/s        higher cpu
        hpl_tflops                        Tflop/s        higher cpu
        hpl_time                          s              lower cpu
        max_ping_pong_bandwidth           GB/s           higher
        max_ping_pong_latency             us             lower
        min_ping_pong_bandwidth           GB/s           higher
        min_ping_pong_latency             us             lower
        mpi_fft                           Gflop/s        higher
        mpi_random_access                 GUP/s          higher
        mpi_random_access_lcg             GUP/s          higher
        naturally_ordered_ring_bandwidth  GB/s           higher
        naturally_ordered_ring_latency    us             lower
        ptrans                            GB/s           higher
        ptrans_time                       s              lower
        randomly_ordered_ring_bandwidth   GB/s           higher
        randomly_ordered_ring_latency     us             lower
        single_dgemm                      Gflop/s        higher cpu
        single_fft                        Gflop/s        higher cpu
        single_random_access              GUP/s          higher memory
        single_random_access_lcg          GUP/s          higher memory
        single_stream_add                 GB/s           higher memory
        single_stream_copy                GB/s           higher memory
        single_stream_scale               GB/s           higher memory
        single_stream_triad               GB/s           higher memory
        star_dgemm                        Gflop/s        higher cpu
        star_fft                          Gflop/s        higher cpu
        star_random_access                GUP/s          higher memory
        star_random_access_lcg            GUP/s          higher memory
        star_stream_add                   GB/s           higher memory
        star_stream_copy                  GB/s           higher memory
        star_stream_scale                 GB/s           higher memory
        star_stream_triad                 GB/s           higher memory
    """, "avg_ping_pong_latency", "hpl_gflops", "mpi_random_access", "single_stream_triad", "star_random_access"),
    "netperf": ("network", """
        half_round_trip_latency  us             lower
        round_trip_latency       us             lower
        rtt_latency_mean         us             lower
        rtt_latency_p50          us             lower
        rtt_latency_p99          us             lower
        rtt_latency_stddev       us             lower
        throughput               Mbit/s         higher
        transaction_rate         trans/s        higher
    """, "half_round_trip_latency", "throughput"),
    "iperf3": ("network", _IPERF3, "throughput"),
    "npb_serial": ("cpu", """
        mops_per_process  Mop/s          higher
        mops_per_thread   Mop/s          higher
        mops_total        Mop/s          higher
        time              s              lower
    """, "time"),
    "npb_omp": ("cpu", """
        mops_per_process  Mop/s          higher
        mops_per_thread   Mop/s          higher
        mops_total        Mop/s          higher
        parallel_speedup  1              higher
        time              s              lower
    """, "time"),
    "npb_mpi": ("hpc", """
        mops_per_process  Mop/s          higher
        mops_per_thread   Mop/s          higher
        mops_total        Mop/s          higher
        parallel_speedup  1              higher
        time              s              lower
    """, "time"),
    "lifecycle": ("operations", """
        boot       s              lower
        clone      s              lower
        destroy    s              lower
        provision  s              lower
        reboot     s              lower
    """),
    "cpu_scaling": ("cpu", _SYSBENCH),
    "memory_scaling": ("memory", _SYSBENCH),
    "isolation": ("isolation", _SYSBENCH + _FIO + _IPERF3 + """
        cpu_isolation_efficiency      1              higher
        disk_io_isolation_efficiency  1              higher
        isolation_efficiency          1              higher
        memory_isolation_efficiency   1              higher
        network_isolation_efficiency  1              higher
    """),
    "nginx_wrk": ("application", """
        latency_avg     ms             lower
        latency_max     ms             lower
        latency_p50     ms             lower
        latency_p75     ms             lower
        latency_p90     ms             lower
        latency_p99     ms             lower
        requests        requests       higher
        requests_per_s  requests/s     higher
        transfer        MiB/s          higher
    """),
    "pgbench": ("application", """
        latency_avg   ms             lower
        tps           transactions/s higher
        transactions  transactions   higher
    """),
    "rabbitmq": ("application", """
        latency_mean    ms             lower
        latency_p50     ms             lower
        latency_p95     ms             lower
        latency_p99     ms             lower
        messages_per_s  messages/s     higher
    """),
    "pyperformance": ("application", """
        time        s              lower
        time_stdev  s              lower
    """),
    "openssl_speed": ("cpu", """
        sign_per_s    operations/s   higher
        throughput    kB/s           higher
        verify_per_s  operations/s   higher
    """),
}

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
    "mit_gcm": ("application", """
        time                              s              lower
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


def _read(declared: dict) -> dict:
    out = {}
    for benchmark, (subsystem, text, *overview) in declared.items():
        metrics = out.setdefault(benchmark, {})
        for line in filter(str.strip, text.splitlines()):
            name, unit, direction, *rest = line.split()
            if len(rest) > 1 or (rest and rest[0] not in SUBSYSTEMS) or direction not in DIRECTIONS:
                raise ValueError(f"metric_catalog: {benchmark}: cannot read {line.strip()!r}")
            metric = Metric(benchmark, name, unit, DIRECTIONS[direction], rest[0] if rest else subsystem, name in overview)
            if name in metrics:  # one metric from two tools (isolation): the same but for the unit
                earlier = metrics[name]
                if (earlier.higher_is_better, earlier.subsystem) != (metric.higher_is_better, metric.subsystem):
                    raise ValueError(f"metric_catalog: {benchmark} {name} is declared twice, differently")
                metric = Metric(benchmark, name, f"{earlier.unit}|{unit}", metric.higher_is_better, metric.subsystem,
                                metric.overview)
            metrics[name] = metric
        if set(overview) - set(metrics):
            raise ValueError(f"metric_catalog: {benchmark}: overview names undeclared {sorted(set(overview) - set(metrics))}")
    return out


METRICS: dict = _read(_MEASURED)  # benchmark -> metric name -> Metric
PUBLISHED: dict = _read(_PUBLISHED)


def metrics(benchmark: str) -> dict:
    """The metrics ``benchmark`` (one of ours) declares, by name."""
    try:
        return METRICS[benchmark]
    except KeyError:
        raise UnknownMetric(f"benchmark {benchmark!r} declares no metrics (metric_catalog)") from None


def metric(benchmark: str, name: str) -> Metric:
    """The declaration of ``benchmark``'s metric ``name`` (ours, else a paper's); UnknownMetric if neither."""
    for table in (METRICS, PUBLISHED):
        if name in table.get(benchmark, {}):
            return table[benchmark][name]
    raise UnknownMetric(f"metric {name!r} of benchmark {benchmark!r} is not declared in virtrepro/metric_catalog.py")


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
            raise UnknownMetric(f"no benchmark declares a metric {name!r} (virtrepro/metric_catalog.py)")
    if found == {None}:
        raise UnknownMetric(f"metric {name!r} has no better direction (virtrepro/metric_catalog.py)")
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
        raise UnknownMetric(f"{len(unknown)} metrics are not declared in virtrepro/metric_catalog.py: "
                            + ", ".join(f"{b} {m}" for b, m in unknown[:10]))
