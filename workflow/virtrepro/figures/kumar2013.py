"""Kumar 2013, Virtualizing Intelligent River (thesis): CPU, network, disk, applications, operational
flexibility, the vCPU and memory scenarios and isolation."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..report import plotting
from .. import results
from .registry import Drawn, figure, get
from .common import (NO_INTERVAL_MARK, OVERHEAD, baseline_first, platform_order, ci_label, compare, comparable, counted, footnote,
                     no_comparison, no_interval_text, note_below, one_legend, panels, ratio_rows, short_label, summarize)

PAPER = "kumar2013"


def _primes(runs: pd.DataFrame) -> str:
    """" (prime 20000)": the sysbench cpu workload of ``runs`` (its ``cpu-max-prime``), as their variants say."""
    primes = sorted(set(runs["param_prime"].dropna().astype(int))) if "param_prime" in runs.columns else []
    return f" (prime {', '.join(map(str, primes))})" if primes else ""


def _vs_baseline(ax, s, label: str) -> None:
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_ylabel(f"{label} relative to {s.baseline} ({s.confidence:.0%} CI)")


@figure(PAPER, "fig4-cpu-overhead", title="Kumar 2013 thesis Figs. 4.1-4.4", benchmarks=["sysbench_cpu"],
        claims=["kumar2013-cpu-*"],
        caption='sysbench CPU events per second per platform with one thread and with every core, median with its'
                ' order-statistic interval.')
def cpu_overhead(table, s) -> Drawn:
    cpu = results.view(table, "sysbench_cpu", metric="events_per_second")
    summary = summarize(cpu, ["platform", "threads"], s)
    fig, ax = plt.subplots(figsize=(7, 4))
    if summary.empty:
        plotting.unavailable(ax, f"no sysbench cpu runs on testbed {s.testbed!r}")
    else:
        shown = summary.assign(x=counted(summary["threads"], "thread"))
        plotting.grouped_bars(ax, shown, "x", "median", "ci_low", "ci_high", hue_order=baseline_first(summary["platform"], s.baseline),
                              order=counted(sorted(summary["threads"].unique()), "thread"),
                              points=cpu.assign(x=counted(cpu["threads"], "thread"), median=cpu["value"]))
        ax.set_ylabel("sysbench cpu events/s")
        ax.legend(title="platform")
    # which benchmark: fig4-1-4-4-cpu-vcpus draws the same thesis figures from cpu_scaling
    ax.set_title(f"sysbench cpu{_primes(cpu)}, one thread and every core, per platform (thesis Figs. 4.1-4.4)\n"
                 f"on testbed {s.testbed!r}; bars: {ci_label(s, dagger=False)}", fontsize="medium")
    if not summary.empty:
        fig.tight_layout()
        note_below(fig, no_interval_text(summary, "ci_low", "ci_high", "median"))
    compared = compare(cpu, s, ["threads"])
    return Drawn(fig, {"events per second": summary[["platform", "threads", "n", "median", "ci_low", "ci_high"]],
                       f"overhead vs {s.baseline} (%)": compared[["threads"] + OVERHEAD]}, digits=1)


@figure(PAPER, "fig4-8-network-bandwidth", title="Kumar 2013 thesis Fig. 4.8", benchmarks=["iperf3"],
        claims=[], caption='iperf3 TCP bandwidth between two instances of each platform (receiver side), median with its '
                'order-statistic interval.')
def network(table, s) -> Drawn:
    net = results.view(table, "iperf3", metric="throughput")
    net = net[net["side"] == "receiver"] if "side" in net.columns else net
    fig, ax = plt.subplots(figsize=(7, 4))
    if net.empty:
        plotting.unavailable(ax, f"no iperf3 runs on testbed {s.testbed!r}")
    else:
        summary = summarize(net, ["platform", "num_streams"], s)
        shown = summary.assign(x=counted(summary["num_streams"], "TCP stream"))
        # the shared bars: a bar without its interval is marked (NO_INTERVAL_MARK) and the note below says why
        plotting.grouped_bars(ax, shown, "x", "median", "ci_low", "ci_high", order=counted(sorted(set(shown["num_streams"])), "TCP stream"),
                              hue_order=baseline_first(summary["platform"], s.baseline), no_interval=NO_INTERVAL_MARK)
        ax.set_ylabel(f"iperf3 TCP throughput (Mbit/s),\n{ci_label(s, dagger=False)}")
        ax.legend(title="platform", fontsize="small")
    ax.set_title(f"Network bandwidth per platform (thesis Fig. 4.8) on testbed {s.testbed!r}")
    if not net.empty:  # what the mark over a bar means, under the panel
        note_below(fig, no_interval_text(summary, "ci_low", "ci_high", "median"))
    return Drawn(fig, {f"overhead vs {s.baseline} (%)": compare(net, s, ["num_streams"])[["num_streams"] + OVERHEAD]},
                 digits=1)


def disk_panels(table) -> list[tuple[str, str, pd.DataFrame]]:
    """(figure, title, records with an ``operation``) of thesis Figs. 4.9-4.11."""
    fileio = results.view(table, "sysbench_fileio")

    def rows(mode, metric, operation):
        return fileio[(fileio["param_mode"] == mode) & (fileio["metric"] == metric)].assign(operation=operation)

    dd = results.view(table, "dd", metric="throughput")
    return [
        ("4.9", "sysbench fileio, sequential", pd.concat([rows("seqrd", "read_throughput", "read"),
                                                          rows("seqwr", "write_throughput", "write")]) if len(fileio) else fileio),
        ("4.10", "sysbench fileio, random", pd.concat([rows("rndrw", "read_throughput", "random read"),
                                                       rows("rndrw", "write_throughput", "random write")]) if len(fileio) else fileio),
        ("4.11", "copy with dd", dd.assign(operation=dd["op"] if "op" in dd.columns else "copy")),
    ]


def where_measured(records: pd.DataFrame) -> str:
    """Where ``records`` were measured, in words (their ``regime``: virtrepro.declarations.regimes.WHERE), "" if unrecorded."""
    from ..declarations.regimes import WHERE

    found = [r for r in dict.fromkeys(records["regime"].dropna()) if r] if "regime" in records.columns else []
    return " / ".join(WHERE.get(r, r) for r in found)


@figure(PAPER, "fig4-9-to-4-11-disk", title="Kumar 2013 thesis Figs. 4.9-4.11", benchmarks=["sysbench_fileio", "dd"],
        claims=["kumar2013-disk-*"],
        caption="sysbench fileio sequential read and write (4.9) and random read/write (4.10) in each platform's own "
                'file system, and a disk copy with dd (4.11: write with ``conv=fdatasync``, read back with '
                '``iflag=direct``); median MiB/s (dd: MB/s) with order-statistic intervals; each panel\'s title says where '
                'its numbers were measured (sysbench fileio: in the page cache, not on disk).')
def disk(table, s) -> Drawn:
    fig, axes = panels(3, 14, 4)
    compared, summaries, measured = [], [], []
    for ax, (number, title, records) in zip(axes, disk_panels(table)):
        where = where_measured(records)
        ax.set_title(f"Fig. {number}: {title}" + (f"\n({where})" if where else ""))
        if records.empty:
            plotting.unavailable(ax, f"no runs on testbed {s.testbed!r}")
            continue
        part = summarize(records, ["platform", "operation"], s)
        plotting.grouped_bars(ax, part, "operation", "median", "ci_low", "ci_high", order=sorted(part["operation"].unique()),
                              hue_order=baseline_first(part["platform"], s.baseline),
                              points=records.assign(median=records["value"]))
        ax.legend(title="platform")
        ax.set_ylabel(records["unit"].iloc[0])  # what the bars are: the suptitle, once for all panels
        summaries.append(part)
        measured.append(records)
        if comparable(records, s.baseline):
            compared.append(compare(records, s, ["operation"]).assign(figure=number))
    one_legend(fig, axes)
    fig.suptitle(f"File and disk I/O per platform (thesis Figs. 4.9-4.11) on testbed {s.testbed!r}\n"
                 f"bars: {ci_label(s, dagger=False)}", y=1.02)
    fig.tight_layout(rect=(0, 0, 1, 0.93))  # the legend (one_legend) hangs from 0.93, under the suptitle
    if measured:
        footnote(fig, pd.concat(measured))
    if summaries:
        note_below(fig, no_interval_text(pd.concat(summaries), "ci_low", "ci_high", "median"))
    shown = pd.concat(compared)[["figure", "operation"] + OVERHEAD] if compared else pd.DataFrame()
    return Drawn(fig, {f"overhead vs {s.baseline} (%)": shown}, digits=1)


# (benchmark, metric, label of a variant with its size, higher is better)
APP_METRICS = [
    ("nginx_wrk", "requests_per_s",
     lambda r: f"nginx {r['param_file_kb']} KiB\n{r['param_connections']} connections", True),
    ("pgbench", "tps", lambda r: f"pgbench {r['param_mode']}\nscale {r['param_scale']}, {r['param_clients']} clients", True),
    ("rabbitmq", "messages_per_s",
     lambda r: f"RabbitMQ {r['param_size']} B\n{r['param_messages']} messages", True),
    ("pyperformance", "time", lambda r: f"python {r['param_benchmark']}\n(pyperf {r['param_mode']})", False),
    ("openssl_speed", "throughput", lambda r: f"openssl {r['param_algorithm']}\n{r['block_bytes'] / 1024:g} KiB blocks", True),
    ("openssl_speed", "sign_per_s", lambda r: f"openssl {r['param_algorithm']}\nsign", True),
]


def relative_performance(compared: pd.DataFrame, higher: bool) -> pd.DataFrame:
    """Relative performance (above 1 = faster than the baseline) from the overhead o and its interval:
    platform / baseline = 1 - o for rates, baseline / platform = 1 / (1 + o) for times (an interval bound
    at or below -100 % for a time has no finite ratio: inf)."""
    def to_relative(o):
        return 1 - o / 100 if higher else (1 / (1 + o / 100)).where(~(o <= -100), float("inf"))

    return compared.assign(relative=to_relative(compared["overhead_percent"]),
                           relative_low=to_relative(compared["overhead_ci_high"]),
                           relative_high=to_relative(compared["overhead_ci_low"]))


LOG_FLOOR = 1e-3  # the foot of a log axis of relative performance


@figure(PAPER, "apps-relative-performance", title="Kumar 2013 thesis section 1.2", claims=[],
        benchmarks=sorted({b for b, *_ in APP_METRICS}),
        caption='application workloads (the thesis gives no numbers for them): nginx under wrk, PostgreSQL under '
                'pgbench and RabbitMQ under a publisher/consumer load, each server in a second instance of the platform '
                'and its load generator in the first; pyperformance and openssl speed, which have no server, in one '
                'instance; each workload\'s size under its name; performance of each platform relative to the '
                'baseline (above 1 = faster, log scale) with confidence intervals; below the figure, the bars without '
                'an interval and why.')
def apps(table, s) -> Drawn:
    rows = []
    for benchmark, metric, label, higher in APP_METRICS:
        part = results.view(table, benchmark, metric=metric)
        if metric == "throughput" and len(part):
            part = part[part["block_bytes"] == part["block_bytes"].max()]
        if not comparable(part, s.baseline):
            continue
        part = part.assign(workload=part.apply(label, axis=1))
        rows.append(relative_performance(compare(part, s, ["workload"], higher_is_better=higher), higher))
    shown = pd.concat(rows) if rows else pd.DataFrame()
    fig, ax = plt.subplots(figsize=(12, 4.2))
    if shown.empty:
        plotting.unavailable(ax, no_comparison("application workload", s))
    else:
        drawn = shown.replace([np.inf, -np.inf], np.nan)
        # a log axis: a TCG VM's 0.01-0.1 beside the containers' 1; an interval reaching 0 or below ends at the axis
        drawn["relative_low"] = drawn["relative_low"].where(drawn["relative_low"] > 0, LOG_FLOOR)
        plotting.grouped_bars(ax, drawn, "workload", "relative", "relative_low", "relative_high",
                              order=list(dict.fromkeys(shown["workload"])), hue_order=platform_order(shown["platform"]),
                              no_interval=NO_INTERVAL_MARK)
        ax.set_yscale("log")
        ax.set_ylim(bottom=LOG_FLOOR)
        ax.axhline(1, color="black", linewidth=0.8, linestyle="--")
        ax.set_ylabel(f"performance relative to {s.baseline}\n({s.confidence:.0%} CI, log scale)")
        ax.tick_params(axis="x", rotation=30)
        plt.setp(ax.get_xticklabels(), ha="right", rotation_mode="anchor")
        ax.legend(title="platform", fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    ax.set_title(f"Application workloads relative to {s.baseline} (thesis section 1.2) on testbed {s.testbed!r}")
    fig.tight_layout()
    if len(shown):
        note_below(fig, no_interval_text(shown, "relative_low", "relative_high", "relative"))  # the bars are marked
    columns = ["workload", "platform", "n_platform", "relative", "relative_low", "relative_high", "verdict"]
    return Drawn(fig, {f"performance relative to {s.baseline}": shown[columns] if len(shown) else shown})


# what each lifecycle step times (platforms.guest.GuestPlatform.lifecycle and the platforms' launch, clone
# and stop), in its order
STEP_TIMED = {
    "provision": "the guest set up from the prepared guest image, nothing booted and no OS installed (the thesis' "
                 "Table 5.1 installs Ubuntu): its seed (keys, address) and root - lxc an overlay on the image's root "
                 "file system, podman a network namespace (the image imported at its first use), QEMU a copy of the "
                 "image's disk",
    "boot": "from starting the guest (lxc-start, podman run, qemu-system-x86_64) to its sshd's first SSH banner",
    "reboot": "from systemctl reboot in the guest to the new boot's first SSH banner",
    "clone": "a copy of the running guest - lxc its root file system (cp -a), podman a commit to an image "
             "(and its removal), QEMU its disk (qemu-img convert)",
    "destroy": "the guest stopped and its files removed - lxc-stop (up to 20 s to shut down), podman stop (up to "
               "5 s), QEMU's process ended (no guest shutdown)",
}
STEPS = list(STEP_TIMED)


def not_applicable(life: pd.DataFrame, s) -> list[str]:
    """Each platform's lifecycle steps that do not apply to it, with the reason its log gives
    ("reboot=not-applicable (why)"), read from one of its raw logs."""
    import re

    reasons = []
    for platform, rows in life.groupby("platform"):
        text = (Path(s.data_dir) / rows["source_log"].iloc[0]).read_text(errors="replace")
        reasons += [f"{platform} {step}: {why}" for step, why in re.findall(r"^(\w+)=not-applicable \((.*)\)$", text, re.M)]
    return reasons


def step_resolutions(life: pd.DataFrame) -> str:
    """How finely each step's end was found, where its records say (``resolution_s``: the harness polls
    for a guest's SSH banner, and for its supervisor gone), in words: the median per step, per platform
    where the platforms differ (a binary-translating guest answers the banner probe slowly)."""
    if "resolution_s" not in life.columns:
        return ""
    median = life.dropna(subset=["resolution_s"]).groupby(["metric", "platform"])["resolution_s"].median()
    said = []
    for step in STEPS:
        if step not in median.index.get_level_values("metric"):
            continue
        values = {platform: f"{value:.2g} s" for platform, value in median[step].items()}
        said.append(f"{step} {next(iter(values.values()))}" if len(set(values.values())) == 1 else
                    f"{step} " + ", ".join(f"{short_label(p)} {v}" for p, v in values.items()))
    return "; ".join(said)


@figure(PAPER, "tables5-operational-flexibility", title="Kumar 2013 thesis Tables 5.1-5.3 as a figure", benchmarks=["lifecycle"],
        claims=["kumar2013-lifecycle-*"],
        caption='seconds to provision (from a prepared guest image), boot, reboot, clone and destroy a guest of each '
                'platform (log scale), median with its order-statistic interval; below it, what each step times and how '
                'finely the end of each polled step was found.')
def lifecycle(table, s) -> Drawn:
    life = results.view(table, "lifecycle")
    summary = summarize(life, ["platform", "metric"], s)
    fig, ax = plt.subplots(figsize=(9, 4))
    numbers = {}
    if life.empty:
        plotting.unavailable(ax, "no lifecycle runs on this testbed (native has no guest to provision)")
    else:
        shown = summary[summary["metric"].isin(STEPS)]
        # an interval reaching 0 or below ends at the foot of the log axis
        shown = shown.assign(ci_low=shown["ci_low"].where(shown["ci_low"] > 0, shown["median"] / 100))
        plotting.grouped_bars(ax, shown, "metric", "median", "ci_low", "ci_high", order=STEPS,
                              hue_order=platform_order(shown["platform"]), missing="not applicable",
                              points=life[life["metric"].isin(STEPS)].assign(median=lambda f: f["value"]))
        ax.set_yscale("log")
        ax.set_xlabel("step")
        ax.set_ylabel("seconds (log scale)")
        ax.set_title(f"bars: {ci_label(s, dagger=False)}", fontsize="small", loc="left")
        ax.legend(title="platform", fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
        reasons = not_applicable(life, s)
        timed = step_resolutions(life)
        import textwrap

        steps = [textwrap.fill(f"{step}: {what}", 150, subsequent_indent="    ") for step, what in STEP_TIMED.items()]
        bare = no_interval_text(shown, "ci_low", "ci_high", "median")
        notes = (steps + ([f"timed to: {timed}"] if timed else [])
                 + (["not applicable: " + "; ".join(reasons)] if reasons else []) + ([bare] if bare else []))
        ax.text(0, -0.22, "\n".join(notes), transform=ax.transAxes, fontsize=7, color="dimgray", va="top")
        if reasons:
            numbers["not applicable"] = "\n".join(reasons)
        numbers["what each step times"] = "\n".join(f"{step}: {what}" for step, what in STEP_TIMED.items())
        if timed:
            numbers["resolution of the steps' end (the harness polls for it)"] = timed
        numbers[f"median seconds per step (n per cell: {summary['n'].min()} to {summary['n'].max()})"] = (
            summary.pivot_table(index="platform", columns="metric", values="median").reindex(columns=STEPS))
    fig.suptitle(f"Operational flexibility (thesis Tables 5.1-5.3) on testbed {s.testbed!r}")
    return Drawn(fig, numbers)


VCPU_COUNTS = [1, 2, 4, 8]
RATIO = ["ratio", "ratio_ci_low", "ratio_ci_high"]


def cpu_scaling(table, s) -> tuple[pd.DataFrame, pd.DataFrame]:
    """cpu_scaling's rows and each platform's events per second relative to the baseline's per vCPU count."""
    scaling = results.view(table, "cpu_scaling", metric="events_per_second")
    columns = ["vcpus", "platform", "n", "oversubscribed", *RATIO, "ci_note"]
    if scaling.empty:
        return scaling, pd.DataFrame(columns=columns)
    over = scaling["param_oversubscribed"] if "param_oversubscribed" in scaling else pd.Series("", index=scaling.index)
    scaling = scaling.assign(vcpus=scaling["param_vcpus"], oversubscribed=over.fillna("").eq("yes"))
    base = scaling[scaling["platform"] == s.baseline]
    groups = ((key, group) for key, group in scaling.groupby(["vcpus", "platform"]) if key[1] != s.baseline)
    rows = ratio_rows(groups, lambda key: base[base["vcpus"] == key[0]]["value"], s,
                      vcpus=lambda key, _: key[0], platform=lambda key, _: key[1], n=lambda _, g: len(g),
                      oversubscribed=lambda _, g: bool(g["oversubscribed"].any()))
    return scaling, pd.DataFrame(rows, columns=columns)


