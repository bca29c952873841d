"""Walters et al. 2008, A comparison of virtualization technologies for HPC: Figs. 1-4."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
from matplotlib.lines import Line2D
from matplotlib.ticker import NullLocator

from ..analysis import claims, stats
from ..report import plotting
from .. import results
from ..benchmarks.npb import process_count_problem
from ..platforms.catalog import BASELINE
from .registry import Drawn, figure, get
from .common import (NO_INTERVAL_MARK, at_size, baseline_first, ci_label, comparable, footnote, lines_with_bands,
                     log_row_needed, no_interval_text, npb_compared, npb_ratio_bars, platform_order, published_panel,
                     short_why, stand_in_present, summarize)
from .common import PUBLISHED_GREY, published_rows
from .common import NETPERF_SIZE, NETPERF_TOPOLOGY, claim_thresholds, compare, near_one, netperf_rows, note_below, untranslated
from .common import netperf as netperf_summaries

PAPER = "walters2008"
# the paper's bandwidths in percent of native (Section 3.1), by paper platform
PAPER_BANDWIDTH = {"OpenVZ": 35.3, "VMware Server": 25.9}
# the columns of an NPB ratio (common.npb_ratio_bars) a reader wants to see
NPB_RATIO = ["kernel", "platform", "n_platform", "n_baseline", "ratio", "ratio_ci_low", "ratio_ci_high"]


@figure(PAPER, "fig1-netperf-latency-bandwidth", title="Walters 2008 Fig. 1", benchmarks=["netperf"],
        claims=["walters2008-netperf-*"],
        caption='(a) netperf TCP_RR one-way latency over the message sizes (log scale), with the paper\'s published '
                'latencies as grey stars, (b) TCP_STREAM bandwidth as a percentage of the baseline platform, between two '
                'instances of each platform, (c) the latency of the platforms that do not translate guest code relative '
                'to the baseline\'s on a linear axis around 1, with the bounds of the latency claims.')
def fig1(table, s) -> Drawn:
    latency, bandwidth = netperf_summaries(table, s)
    fig, axes = plt.subplots(1, 3, figsize=(17, 4.2), gridspec_kw={"width_ratios": [4, 4, 3]})
    numbers = {}
    if latency.empty and bandwidth.empty:
        for ax in axes:
            plotting.unavailable(ax, f"no netperf runs on testbed {s.testbed!r}")
    else:
        bare = _latency_panel(axes[0], latency, bandwidth, s, numbers)
        _latency_near_one(axes[2], table, s, numbers)
        _bandwidth_panel(axes[1], table, latency, bandwidth, s, numbers)
    fig.suptitle(f"Walters 2008 Fig. 1 redrawn on testbed {s.testbed!r}")
    if not (latency.empty and bandwidth.empty):
        fig.tight_layout()
        bands = " ".join(ci_label(s, latency).split())
        note_below(fig, f"(a) {bands}" + (f"; no interval: {'; '.join(bare)}" if bare else "") + ". "
                   + NETPERF_TOPOLOGY.format(testbed=s.testbed))
    return Drawn(fig, numbers)


def _latency_panel(ax, latency, bandwidth, s, numbers: dict) -> list[str]:
    """(a) the latency over the message sizes, with the paper's latencies as grey stars; the points
    without an interval, in words."""
    size = NETPERF_SIZE
    bare = lines_with_bands(ax, latency, size)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(size)
    ax.set_ylabel("one-way latency (us, log scale)")
    ax.set_title("(a) TCP_RR half round trip latency")
    # the paper's own latencies (Section 3.1, data/reference): grey stars at their message size
    published = published_rows(s.reference_dir, PAPER, "netperf", unit="us")
    published = published[published["metric"] == "half_round_trip_latency"]
    for _, row in published.iterrows():
        p = dict(kv.split("=", 1) for kv in str(row["parameters"]).split(";") if "=" in kv)
        ax.plot(float(p["size"]), float(row["value"]), "*", color=PUBLISHED_GREY, markersize=11, zorder=5)
        ax.annotate(f"paper: {row['platform_in_paper']} {float(row['value']):g} us", (float(p["size"]), float(row["value"])),
                    textcoords="offset points", xytext=(8, 4 if row["platform_in_paper"] != BASELINE else -10),
                    fontsize=7, color=PUBLISHED_GREY)
    if len(published):
        numbers["the paper's latencies (us)"] = published[["platform_in_paper", "parameters", "value"]]
    # below the panel: inside, it covers the bands
    ax.legend(title="platform", fontsize="x-small", ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.32))
    numbers["one-way latency (half round trip, us), median over repetitions"] = latency.pivot_table(
        index=size, columns="platform", values="median")
    numbers["TCP_STREAM bandwidth (Mbit/s), median over repetitions"] = bandwidth.pivot_table(
        index=size, columns="platform", values="median")
    return bare


def _latency_near_one(ax, table, s, numbers: dict) -> None:
    """(c) the latency of the platforms that do not translate against the baseline's, near 1 with the
    bounds of the latency claims (a few per cent cannot be read on (a)'s log axis)."""
    size = NETPERF_SIZE
    near = compare(netperf_rows(table, "half_round_trip_latency"), s, [size], higher_is_better=False)
    if not len(near):
        plotting.unavailable(ax, f"latency relative to {s.baseline!r} needs {s.baseline!r} runs")
        return
    near = near.assign(**{size: near[size].astype(int).astype(str)})
    order = [str(x) for x in sorted(near[size].astype(int).unique())]
    near_one(ax, near, s, size, order,
             claim_thresholds(s, get(PAPER, "fig1-netperf-latency-bandwidth").claims, "netperf",
                              untranslated(near["platform"]), {"test": "TCP_RR"}), "latency")
    ax.set_xlabel(size)
    ax.set_title("(c) latency near 1, with the claims' bounds", fontsize="small")
    numbers[f"latency / {s.baseline}"] = near.pivot_table(index=size, columns="platform", values="ratio")


def _bandwidth_panel(ax, table, latency, bandwidth, s, numbers: dict) -> None:
    """(b) each platform's Hodges-Lehmann ratio to the baseline's bandwidth at the largest message,
    with its exact Mann-Whitney interval, in per cent, and the paper's percentages on their stand-ins."""
    size = NETPERF_SIZE
    largest, bw = at_size(bandwidth, max)
    if s.baseline not in bw.index:
        plotting.unavailable(ax, f"bandwidth relative to {s.baseline!r} needs {s.baseline!r} runs")
        return
    order = baseline_first(bw.index, s.baseline)
    stream = netperf_rows(table, "throughput")
    compared = compare(stream[stream[size] == largest], s, [size]).set_index("platform")

    def percent(column):
        return [100.0 if p == s.baseline else compared[column].get(p, float("nan")) * 100 for p in order]

    shown = pd.DataFrame({"platform": order, "x": size, "percent": percent("ratio"), "low": percent("ratio_ci_low"),
                          "high": percent("ratio_ci_high")})
    shown.loc[shown["platform"] == s.baseline, ["low", "high"]] = float("nan")  # the reference itself
    ax.bar(order, shown["percent"], color=[plotting.platform_palette(order)[p] for p in order])
    ax.errorbar(order, shown["percent"], yerr=[shown["percent"] - shown["low"], shown["high"] - shown["percent"]],
                fmt="none", ecolor="black", capsize=3, linewidth=1)
    # the paper's percentages of native, on the platform that stands in for the paper's
    for paper_platform, paper_value in PAPER_BANDWIDTH.items():
        platform = stand_in_present(paper_platform, order)
        if platform:
            x = order.index(platform)
            ax.plot([x - 0.4, x + 0.4], [paper_value] * 2, color="black", linestyle="--")
            ax.annotate(f"paper: {paper_platform}\n{paper_value} %", (x, paper_value), textcoords="offset points",
                        xytext=(0, 3), ha="center", va="bottom", fontsize=7,
                        bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none", "alpha": 0.8})
    ax.set_ylabel(f"bandwidth, % of {s.baseline}\n(Hodges-Lehmann ratio, {s.confidence:.0%} CI)")
    ax.set_title(f"(b) TCP_STREAM bandwidth, {largest}-byte messages")
    smallest, lat = at_size(latency, min)
    numbers["ours"] = pd.DataFrame({
        f"{smallest}-byte latency (us)": lat,
        f"latency / {s.baseline}": lat / lat.get(s.baseline, float("nan")),
        f"bandwidth at {largest} B (% of {s.baseline})": shown.set_index("platform")["percent"],
    })


def iozone_summary(table, s) -> tuple[pd.DataFrame, pd.DataFrame]:
    """IOZone's reader and writer tests with 1 MB records: the rows (MB/s, file size in MB) and their summary."""
    io = results.view(table, "iozone", metric=["write", "read"])
    io = io[io["record_kb"] == 1024] if len(io) else io
    io = io.assign(**{"MB/s": io["value"] / 1024, "file size (MB)": io["file_size_kb"] // 1024,
                      "test": io["metric"].map({"write": "writer", "read": "reader"})}) if len(io) else io
    return io, summarize(io, ["platform", "test", "file size (MB)"], s, value="MB/s")


@figure(PAPER, "fig2-iozone-reader-writer", title="Walters 2008 Fig. 2", benchmarks=["iozone"],
        claims=["walters2008-iozone-*", "walters2008-conclusion-openvz-low-overhead-file-system"],
        caption='IOZone writer and reader bandwidth over the file sizes with 1 MB records per platform (log scale); under '
                'each panel, the bandwidth of the platforms that do not translate guest code relative to the baseline\'s '
                '(Hodges-Lehmann ratio with its interval) on a linear axis around 1, with the bounds of the IOZone claims.')
def fig2(table, s) -> Drawn:
    io, summary = iozone_summary(table, s)
    # under each panel its platforms near 1 on a linear axis: a few per cent, invisible on the log axis
    # beside a translated VM's tenfold gap, read there with the claims' bounds
    fig, grid = plt.subplots(2, 2, figsize=(11, 6.6), gridspec_kw={"height_ratios": [3, 2]})
    axes, zooms = grid[0], grid[1]
    axes[1].sharey(axes[0])
    palette = plotting.platform_palette(platform_order(summary["platform"], s.baseline))
    numbers, drawn = {}, []
    for ax, zoom, test in zip(axes, zooms, ["reader", "writer"]):
        part = summary[summary["test"] == test]
        if part.empty:
            plotting.unavailable(ax, f"no iozone {test} runs on testbed {s.testbed!r}")
            zoom.set_axis_off()
            continue
        sns.lineplot(data=part, x="file size (MB)", y="median", hue="platform", palette=palette, marker="o", ax=ax,
                     hue_order=[p for p in palette if p in set(part["platform"])])
        for platform, group in part.groupby("platform"):
            ax.fill_between(group["file size (MB)"], group["ci_low"], group["ci_high"], color=palette[platform], alpha=0.2)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")  # software full virtualization is an order of magnitude below the rest
        sizes = sorted(part["file size (MB)"].unique())
        ax.set_xticks(sizes, labels=[str(size) for size in sizes])
        ax.set_title(f"IOZone {test} test, 1 MB records")
        ax.set_xlabel("")
        ax.set_ylabel(f"bandwidth (MB/s, log scale),\n{ci_label(s, dagger=False)}" if ax is axes[0] else "")
        near = _iozone_near_one(zoom, io[io["test"] == test], s, test, [str(size) for size in sizes])
        if len(near):
            numbers[f"{test}: bandwidth / {s.baseline}"] = near.pivot_table(index="file size (MB)", columns="platform",
                                                                            values="ratio")
            drawn.append(near)
        zoom.set_xlabel("file size (MB)")
    fig.suptitle(f"Walters 2008 Fig. 2 redrawn on testbed {s.testbed!r}")
    if len(summary):
        fig.tight_layout()
    footnote(fig, io)
    if drawn:
        note_below(fig, no_interval_text(pd.concat(drawn), "ratio_ci_low", "ratio_ci_high", "ratio"))
    if len(summary):
        means = summary.pivot_table(index=["test", "file size (MB)"], columns="platform", values="median")
        numbers["median bandwidth (MB/s)"] = means
        numbers["repetitions per point"] = f"{summary['n'].min()} to {summary['n'].max()}"
        others = [p for p in means.columns if p != s.baseline]
        if s.baseline in means.columns and others:
            numbers[f"overhead vs {s.baseline} (%)"] = (
                means[others].rsub(means[s.baseline], axis=0).div(means[s.baseline], axis=0) * 100)
    return Drawn(fig, numbers, digits=1)


def _iozone_near_one(ax, io: pd.DataFrame, s, test: str, order: list[str]) -> pd.DataFrame:
    """One test's bandwidth of the platforms that do not translate against the baseline's per file size,
    near 1 with the bounds of the IOZone claims on that test (its metric); the comparison drawn."""
    near = compare(io, s, ["file size (MB)"])
    near = near[near["platform"].isin(untranslated(near["platform"]))]  # a translating VM: the log row above
    if not len(near):
        plotting.unavailable(ax, f"bandwidth relative to {s.baseline!r} needs {s.baseline!r} runs")
        return near
    near = near.assign(**{"file size (MB)": near["file size (MB)"].astype(int).astype(str)})
    metric = {"reader": "read", "writer": "write"}[test]
    near_one(ax, near, s, "file size (MB)", order,
             claim_thresholds(s, get(PAPER, "fig2-iozone-reader-writer").claims, "iozone", untranslated(near["platform"]),
                              metric=metric), "bandwidth", higher_is_better=True)
    ax.set_title(f"{test}: near 1, with the claims' bounds", fontsize="small")
    return near


@figure(PAPER, "fig3-npb-relative-time", title="Walters 2008 Fig. 3 redrawn", benchmarks=["npb_serial", "npb_omp"],
        claims=["walters2008-npb-serial-*", "walters2008-npb-omp-*", "walters2008-conclusion-openvz-low-overhead-npb",
                "walters2008-conclusion-vmware-reasonable-cpu"],
        caption="run time of each NPB kernel, at the problem class it was run (kernel.class under the bars), relative "
                "to the baseline platform's (1 = as fast as the baseline), the Hodges-Lehmann ratio with its "
                "exact Mann-Whitney interval, (a) serial, (b) OpenMP on every core: the platforms that do not translate "
                "guest code on a linear axis around 1 with the bounds of the claims, and, where a platform translates "
                "(a QEMU TCG guest, tens of times slower), every platform as bars on a log axis above them. A bar or point "
                f'without an interval is marked ({NO_INTERVAL_MARK}; open) and the note below says why; empty panels say why '
                '(for example NPB not available on the testbed).')
def fig3(table, s) -> Drawn:
    npb = results.view(table, ["npb_serial", "npb_omp"], metric="time")
    # the paper's statements (no runs here) are rows of their own in each panel: no shared axis then
    # (a gridspec of its own spacing is one tight_layout cannot arrange: only where no tight_layout follows)
    if npb.empty:
        fig, axes = plt.subplots(1, 2, figsize=(12, 4), gridspec_kw={"wspace": 0.6})
        zooms = [None, None]
    elif log_row_needed(npb["platform"]):  # under each log panel, the platforms that do not translate near 1
        fig, grid = plt.subplots(2, 2, figsize=(12, 7), gridspec_kw={"height_ratios": [3, 2]})
        axes, zooms = grid[0], grid[1]
        axes[1].sharey(axes[0])  # the ratios on one log axis; each panel near 1 has the limits its claims need
    else:  # no platform translates: the panels near 1 show every platform, no log row repeats them
        fig, zooms = plt.subplots(1, 2, figsize=(12, 4))
        axes = [None, None]
    numbers, drawn = {}, []
    fig3_claims = get(PAPER, "fig3-npb-relative-time").claims
    for ax, zoom, name, title in [(axes[0], zooms[0], "npb_serial", "(a) serial"),
                                  (axes[1], zooms[1], "npb_omp", "(b) OpenMP, every core")]:
        part = npb[npb["benchmark"] == name]
        if name == "npb_omp" and len(part):
            part = part[part["param_threads"] == part["param_threads"].max()]
        if npb.empty:  # the paper's own numbers, and why ours are missing
            shown = published_panel(ax, s, PAPER, name, short_why(s, name))
            numbers[f"{title}: published"] = shown[["platform_in_paper", "parameters", "value"]]
            continue
        if not comparable(part, s.baseline):
            plotting.unavailable(ax if ax is not None else zoom, f"no {name} runs of {s.baseline!r} and another platform")
            if ax is not None:
                zoom.set_axis_off()
            continue
        if ax is not None:
            compared = npb_ratio_bars(ax, part, s)
            ax.set_title(title)
            ax.set_xlabel("")
            ax.legend(title="platform", fontsize="small")
            order = [t.get_text() for t in ax.get_xticklabels()]
            zoom.set_title(f"{title}: near 1, with the claims' bounds", fontsize="small")
            if ax is not axes[0]:
                ax.set_ylabel("")  # the shared axis says it once
        else:
            compared = npb_compared(part, s)
            order = sorted(compared["kernel"].unique())
            zoom.set_title(f"{title}, with the claims' bounds")
        near_one(zoom, compared, s, "kernel", order,
                 claim_thresholds(s, fig3_claims, name, untranslated(compared["platform"])))
        zoom.set_xlabel("NPB kernel.class")
        if ax is None:
            zoom.legend(title="platform", fontsize="small")
        numbers[f"{title}: run time / {s.baseline}"] = compared[NPB_RATIO]
        drawn.append(compared)
    fig.suptitle(f"Walters 2008 Fig. 3 redrawn on testbed {s.testbed!r}")
    if drawn:
        fig.tight_layout()
        note_below(fig, no_interval_text(pd.concat(drawn), "ratio_ci_low", "ratio_ci_high", "ratio"))
    return Drawn(fig, numbers)


FIG4 = "fig4-npb-mpi-scaling"
FIG4_KERNELS = ["ep", "bt", "cg", "sp"]
# a series' marker and line by its number of instances, fewest first (one instance: circles, solid)
INSTANCE_STYLES = [("o", "-"), ("s", "--"), ("^", ":"), ("D", "-.")]
STYLE_GREY = "gray"  # the legend's instance entries: no platform's colour


def instances(nodes: int) -> str:
    return f"{nodes} instance{'s' if nodes > 1 else ''}"


def instances_against_one(summaries: dict) -> str:
    """In words, the run time of each multi-instance point (a square) against one instance at the same
    process count (the circle at its process count), per kernel, from fig4's summaries (kernel -> stats.summarize)."""
    parts = []
    for kernel, summary in summaries.items():
        one = summary[summary["nodes"] == 1].set_index(["platform", "procs"])["median"]
        for (nodes, procs), group in summary[summary["nodes"] > 1].groupby(["nodes", "procs"]):
            changes = [f"{plotting.platform_label(row.platform)} {(row.median / one[(row.platform, procs)] - 1) * 100:+.0f} %"
                       for row in group.itertuples() if (row.platform, procs) in one.index]
            if changes:
                parts.append(f"{kernel.upper()} at {procs} processes over {instances(nodes)}: {', '.join(changes)}")
    if not parts:
        return ""
    return ("Run time across several instances against one instance at the same process count (a square against the "
            "circle at its process count): " + "; ".join(parts) + ".")


def trend_steps(s) -> str:
    """What the trend claims fig4 tests step over, in words of the figure (their checks' ``over``)."""
    found = claims.load_claims(Path(s.reference_dir) / "claims.yaml")
    tested = set(get(PAPER, FIG4).claim_ids(found))
    over = sorted({c["check"]["over"] for c in found if c["id"] in tested and c.get("check", {}).get("kind") == "trend"})
    words = {"procs": "over process counts with the number of instances fixed (along a line of circles), not over "
                      "instances (circle to square)",
             "nodes": "over the number of instances at a fixed process count (circle to square)"}
    return " ".join(f"The trend claim below steps {words[step]}." for step in over if step in words)


def fig4_shows(mpi: pd.DataFrame, s) -> str:
    """What fig4 shows, in words for its title: the process counts, instances and machines its runs held,
    and, where they are too few for the scalability condition of the claims it tests (claims.yaml's
    ``conditions: scaling``), that it is no scaling test."""
    from ..analysis.conditions import machines

    counts = sorted(mpi["procs"].unique())
    hosts = int(machines(mpi).max())
    shown = (f"NPB MPI run time at {' and '.join(str(c) for c in counts)} process{'es' if counts[-1] > 1 else ''}, "
             f"{' or '.join(str(n) for n in sorted(mpi['nodes'].unique()))} instance(s) on {hosts} "
             f"host{'s' if hosts > 1 else ''}")
    found = claims.load_claims(Path(s.reference_dir) / "claims.yaml")
    tested = set(get(PAPER, FIG4).claim_ids(found))
    needs = [c["conditions"]["scaling"] for c in found if c["id"] in tested and "scaling" in (c.get("conditions") or {})]
    if needs:
        need = max(needs, key=lambda n: (n["counts"], n["span"]))
        if len(counts) < need["counts"] or counts[-1] / counts[0] < need["span"]:
            shown += (f"\n(not a scaling test: the paper's scalability statements need {need['counts']} or more process "
                      f"counts spanning {need['span']:g}x)")
    return shown


@figure(PAPER, FIG4, title="Walters 2008 Fig. 4 redrawn", benchmarks=["npb_mpi"],
        claims=["walters2008-npb-mpi-*", "walters2008-conclusion-vmware-unable-to-cope-mpi"],
        caption='NPB MPI run time (median with its order-statistic interval, log scale) against the number of MPI processes '
                f'for {", ".join(k.upper() for k in FIG4_KERNELS)} at the problem class each was run (in the panel '
                'title), per platform: circles and solid lines in one instance, squares and dashed lines across two instances '
                'of the platform over its private network. Under each panel, each point\'s interval in per cent of its '
                'median on a linear axis (a few per cent cannot be seen on the log axis), a point without one marked. '
                'A panel names the process counts run for other kernels that its kernel cannot run, and why.')
def fig4(table, s) -> Drawn:
    mpi = results.view(table, "npb_mpi", metric="time")
    # a row of run times on a log axis, and under it each point's interval relative to its median on a
    # linear axis: a few per cent, invisible beside a translated VM's tens of times above, read there
    fig, grid = plt.subplots(2, len(FIG4_KERNELS), figsize=(15, 5.6), squeeze=False,
                             gridspec_kw={"height_ratios": [3, 1.5]}, sharex="col")
    axes, widths = list(grid[0]), list(grid[1])
    numbers = {}
    if mpi.empty:
        published_panel(axes[0], s, PAPER, "npb_mpi", short_why(s, "npb_mpi"))
        for ax in axes[1:] + widths:
            ax.set_axis_off()
        fig.suptitle(f"Walters 2008 Fig. 4 redrawn on testbed {s.testbed!r}")
        return Drawn(fig, numbers)
    mpi = mpi.assign(procs=mpi["param_procs"], nodes=mpi["param_nodes"])
    run = sorted(mpi["procs"].unique())  # every panel's ticks: the process counts of any kernel
    style = dict(zip(sorted(mpi["nodes"].unique()), INSTANCE_STYLES))
    palette = plotting.platform_palette(baseline_first(mpi["platform"], s.baseline))
    summaries = {}
    for ax, below, kernel in zip(axes, widths, FIG4_KERNELS):
        part = mpi[mpi["param_kernel"] == kernel]
        if part.empty:
            plotting.unavailable(ax, f"no {kernel.upper()} MPI runs")
            below.set_axis_off()
            continue
        summary = stats.summarize(part, by=["platform", "nodes", "procs"], level=s.confidence)
        summaries[kernel] = summary
        numbers[f"NPB {kernel.upper()} run time (s)"] = summary.pivot_table(index=["nodes", "procs"], columns="platform",
                                                                             values="median")
        for (platform, nodes), group in summary.groupby(["platform", "nodes"]):
            marker, line = style[nodes]
            ax.errorbar(group["procs"], group["median"], yerr=[group["median"] - group["ci_low"], group["ci_high"] - group["median"]],
                        marker=marker, linestyle=line, capsize=3, color=palette[platform])
        interval_widths(below, summary, palette, style)
        ax.set_xscale("log", base=2)
        ax.set_xticks(run, labels=[str(p) for p in run])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlim(run[0] / 1.5, run[-1] * 1.5)
        ax.set_yscale("log")  # a binary-translating VM's tens of seconds beside the others' tenths
        ax.tick_params(axis="x", labelbottom=False)
        below.set_xlabel("MPI processes")
        ax.set_title(f"NPB {kernel.upper()} class {'/'.join(sorted(part['param_class'].unique()))} (MPI)")
        # the process counts other kernels ran that this one cannot (BT and SP: square counts only), and why
        why = [process_count_problem(kernel, p) for p in run if p not in set(part["procs"])]
        if any(why):
            below.annotate(plotting.wrapped(below, "not run: " + "; ".join(w for w in why if w), 8), (0.5, 0),
                           xycoords=below.xaxis.label, xytext=(0, -4), textcoords="offset points", ha="center", va="top",
                           fontsize=8, color="dimgray")
    axes[0].set_ylabel(f"run time (s, log scale),\nmedian; {s.confidence:.0%} CI below")
    widths[0].set_ylabel(f"{s.confidence:.0%} CI of the median,\n% of the median", fontsize="small")
    handles = [Line2D([], [], color=colour, linewidth=2, label=platform) for platform, colour in palette.items()]
    handles += [Line2D([], [], color=STYLE_GREY, marker=marker, linestyle=line, label=instances(nodes))
                for nodes, (marker, line) in style.items()]
    fig.suptitle(f"Walters 2008 Fig. 4 redrawn on testbed {s.testbed!r}: {fig4_shows(mpi, s)}")
    fig.tight_layout()
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0), ncol=len(handles), frameon=False,
               fontsize="small")
    if summaries:  # what the mark over a point of the lower row means
        every = pd.concat(summaries.values())
        note_below(fig, no_interval_text(every, "ci_low", "ci_high", "median"))
    said = " ".join(filter(None, [get(PAPER, FIG4).caption, instances_against_one(summaries), trend_steps(s)]))
    return Drawn(fig, numbers, summary=said)


