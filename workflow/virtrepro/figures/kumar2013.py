"""Kumar 2013, Virtualizing Intelligent River (thesis): CPU, network, disk, applications, operational
flexibility, the vCPU and memory scenarios and isolation."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .. import plotting, results
from .registry import Drawn, figure
from .common import (OVERHEAD, baseline_first, ci_label, compare, comparable, no_comparison, one_legend, panels,
                     ratio_rows, summarize)

PAPER = "kumar2013"


def _vs_baseline(ax, s, label: str) -> None:
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_ylabel(f"{label} relative to {s.baseline} ({s.confidence:.0%} CI)")


@figure(PAPER, "fig4-cpu-overhead", title="Kumar 2013 thesis Figs. 4.1-4.4", benchmarks=["sysbench_cpu"],
        claims=["kumar2013-cpu-*"],
        caption='sysbench CPU events per second per platform with one thread and with every core, mean with Student-t'
                ' confidence intervals.')
def cpu_overhead(table, s) -> Drawn:
    cpu = results.view(table, "sysbench_cpu", metric="events_per_second")
    summary = summarize(cpu, ["platform", "threads"], s)
    fig, ax = plt.subplots(figsize=(7, 4))
    if summary.empty:
        plotting.unavailable(ax, f"no sysbench cpu runs on testbed {s.testbed!r}")
    else:
        threads = sorted(summary["threads"].unique())

        def named(counts):
            return [f"{t} thread{'s' if t > 1 else ''}" for t in counts]

        shown = summary.assign(x=named(summary["threads"]))
        plotting.grouped_bars(ax, shown, "x", "mean", "ci_low", "ci_high", hue_order=baseline_first(summary["platform"], s.baseline),
                              order=named(threads), points=cpu.assign(x=named(cpu["threads"]), mean=cpu["value"]))
        ax.set_ylabel(f"sysbench cpu events/s, {ci_label(s, summary)}")
        ax.legend(title="platform")
    ax.set_title(f"CPU performance per platform (thesis Figs. 4.1-4.4) on testbed {s.testbed!r}")
    compared = compare(cpu, s, ["threads"])
    return Drawn(fig, {"events per second": summary[["platform", "threads", "n", "mean", "ci_low", "ci_high"]],
                       f"overhead vs {s.baseline} (%)": compared[["threads"] + OVERHEAD]}, digits=1)


@figure(PAPER, "fig4-8-network-bandwidth", title="Kumar 2013 thesis Fig. 4.8", benchmarks=["iperf3"],
        claims=[], caption='iperf3 TCP bandwidth between two instances of each platform (receiver side), mean with Student-t '
                'confidence intervals.')
def network(table, s) -> Drawn:
    net = results.view(table, "iperf3", metric="throughput")
    net = net[net["side"] == "receiver"] if "side" in net.columns else net
    fig, ax = plt.subplots(figsize=(7, 4))
    if net.empty:
        plotting.unavailable(ax, f"no iperf3 runs on testbed {s.testbed!r}")
    else:
        summary = summarize(net, ["platform", "num_streams"], s)
        order = baseline_first(summary["platform"], s.baseline)
        part = summary.set_index("platform").reindex(order)
        ax.bar(order, part["mean"], color=[plotting.platform_palette(order)[p] for p in order],
               yerr=[part["mean"] - part["ci_low"], part["ci_high"] - part["mean"]], capsize=4)
        ax.set_ylabel(f"iperf3 TCP throughput (Mbit/s), {ci_label(s)}")
    ax.set_title(f"Network bandwidth per platform (thesis Fig. 4.8) on testbed {s.testbed!r}")
    return Drawn(fig, {f"overhead vs {s.baseline} (%)": compare(net, s, ["num_streams"])[["num_streams"] + OVERHEAD]},
                 digits=1)


def disk_panels(table) -> list[tuple[str, str, pd.DataFrame]]:
    """(figure, title, records with an ``operation``) of thesis Figs. 4.9-4.11."""
    fileio = results.view(table, "sysbench_fileio")

    def rows(mode, metric, operation):
        return fileio[(fileio["param_mode"] == mode) & (fileio["metric"] == metric)].assign(operation=operation)

    dd = results.view(table, "dd", metric="throughput")
    return [
        ("4.9", "sequential file I/O", pd.concat([rows("seqrd", "read_throughput", "read"),
                                                 rows("seqwr", "write_throughput", "write")]) if len(fileio) else fileio),
        ("4.10", "random file I/O", pd.concat([rows("rndrw", "read_throughput", "random read"),
                                              rows("rndrw", "write_throughput", "random write")]) if len(fileio) else fileio),
        ("4.11", "disk copy (dd)", dd.assign(operation=dd["op"] if "op" in dd.columns else "copy")),
    ]


@figure(PAPER, "fig4-9-to-4-11-disk", title="Kumar 2013 thesis Figs. 4.9-4.11", benchmarks=["sysbench_fileio", "dd"],
        claims=["kumar2013-disk-*"],
        caption="sysbench fileio sequential read and write (4.9) and random read/write (4.10) in each platform's own "
                'file system, and a disk copy with dd (4.11: write with ``conv=fdatasync``, read back with '
                '``iflag=direct``); mean MiB/s (dd: MB/s) with confidence intervals.')
def disk(table, s) -> Drawn:
    fig, axes = panels(3, 14, 4)
    compared = []
    for ax, (number, title, records) in zip(axes, disk_panels(table)):
        ax.set_title(f"Fig. {number}: {title}")
        if records.empty:
            plotting.unavailable(ax, f"no runs on testbed {s.testbed!r}")
            continue
        part = summarize(records, ["platform", "operation"], s)
        plotting.grouped_bars(ax, part, "operation", "mean", "ci_low", "ci_high", order=sorted(part["operation"].unique()),
                              hue_order=baseline_first(part["platform"], s.baseline),
                              points=records.assign(mean=records["value"]))
        ax.legend(title="platform")
        ax.set_ylabel(f"{records['unit'].iloc[0]}, {ci_label(s, part)}")
        if comparable(records, s.baseline):
            compared.append(compare(records, s, ["operation"]).assign(figure=number))
    one_legend(fig, axes)
    fig.suptitle(f"Disk I/O overhead (thesis Figs. 4.9-4.11) on testbed {s.testbed!r}")
    fig.tight_layout(rect=(0, 0, 1, 0.88))
    shown = pd.concat(compared)[["figure", "operation"] + OVERHEAD] if compared else pd.DataFrame()
    return Drawn(fig, {f"overhead vs {s.baseline} (%)": shown}, digits=1)


# (benchmark, metric, label of a variant, higher is better)
APP_METRICS = [
    ("nginx_wrk", "requests_per_s", lambda r: f"nginx {r['param_file_kb']} KiB", True),
    ("pgbench", "tps", lambda r: f"pgbench {r['param_mode']}", True),
    ("rabbitmq", "messages_per_s", lambda r: f"RabbitMQ {r['param_size']} B", True),
    ("pyperformance", "time", lambda r: f"python {r['param_benchmark']}", False),
    ("openssl_speed", "throughput", lambda r: f"openssl {r['param_algorithm']}", True),
    ("openssl_speed", "sign_per_s", lambda r: f"openssl {r['param_algorithm']} sign", True),
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
        caption='application workloads (the thesis gives no numbers for them): nginx under wrk, PostgreSQL under pgbench, RabbitMQ under a publisher/consumer load, pyperformance '
                'and openssl speed, each server in a second instance of the platform; performance of each platform '
                'relative to the baseline (above 1 = faster, log scale) with confidence intervals.')
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
                              order=list(dict.fromkeys(shown["workload"])), hue_order=sorted(shown["platform"].unique()))
        ax.set_yscale("log")
        ax.set_ylim(bottom=LOG_FLOOR)
        ax.axhline(1, color="black", linewidth=0.8, linestyle="--")
        ax.set_ylabel(f"performance relative to {s.baseline}\n({s.confidence:.0%} CI, log scale)")
        ax.tick_params(axis="x", rotation=30)
        plt.setp(ax.get_xticklabels(), ha="right", rotation_mode="anchor")
        ax.legend(title="platform", fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    ax.set_title(f"Application workloads relative to {s.baseline} (thesis section 1.2) on testbed {s.testbed!r}")
    fig.tight_layout()
    columns = ["workload", "platform", "n_platform", "relative", "relative_low", "relative_high", "verdict"]
    return Drawn(fig, {f"performance relative to {s.baseline}": shown[columns] if len(shown) else shown})


STEPS = ["provision", "boot", "reboot", "clone", "destroy"]


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
    """How finely each step's end was found, where its records say (``resolution_s``: the harness
    polls for a guest's SSH banner, and for its supervisor gone): the coarsest per step, in words."""
    if "resolution_s" not in life.columns:
        return ""
    coarsest = life.dropna(subset=["resolution_s"]).groupby("metric")["resolution_s"].max()
    return ", ".join(f"{step} {coarsest[step]:.2g} s" for step in STEPS if step in coarsest.index)