@figure(PAPER, "fig4-1-4-4-cpu-vcpus", title="Kumar 2013 thesis Figs. 4.1-4.4", benchmarks=["cpu_scaling"],
        claims=[], caption='sysbench cpu with 1, 2, 4 and 8 vCPUs (threads = vCPUs), events per second of each platform relative'
                ' to native at the same count (Hodges-Lehmann ratio, exact Mann-Whitney interval); a hatched bar (if any) ran oversubscribed.')
def cpu_vcpus(table, s) -> Drawn:
    scaling, relative = cpu_scaling(table, s)
    fig, axes = panels(len(VCPU_COUNTS), 12, 3.8)
    for ax, vcpus in zip(axes, VCPU_COUNTS):
        part = relative[relative["vcpus"] == vcpus]
        ax.set_title(f"Fig. 4.{VCPU_COUNTS.index(vcpus) + 1}: {vcpus} vCPU{'s' if vcpus > 1 else ''}")
        if part.empty:
            if scaling.empty:
                why = "no cpu_scaling runs\non this testbed"
            elif vcpus not in set(scaling["vcpus"]):
                why = f"no runs with {vcpus} vCPUs\n(above the host's CPUs and\nno oversubscription asked)"
            else:
                why = f"no {s.baseline!r} baseline\nwith {vcpus} threads"
            plotting.unavailable(ax, why)
            continue
        order = platform_order(part["platform"])
        plotting.grouped_bars(ax, part.assign(x=f"{vcpus}"), x="x", value="ratio", low="ratio_ci_low",
                              high="ratio_ci_high", order=[f"{vcpus}"], hue_order=order,
                              points=run_ratios(scaling, s, "vcpus", vcpus).assign(x=f"{vcpus}"))
        for patch, (_, row) in zip(ax.patches, part.set_index("platform").reindex(order).iterrows()):
            if row["oversubscribed"]:
                patch.set_hatch("//")
        ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
        ax.set_xticks([])
        ax.legend(fontsize=7)
    _vs_baseline(axes[0], s, "events/s")
    # which benchmark: fig4-cpu-overhead draws the same thesis figures from sysbench_cpu
    fig.suptitle(f"cpu_scaling: sysbench cpu{_primes(scaling)} with threads = vCPUs, relative to {s.baseline} per vCPU "
                 f"count (thesis Figs. 4.1-4.4), testbed {s.testbed!r}")
    fig.tight_layout()
    if len(relative):
        note_below(fig, no_interval_text(relative, "ratio_ci_low", "ratio_ci_high", "ratio"))
    return Drawn(fig, {f"events/s relative to {s.baseline}": relative.drop(columns="ci_note")}, digits=3)


