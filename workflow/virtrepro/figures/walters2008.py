"""Walters et al. 2008, A comparison of virtualization technologies for HPC: Figs. 1-4."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from .. import plotting, results, stats
from ..platforms.catalog import BASELINE
from .registry import Drawn, figure
from .common import (at_size, baseline_first, ci_label, footnote, lines_with_bands, npb_relative_bars, published_panel, short_why,
                     npb_relative_time, stand_in_present, summarize)
from .common import netperf as netperf_summaries

PAPER = "walters2008"
# the paper's bandwidths in percent of native (Section 3.1), by paper platform
PAPER_BANDWIDTH = {"OpenVZ": 35.3, "VMware Server": 25.9}


@figure(PAPER, "fig1-netperf-latency-bandwidth", title="Walters 2008 Fig. 1", benchmarks=["netperf"],
        claims=["walters2008-netperf-*"],
        caption='(a) netperf TCP_RR one-way latency over the message sizes (log scale), (b) TCP_STREAM bandwidth as a'
                ' percentage of the baseline platform, between two instances of each platform.')
def fig1(table, s) -> Drawn:
    latency, bandwidth = netperf_summaries(table, s)
    size = "message size (bytes)"
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    numbers = {}
    if latency.empty and bandwidth.empty:
        for ax in axes:
            plotting.unavailable(ax, f"no netperf runs on testbed {s.testbed!r}")
    else:
        ax = axes[0]
        lines_with_bands(ax, latency, size)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel(size)
        ax.set_ylabel(f"one-way latency (us, log scale), {ci_label(s)}")
        ax.set_title("(a) TCP_RR half round trip latency")
        # below the panel: inside, it covers the bands
        ax.legend(title="platform", fontsize="x-small", ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.2))
        numbers["one-way latency (half round trip, us), mean over repetitions"] = latency.pivot_table(
            index=size, columns="platform", values="mean")
        numbers["TCP_STREAM bandwidth (Mbit/s), mean over repetitions"] = bandwidth.pivot_table(
            index=size, columns="platform", values="mean")
        largest, bw = at_size(bandwidth, max)
        ax = axes[1]
        if s.baseline in bw.index:
            percent = bw / bw[s.baseline] * 100
            order = baseline_first(percent.index, s.baseline)
            ax.bar(order, percent[order], color=[plotting.platform_palette(order)[p] for p in order])
            # the paper's percentages of native, on the platform that stands in for the paper's
            for paper_platform, paper_value in PAPER_BANDWIDTH.items():
                platform = stand_in_present(paper_platform, order)
                if platform:
                    x = order.index(platform)
                    ax.plot([x - 0.4, x + 0.4], [paper_value] * 2, color="black", linestyle="--")
                    ax.annotate(f"paper: {paper_platform} {paper_value} %", (x, paper_value), textcoords="offset points",
                                xytext=(0, 4), ha="center", fontsize=8)
            ax.set_ylabel(f"bandwidth, % of {s.baseline}")
            ax.set_title(f"(b) TCP_STREAM bandwidth, {largest}-byte messages")
            smallest, lat = at_size(latency, min)
            numbers["ours"] = pd.DataFrame({
                f"{smallest}-byte latency (us)": lat,
                f"latency / {s.baseline}": lat / lat.get(s.baseline, float("nan")),
                f"bandwidth at {largest} B (% of {s.baseline})": percent,
            })
        else:
            plotting.unavailable(ax, f"bandwidth relative to {s.baseline!r} needs {s.baseline!r} runs")
    fig.suptitle(f"Walters 2008 Fig. 1 redrawn on testbed {s.testbed!r}")
    return Drawn(fig, numbers)


def iozone_summary(table, s) -> tuple[pd.DataFrame, pd.DataFrame]:
    """IOZone's reader and writer tests with 1 MB records: the rows (MB/s, file size in MB) and their summary."""
    io = results.view(table, "iozone", metric=["write", "read"])
    io = io[io["record_kb"] == 1024] if len(io) else io
    io = io.assign(**{"MB/s": io["value"] / 1024, "file size (MB)": io["file_size_kb"] // 1024,
                      "test": io["metric"].map({"write": "writer", "read": "reader"})}) if len(io) else io
    return io, summarize(io, ["platform", "test", "file size (MB)"], s, value="MB/s")


@figure(PAPER, "fig2-iozone-reader-writer", title="Walters 2008 Fig. 2", benchmarks=["iozone"],
        claims=["walters2008-iozone-*", "walters2008-conclusion-openvz-low-overhead-file-system"],
        caption='IOZone writer and reader bandwidth over the file sizes with 1 MB records per platform (log scale).')
def fig2(table, s) -> Drawn:
    io, summary = iozone_summary(table, s)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    palette = plotting.platform_palette(summary["platform"].unique())
    for ax, test in zip(axes, ["reader", "writer"]):
        part = summary[summary["test"] == test]
        if part.empty:
            plotting.unavailable(ax, f"no iozone {test} runs on testbed {s.testbed!r}")
            continue
        sns.lineplot(data=part, x="file size (MB)", y="mean", hue="platform", palette=palette, marker="o", ax=ax)
        for platform, group in part.groupby("platform"):
            ax.fill_between(group["file size (MB)"], group["ci_low"], group["ci_high"], color=palette[platform], alpha=0.2)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")  # software full virtualization is an order of magnitude below the rest
        sizes = sorted(part["file size (MB)"].unique())
        ax.set_xticks(sizes, labels=[str(size) for size in sizes])
        ax.set_title(f"IOZone {test} test, 1 MB records")
        ax.set_ylabel(f"bandwidth (MB/s, log scale), {ci_label(s)}")
    fig.suptitle(f"Walters 2008 Fig. 2 redrawn on testbed {s.testbed!r}")
    footnote(fig, io)
    numbers = {}
    if len(summary):
        means = summary.pivot_table(index=["test", "file size (MB)"], columns="platform", values="mean")
        numbers["mean bandwidth (MB/s)"] = means
        numbers["repetitions per point"] = f"{summary['n'].min()} to {summary['n'].max()}"
        others = [p for p in means.columns if p != s.baseline]
        if s.baseline in means.columns and others:
            numbers[f"overhead vs {s.baseline} (%)"] = (
                means[others].rsub(means[s.baseline], axis=0).div(means[s.baseline], axis=0) * 100)
    return Drawn(fig, numbers, digits=1)