@figure(PAPER, "tables5-operational-flexibility", title="Kumar 2013 thesis Tables 5.1-5.3 as a figure", benchmarks=["lifecycle"],
        claims=["kumar2013-lifecycle-*"],
        caption='seconds to provision, boot, reboot, clone and destroy a guest of each platform (log scale), mean '
                'with Student-t confidence intervals; below it, how finely the end of each polled step was found.')
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
        shown = shown.assign(ci_low=shown["ci_low"].where(shown["ci_low"] > 0, shown["mean"] / 100))
        plotting.grouped_bars(ax, shown, "metric", "mean", "ci_low", "ci_high", order=STEPS,
                              hue_order=sorted(shown["platform"].unique()), missing="not applicable",
                              points=life[life["metric"].isin(STEPS)].assign(mean=lambda f: f["value"]))
        ax.set_yscale("log")
        ax.set_xlabel("step")
        ax.set_ylabel(f"seconds (log scale), {ci_label(s, shown)}")
        ax.legend(title="platform", fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
        reasons = not_applicable(life, s)
        timed = step_resolutions(life)
        notes = ([f"timed to: {timed}"] if timed else []) + (["not applicable: " + "; ".join(reasons)] if reasons else [])
        if notes:
            ax.text(0, -0.22, "\n".join(notes), transform=ax.transAxes, fontsize=7, color="dimgray", va="top")
        if reasons:
            numbers["not applicable"] = "\n".join(reasons)
        if timed:
            numbers["resolution of the steps' end (the harness polls for it)"] = timed
        numbers[f"mean seconds per step (n per cell: {summary['n'].min()} to {summary['n'].max()})"] = (
            summary.pivot_table(index="platform", columns="metric", values="mean").reindex(columns=STEPS))
    ax.set_title(f"Operational flexibility (thesis Tables 5.1-5.3) on testbed {s.testbed!r}")
    return Drawn(fig, numbers)


VCPU_COUNTS = [1, 2, 4, 8]
RATIO = ["ratio", "ratio_ci_low", "ratio_ci_high"]


def cpu_scaling(table, s) -> tuple[pd.DataFrame, pd.DataFrame]:
    """cpu_scaling's rows and each platform's events per second relative to the baseline's per vCPU count."""
    scaling = results.view(table, "cpu_scaling", metric="events_per_second")
    columns = ["vcpus", "platform", "n", "oversubscribed", *RATIO]
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
                ' to native at the same count, with Fieller confidence intervals; hatched bars ran oversubscribed.')
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
        order = sorted(part["platform"])
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
    fig.suptitle(f"CPU performance per vCPU count relative to {s.baseline} (thesis Figs. 4.1-4.4), testbed {s.testbed!r}")
    fig.tight_layout()
    return Drawn(fig, {f"events/s relative to {s.baseline}": relative}, digits=3)


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