def run_ratios(runs: pd.DataFrame, s, key: str, value, by: str | None = None) -> pd.DataFrame:
    """Each run of a platform other than the baseline where ``runs[key] == value``, over the mean of the
    baseline's runs with the same ``key`` (and ``by``, if given): the dots on a ratio's bar."""
    chosen = runs[runs[key] == value]
    base = chosen[chosen["platform"] == s.baseline]
    if by is None:
        means = pd.Series(base["value"].mean(), index=chosen.index)
    else:
        means = chosen[by].map(base.groupby(by)["value"].mean())
    return chosen.assign(ratio=chosen["value"] / means)[lambda f: (f["platform"] != s.baseline) & f["ratio"].notna()]


def memory_scaling(table, s) -> pd.DataFrame:
    """memory_scaling's throughput of each platform relative to the baseline's per guest memory fraction and operation."""
    runs = results.view(table, "memory_scaling", metric="throughput")
    columns = ["fraction", "guest_mb", "platform", "oper", "n", *RATIO]
    guests = runs[runs["platform"] != s.baseline] if len(runs) else runs
    if guests.empty:
        return pd.DataFrame(columns=columns)
    base = runs[runs["platform"] == s.baseline]
    rows = ratio_rows(guests.groupby(["param_fraction", "platform", "param_oper"]),
                      lambda key: base[base["param_oper"] == key[2]]["value"], s,
                      fraction=lambda key, _: key[0], guest_mb=lambda _, g: g["param_mem"].iloc[0],
                      platform=lambda key, _: key[1], oper=lambda key, _: key[2], n=lambda _, g: len(g))
    return pd.DataFrame(rows, columns=columns)