@figure(PAPER, "fig3-npb-relative-time", title="Walters 2008 Fig. 3 redrawn", benchmarks=["npb_serial", "npb_omp"],
        claims=["walters2008-npb-serial-*", "walters2008-npb-omp-*", "walters2008-conclusion-openvz-low-overhead-npb",
                "walters2008-conclusion-vmware-reasonable-cpu"],
        caption="run time of each NPB kernel relative to the baseline platform's (1 = as fast as the baseline), (a) "
                'serial, (b) OpenMP on every core. Empty panels say why (for example NPB not available on the '
                'testbed).')
def fig3(table, s) -> Drawn:
    npb = results.view(table, ["npb_serial", "npb_omp"], metric="time")
    # the paper's statements (no runs here) are rows of their own in each panel: no shared axis then
    fig, axes = plt.subplots(1, 2, figsize=(12, 4), sharey=not npb.empty, gridspec_kw={"wspace": 0.6 if npb.empty else 0.2})
    numbers = {}
    for ax, name, title in [(axes[0], "npb_serial", "(a) serial"), (axes[1], "npb_omp", "(b) OpenMP, every core")]:
        part = npb[npb["benchmark"] == name]
        if name == "npb_omp" and len(part):
            part = part[part["param_threads"] == part["param_threads"].max()]
        if npb.empty:  # the paper's own numbers, and why ours are missing
            shown = published_panel(ax, s, PAPER, name, short_why(s, name))
            numbers[f"{title}: published"] = shown[["platform_in_paper", "parameters", "value"]]
            continue
        if s.baseline not in set(part["platform"]):
            plotting.unavailable(ax, f"no {name} runs of {s.baseline!r} and another platform")
            continue
        relative = npb_relative_time(part, s.baseline)
        npb_relative_bars(ax, relative, s.baseline, f"run time relative to {s.baseline}")
        ax.set_title(title)
        numbers[f"{title}: run time / {s.baseline}"] = relative
    fig.suptitle(f"Walters 2008 Fig. 3 redrawn on testbed {s.testbed!r}")
    return Drawn(fig, numbers)


@figure(PAPER, "fig4-npb-mpi-scaling", title="Walters 2008 Fig. 4 redrawn", benchmarks=["npb_mpi"],
        claims=["walters2008-npb-mpi-*", "walters2008-conclusion-vmware-unable-to-cope-mpi"],
        caption='NPB MPI run time (mean with its Student-t interval) against the number of MPI processes for EP, BT, '
                'CG and SP, per platform; solid lines in one instance, dashed across two instances of the platform '
                'over its private network.')
def fig4(table, s) -> Drawn:
    mpi = results.view(table, "npb_mpi", metric="time")
    fig, axes = plt.subplots(1, 4, figsize=(15, 3.8))
    numbers = {}
    if mpi.empty:
        published_panel(axes[0], s, PAPER, "npb_mpi", short_why(s, "npb_mpi"))
        for ax in axes[1:]:
            ax.set_axis_off()
    for ax, kernel in zip(axes, ["ep", "bt", "cg", "sp"] if len(mpi) else []):
        part = mpi[mpi["param_kernel"] == kernel]
        if part.empty:
            plotting.unavailable(ax, f"no {kernel.upper()} MPI runs")
            continue
        summary = stats.summarize(part.assign(procs=part["param_procs"], nodes=part["param_nodes"]),
                                  by=["platform", "nodes", "procs"], level=s.confidence)
        numbers[f"NPB {kernel.upper()} run time (s)"] = summary.pivot_table(index=["nodes", "procs"], columns="platform",
                                                                             values="mean")
        palette = plotting.platform_palette(sorted(summary["platform"].unique()))
        for (platform, nodes), group in summary.groupby(["platform", "nodes"]):
            ax.errorbar(group["procs"], group["mean"], yerr=[group["mean"] - group["ci_low"], group["ci_high"] - group["mean"]],
                        marker="o" if nodes == 1 else "s", linestyle="-" if nodes == 1 else "--", capsize=3,
                        color=palette[platform], label=f"{platform}, {nodes} instance{'s' if nodes > 1 else ''}")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("MPI processes")
        ax.set_ylabel("run time (s)")
        ax.set_title(f"NPB {kernel.upper()} (MPI)")
        ax.legend(fontsize=7)
    fig.suptitle(f"Walters 2008 Fig. 4 redrawn on testbed {s.testbed!r}")
    return Drawn(fig, numbers)


# for the notebook's table beside the paper's numbers
PAPER_NUMBERS = pd.DataFrame({
    "paper's platform": [BASELINE, "OpenVZ", "VMware Server", "Xen"],
    "paper latency / native": [1.0, 84.62 / 80.0, "> 3", 159.89 / 80.0],
    "paper bandwidth (% of native)": [100.0, PAPER_BANDWIDTH["OpenVZ"], PAPER_BANDWIDTH["VMware Server"], 94.5],
})