@figure(PAPER, "fig4-5-4-7-memory", title="Kumar 2013 thesis Figs. 4.5-4.7", benchmarks=["memory_scaling"],
        claims=[], caption="sysbench memory read and write throughput in guests with memory below, equal to and above the host's"
                ' (containers: memory limit), relative to native, with Fieller confidence intervals.')
def memory(table, s) -> Drawn:
    relative = memory_scaling(table, s)
    chosen = [("Fig. 4.6: guest < host", lambda f: f < 1), ("Fig. 4.5: guest = host", lambda f: f == 1),
              ("Fig. 4.7: guest > host", lambda f: f > 1)]
    fig, axes = panels(3, 12, 3.8)
    for ax, (title, pick) in zip(axes, chosen):
        part = relative[relative["fraction"].map(pick)] if not relative.empty else relative
        ax.set_title(title if part.empty else f"{title} ({part['guest_mb'].iloc[0]} MB, x{part['fraction'].iloc[0]:g})")
        if part.empty:
            plotting.unavailable(ax, f"no runs of this size\n(not configured, refused\nor no {s.baseline!r} baseline)")
            continue
        fraction = part["fraction"].iloc[0]
        runs = results.view(table, "memory_scaling", metric="throughput")
        runs = runs.assign(oper=runs["param_oper"], fraction=runs["param_fraction"])
        # the baseline runs at every fraction (native has no guest size): the mean per operation
        dots = run_ratios(runs.assign(fraction=runs["fraction"].where(runs["platform"] != s.baseline, fraction)),
                          s, "fraction", fraction, by="oper")
        plotting.grouped_bars(ax, part, x="oper", value="ratio", low="ratio_ci_low", high="ratio_ci_high",
                              order=sorted(part["oper"].unique()), hue_order=sorted(part["platform"].unique()),
                              points=dots)
        ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
        ax.legend(fontsize=7)
    _vs_baseline(axes[0], s, "MiB/s")
    fig.suptitle(f"Memory throughput relative to {s.baseline} by guest memory (thesis Figs. 4.5-4.7), testbed {s.testbed!r}")
    fig.tight_layout()
    return Drawn(fig, {f"MiB/s relative to {s.baseline}": relative}, digits=3)