def memory_working_set(runs: pd.DataFrame, s) -> tuple[pd.DataFrame, str]:
    """``runs`` (memory_scaling's) with the ``regime`` their working set is in (virtrepro.declarations.regimes: sysbench
    memory moves one ``block`` per thread over and over, against the last-level cache of the machine the
    runs name), and a line on it: the block, the threads, where it lives, that guest memory size is not
    exercised, and the operations the benchmark declares that this scale did not run."""
    from ..rawdata import machines
    from ..declarations import regimes
    from ..benchmarks import BENCHMARKS

    if runs.empty:
        return runs, ""
    found = machines.recorded(s.data_dir, s.testbed, "memory_scaling")
    llc = regimes.llc_bytes(found[0][1]) if found else None
    blocks = runs["param_block"].astype(str).map(regimes.size_bytes) * runs["param_threads"].astype(int)
    runs = runs.drop(columns=["measures"], errors="ignore").assign(
        regime=blocks.map(lambda working: regimes.memory_regime(working, llc)))
    parts = []
    for (block, threads), rows in runs.groupby(["param_block", "param_threads"]):
        where = regimes.WHERE[rows["regime"].iloc[0]]
        parts.append(f"one {regimes.size_bytes(block) / 2**20:g} MiB block per thread, {int(threads)} "
                     f"thread{'s' if int(threads) > 1 else ''}, {where}"
                     + (f" (last-level cache {llc / 2**20:g} MiB)" if llc else ""))
    text = "sysbench memory moves " + "; ".join(parts) + ": the guest's memory size is not exercised"
    declared = BENCHMARKS["memory_scaling"].parameter_schema()["properties"]["operations"]["items"]["enum"]
    not_run = [op for op in declared if op not in set(runs["param_oper"])]
    if not_run:
        text += f"; {' and '.join(not_run)}: not run at this scale (config: memory_scaling operations)"
    return runs, text