def interval_widths(ax, summary: pd.DataFrame, palette: dict, style: dict) -> None:
    """Each point of fig4's run times (a summary's median per platform, instances and process count) as its
    interval around the median in per cent of it, on a linear axis (0: the median), side by side at each
    process count; a point without an interval marked :data:`NO_INTERVAL_MARK` at 0."""
    series = list(summary.groupby(["platform", "nodes"], sort=False).groups)
    series.sort(key=lambda key: (list(palette).index(key[0]) if key[0] in palette else len(palette), key[1]))
    for i, (platform, nodes) in enumerate(series):
        group = summary[(summary["platform"] == platform) & (summary["nodes"] == nodes)].sort_values("procs")
        x = group["procs"] * 2.0 ** ((i - (len(series) - 1) / 2) * 0.08)  # side by side on the log-2 axis
        low, high = (group["ci_low"] / group["median"] - 1) * 100, (group["ci_high"] / group["median"] - 1) * 100
        bounded = low.notna() & high.notna()
        marker, _ = style[nodes]
        ax.errorbar(x[bounded], [0] * int(bounded.sum()), yerr=[-low[bounded], high[bounded]], fmt=marker, markersize=3,
                    capsize=3, color=palette.get(platform, "#999999"), linewidth=1.2)
        for at in x[~bounded]:
            ax.plot(at, 0, marker, markersize=3, markerfacecolor="white", markeredgecolor=palette.get(platform, "#999999"))
            ax.annotate(NO_INTERVAL_MARK, (at, 0), xytext=(0, 3), textcoords="offset points", ha="center", va="bottom",
                        fontsize=9)
    ax.axhline(0, color="black", linewidth=0.6)
    ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _p=None: f"{v:+.0f}" if v else "0"))


# for the notebook's table beside the paper's numbers
PAPER_NUMBERS = pd.DataFrame({
    "paper's platform": [BASELINE, "OpenVZ", "VMware Server", "Xen"],
    "paper latency / native": [1.0, 84.62 / 80.0, "> 3", 159.89 / 80.0],
    "paper bandwidth (% of native)": [100.0, PAPER_BANDWIDTH["OpenVZ"], PAPER_BANDWIDTH["VMware Server"], 94.5],
})