# the victim's metric per resource it stresses
VICTIM_METRIC = {"cpu": "events_per_second", "memory": "throughput", "disk": "bw", "network": "throughput"}


def isolation_efficiency(table, s) -> pd.DataFrame:
    """Per resource, platform and limits: the victim's value beside a stressing neighbour divided by its value alone."""
    iso = results.view(table, "isolation")
    columns = ["resource", "platform", "limits", "n_alone", "n_stress", "efficiency", "ci_low", "ci_high"]
    if iso.empty:
        return pd.DataFrame(columns=columns)
    iso = iso[iso["metric"] == iso["param_resource"].map(VICTIM_METRIC)]
    keep = pd.Series(True, index=iso.index)
    if "direction" in iso:  # fio: the write side
        keep &= ~((iso["param_resource"] == "disk") & (iso["direction"] != "write"))
    if "side" in iso:  # iperf3: the receiver
        keep &= ~((iso["param_resource"] == "network") & (iso["side"] != "receiver"))
    iso = iso[keep]
    by = ["param_resource", "platform", "param_limits"]
    alone = {key: g[g["param_neighbour"] == "none"]["value"] for key, g in iso.groupby(by)}
    rows = ratio_rows(((key, g[g["param_neighbour"] == "stress"]) for key, g in iso.groupby(by)), alone.get, s,
                      resource=lambda k, _: k[0], platform=lambda k, _: k[1], limits=lambda k, _: k[2],
                      n_alone=lambda k, _: len(alone[k]), n_stress=lambda _, g: len(g))
    frame = pd.DataFrame(rows, columns=["resource", "platform", "limits", "n_alone", "n_stress", *RATIO])
    return frame.rename(columns={"ratio": "efficiency", "ratio_ci_low": "ci_low", "ratio_ci_high": "ci_high"})[columns]