@figure(PAPER, "fig4-5-4-7-memory", title="Kumar 2013 thesis Figs. 4.5-4.7", benchmarks=["memory_scaling"],
        claims=[], caption="sysbench memory throughput of each operation the scale ran (x axis) in guests with memory below,"
                ' equal to and above the host\'s (containers: memory limit), relative to native (Hodges-Lehmann'
                ' ratio, exact Mann-Whitney interval); below the figure, the block size and where it lives (a block in the CPU caches does not'
                ' exercise the guest\'s memory size) and the operations not run.')
def memory(table, s) -> Drawn:
    relative = memory_scaling(table, s)
    runs, working_set = memory_working_set(results.view(table, "memory_scaling", metric="throughput"), s)
    # by guest size, smallest first (the thesis numbers its figures otherwise)
    chosen = [("guest < host (thesis Fig. 4.6)", lambda f: f < 1), ("guest = host (thesis Fig. 4.5)", lambda f: f == 1),
              ("guest > host (thesis Fig. 4.7)", lambda f: f > 1)]
    fig, axes = panels(3, 12, 3.8)
    for ax, (title, pick) in zip(axes, chosen):
        part = relative[relative["fraction"].map(pick)] if not relative.empty else relative
        ax.set_title(title if part.empty else f"{title}\n{part['guest_mb'].iloc[0]} MB, x{part['fraction'].iloc[0]:g} the host's")
        if part.empty:
            plotting.unavailable(ax, f"no runs of this size\n(not configured, refused\nor no {s.baseline!r} baseline)")
            continue
        fraction = part["fraction"].iloc[0]
        chosen_runs = runs.assign(oper=runs["param_oper"], fraction=runs["param_fraction"])
        # the baseline runs at every fraction (native has no guest size): the mean per operation
        dots = run_ratios(chosen_runs.assign(fraction=chosen_runs["fraction"].where(chosen_runs["platform"] != s.baseline,
                                                                                    fraction)),
                          s, "fraction", fraction, by="oper")
        plotting.grouped_bars(ax, part, x="oper", value="ratio", low="ratio_ci_low", high="ratio_ci_high",
                              order=sorted(part["oper"].unique()), hue_order=platform_order(part["platform"]),
                              points=dots)
        ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
        ax.set_xlabel("sysbench memory operation")
        ax.legend(fontsize=7)
    _vs_baseline(axes[0], s, "MiB/s")
    fig.suptitle(f"Memory throughput relative to {s.baseline} by guest memory (thesis Figs. 4.5-4.7), testbed {s.testbed!r}")
    fig.tight_layout()
    if working_set:
        note_below(fig, working_set)
        footnote(fig, runs)
    numbers = {f"MiB/s relative to {s.baseline}": relative}
    if working_set:
        numbers["working set"] = working_set
    # the reading: the caption with what these runs moved (the figure's note below it)
    summary = f"{get(PAPER, 'fig4-5-4-7-memory').caption} Here, {working_set}." if working_set else ""
    return Drawn(fig, numbers, digits=3, summary=summary)


# the victim's metric per resource it stresses
VICTIM_METRIC = {"cpu": "events_per_second", "memory": "throughput", "disk": "bw", "network": "throughput"}


def _victim_rows(iso: pd.DataFrame) -> pd.DataFrame:
    """The rows of the victim's metric per resource it stresses (fio: the write side; iperf3: the receiver)."""
    if iso.empty:
        return iso
    iso = iso[iso["metric"] == iso["param_resource"].map(VICTIM_METRIC)]
    keep = pd.Series(True, index=iso.index)
    if "direction" in iso:  # fio: the write side
        keep &= ~((iso["param_resource"] == "disk") & (iso["direction"] != "write"))
    if "side" in iso:  # iperf3: the receiver
        keep &= ~((iso["param_resource"] == "network") & (iso["side"] != "receiver"))
    return iso[keep]


def isolation_efficiency(table, s) -> pd.DataFrame:
    """Per resource, platform and limits: the victim's value beside a stressing neighbour divided by its value alone."""
    iso = _victim_rows(results.view(table, "isolation"))
    columns = ["resource", "platform", "limits", "n_alone", "n_stress", "efficiency", "ci_low", "ci_high"]
    if iso.empty:
        return pd.DataFrame(columns=columns)
    by = ["param_resource", "platform", "param_limits"]
    alone = {key: g[g["param_neighbour"] == "none"]["value"] for key, g in iso.groupby(by)}
    rows = ratio_rows(((key, g[g["param_neighbour"] == "stress"]) for key, g in iso.groupby(by)), alone.get, s,
                      resource=lambda k, _: k[0], platform=lambda k, _: k[1], limits=lambda k, _: k[2],
                      n_alone=lambda k, _: len(alone[k]), n_stress=lambda _, g: len(g))
    frame = pd.DataFrame(rows, columns=["resource", "platform", "limits", "n_alone", "n_stress", *RATIO])
    return frame.rename(columns={"ratio": "efficiency", "ratio_ci_low": "ci_low", "ratio_ci_high": "ci_high"})[columns]