def isolation_runs(table) -> pd.DataFrame:
    """Each run beside a stressing neighbour over the mean of the runs alone (the dots on the bars)."""
    iso = results.view(table, "isolation")
    if iso.empty:
        return pd.DataFrame(columns=["resource", "platform", "limits", "efficiency"])
    iso = iso[iso["metric"] == iso["param_resource"].map(VICTIM_METRIC)]
    if "direction" in iso:
        iso = iso[~((iso["param_resource"] == "disk") & (iso["direction"] != "write"))]
    if "side" in iso:
        iso = iso[~((iso["param_resource"] == "network") & (iso["side"] != "receiver"))]
    by = ["param_resource", "platform", "param_limits"]
    alone = iso[iso["param_neighbour"] == "none"].groupby(by)["value"].mean()
    stressed = iso[iso["param_neighbour"] == "stress"]
    ratio = stressed["value"] / pd.Series(list(zip(*(stressed[c] for c in by))), index=stressed.index).map(alone)
    return pd.DataFrame({"resource": stressed["param_resource"], "platform": stressed["platform"],
                         "limits": stressed["param_limits"], "efficiency": ratio}).dropna()


# limits off / on: greys, which no platform has (a platform's colour means that platform, everywhere)
LIMITS_COLOURS = {"limits off": "#d0d0d0", "limits on": "#7a7a7a"}


@figure(PAPER, "fig6-2-6-5-isolation", title="Kumar 2013 thesis Figs. 6.2-6.5", benchmarks=["isolation"],
        claims=["kumar2013-isolation-*"],
        caption='isolation efficiency (victim performance beside a neighbour stressing the same resource / alone) for'
                ' CPU, memory, network and disk, with resource limits off and on, with Fieller confidence intervals.')
def isolation(table, s) -> Drawn:
    efficiency, each_run = isolation_efficiency(table, s), isolation_runs(table)
    resources = [("cpu", "Fig. 6.2: CPU"), ("memory", "Fig. 6.3: memory"), ("network", "Fig. 6.4: network"),
                 ("disk", "Fig. 6.5: disk I/O")]
    fig, axes = panels(4, 14, 3.8)
    for ax, (resource, title) in zip(axes, resources):
        part = efficiency[efficiency["resource"] == resource]
        ax.set_title(title)
        if part.empty:
            plotting.unavailable(ax, f"no {resource} isolation runs on this testbed: not measured at its scale "
                                     "(config/config.yaml, isolation: resources)")
            continue
        shown = part.assign(setting="limits " + part["limits"])
        runs = each_run[each_run["resource"] == resource]
        plotting.grouped_bars(ax, shown, x="platform", value="efficiency", low="ci_low", high="ci_high", hue="setting",
                              order=baseline_first(part["platform"], s.baseline),
                              hue_order=[h for h in LIMITS_COLOURS if h in set(shown["setting"])],
                              colors=LIMITS_COLOURS, points=runs.assign(setting="limits " + runs["limits"]))
        ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
        ax.tick_params(axis="x", labelrotation=30)
        ax.legend(fontsize=7)
    axes[0].set_ylabel(f"efficiency = with neighbour / alone ({s.confidence:.0%} CI)")
    fig.suptitle(f"Isolation efficiency, neighbour stressing the same resource (thesis Figs. 6.2-6.5), testbed {s.testbed!r}")
    fig.tight_layout()
    return Drawn(fig, {"isolation efficiency": efficiency}, digits=3)