def isolation_runs(table) -> pd.DataFrame:
    """Each run beside a stressing neighbour over the mean of the runs alone (the dots on the bars)."""
    iso = _victim_rows(results.view(table, "isolation"))
    if iso.empty:
        return pd.DataFrame(columns=["resource", "platform", "limits", "efficiency"])
    by = ["param_resource", "platform", "param_limits"]
    alone = iso[iso["param_neighbour"] == "none"].groupby(by)["value"].mean()
    stressed = iso[iso["param_neighbour"] == "stress"]
    ratio = stressed["value"] / pd.Series(list(zip(*(stressed[c] for c in by))), index=stressed.index).map(alone)
    return pd.DataFrame({"resource": stressed["param_resource"], "platform": stressed["platform"],
                         "limits": stressed["param_limits"], "efficiency": ratio}).dropna()


# limits off / on: greys, which no platform has (a platform's colour means that platform, everywhere)
LIMITS_COLOURS = {"limits off": "#d0d0d0", "limits on": "#7a7a7a"}
NO_LIMITS = "no limits to turn on"  # the mark of a platform's empty "limits on" slot (native)


def limits_in_words(iso: pd.DataFrame) -> str:
    """The limits of the "limits on" runs of ``iso`` (results.view of isolation) as their variants'
    parameters say (Isolation._limit_params, applied to every instance): "1 CPU, 1024 MiB memory,
    disk 50 MiB/s"; "" without such runs, several such settings joined by " / "."""
    from ..benchmarks.base import size_to_kb

    on = iso[iso["param_limits"] == "on"] if "param_limits" in iso.columns else iso.iloc[0:0]
    if on.empty or not {"param_cpus", "param_mem", "param_bps"} <= set(on.columns):
        return ""
    settings = on[["param_cpus", "param_mem", "param_bps"]].drop_duplicates()
    return " / ".join(f"{int(cpus)} CPU{'s' if int(cpus) > 1 else ''}, {int(mem)} MiB memory, "
                      f"disk {size_to_kb(str(bps).lower()) / 1024:g} MiB/s"
                      for cpus, mem, bps in settings.itertuples(index=False))


def capped_alone(table, s) -> pd.DataFrame:
    """Per resource and platform: the victim alone with limits on over the victim alone with them off
    (what the limits themselves cost it), with the interval of the ratio."""
    iso = _victim_rows(results.view(table, "isolation"))
    alone = iso[iso["param_neighbour"] == "none"] if len(iso) else iso
    columns = ["resource", "platform", "n_on", "n_off", *RATIO]
    if alone.empty or "on" not in set(alone["param_limits"]):
        return pd.DataFrame(columns=columns)
    by = ["param_resource", "platform"]
    off = {key: g[g["param_limits"] == "off"]["value"] for key, g in alone.groupby(by)}
    rows = ratio_rows(((key, g[g["param_limits"] == "on"]) for key, g in alone.groupby(by)), off.get, s,
                      resource=lambda k, _: k[0], platform=lambda k, _: k[1], n_on=lambda _, g: len(g),
                      n_off=lambda k, _: len(off[k]))
    return pd.DataFrame(rows, columns=columns)


@figure(PAPER, "fig6-2-6-5-isolation", title="Kumar 2013 thesis Figs. 6.2-6.5", benchmarks=["isolation"],
        claims=["kumar2013-isolation-*"],
        caption='isolation efficiency (victim performance beside a neighbour stressing the same resource / the victim'
                ' alone under the same limits) for CPU, memory, network and disk, with resource limits off and on'
                ' (the legend gives the limits, which cap the victim alone too: each panel says by how much), with'
                ' the Hodges-Lehmann ratio and its exact Mann-Whitney interval; native has no limits to turn on.')
def isolation(table, s) -> Drawn:
    efficiency, each_run = isolation_efficiency(table, s), isolation_runs(table)
    capped = capped_alone(table, s)
    limits = limits_in_words(results.view(table, "isolation"))
    # the legend's name of each setting: "limits on" with the limits it set
    setting = {"off": "limits off",
               "on": "limits on" + (" (each instance):\n" + limits.replace(", ", ",\n") if limits else "")}
    colours = {setting[k]: LIMITS_COLOURS[f"limits {k}"] for k in setting}
    resources = [("cpu", "Fig. 6.2: CPU"), ("memory", "Fig. 6.3: memory"), ("network", "Fig. 6.4: network"),
                 ("disk", "Fig. 6.5: disk I/O")]
    fig, axes = panels(4, 14, 4.2)
    for ax, (resource, title) in zip(axes, resources):
        part = efficiency[efficiency["resource"] == resource]
        ax.set_title(title)
        if part.empty:
            plotting.unavailable(ax, f"no {resource} isolation runs on this testbed: not measured at its scale "
                                     "(config/config.yaml, isolation: resources)")
            continue
        shown = part.assign(setting=part["limits"].map(setting))
        runs = each_run[each_run["resource"] == resource]
        order = baseline_first(part["platform"], s.baseline)
        plotting.grouped_bars(ax, shown, x="platform", value="efficiency", low="ci_low", high="ci_high", hue="setting",
                              order=order,
                              hue_order=[setting[k] for k in setting if setting[k] in set(shown["setting"])],
                              colors=colours, points=runs.assign(setting=runs["limits"].map(setting)),
                              missing=NO_LIMITS)
        ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
        # the platforms' labels (as plotting.save would name them), rotated to hang left of their tick: none
        # reaches the next panel
        ax.set_xticks(range(len(order)), labels=[plotting._named(p, wrap=True) for p in order], rotation=30,
                      ha="right", rotation_mode="anchor")
        ax.legend(fontsize=7)
        cost = capped[capped["resource"] == resource]
        if len(cost):
            ax.set_xlabel("victim alone, limits on / off:\n" + ", ".join(
                f"{short_label(p)} {r:.2f}" for p, r in zip(cost["platform"], cost["ratio"])), fontsize=7, color="dimgray")
    axes[0].set_ylabel(f"efficiency = with neighbour / alone\n(alone: same limits; {s.confidence:.0%} CI)")
    fig.suptitle(f"Isolation efficiency, neighbour stressing the same resource (thesis Figs. 6.2-6.5), testbed {s.testbed!r}")
    fig.tight_layout()
    # the reading: the caption with the limits these runs had (the legend's)
    summary = f"{get(PAPER, 'fig6-2-6-5-isolation').caption} Here, limits on: {limits}, each instance." if limits else ""
    return Drawn(fig, {"isolation efficiency": efficiency, "victim alone, limits on / off": capped}, digits=3,
                 summary=summary)
