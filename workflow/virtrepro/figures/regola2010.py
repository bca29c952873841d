"""Regola & Ducom 2010, Recommendations for virtualization technologies in HPC: Fig. 2, Tables I-II, Figs. 4-5."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from ..report import plotting
from .. import results
from ..benchmarks.npb import process_count_problem
from ..platforms.catalog import BASELINE, has
from ..declarations.regimes import WHERE, size_bytes
from .registry import Drawn, figure, get
from .common import claim_thresholds, compare, near_one, netperf_rows, platform_order, untranslated
from .common import NETPERF_SIZE, NETPERF_TOPOLOGY, PUBLISHED_GREY, at_size, ci_label, footnote, lines_with_bands, netperf, note_below, \
    log_row_needed, no_interval_text, npb_compared, npb_ratio_bars, paper_figure_parameters, published_panel, published_rows, scale_parameters, \
    short_why, stand_in_present, summarize

PAPER = "regola2010"


def paper_netperf(s) -> pd.DataFrame:
    """The paper's stated netperf numbers over Gigabit Ethernet, in % of native and in Mbit/s, with
    the test (TCP_RR, TCP_STREAM), the message size where stated and whether it is an "about"."""
    rows = pd.concat([published_rows(s.reference_dir, PAPER, "netperf", unit) for unit in ("%", "Mbit/s")])
    params = rows["parameters"].fillna("").map(lambda text: dict(kv.split("=", 1) for kv in text.split(";") if "=" in kv))
    rows = rows.assign(test=params.map(lambda p: p.get("test")), network=params.map(lambda p: p.get("network")),
                       size=params.map(lambda p: p.get("size")), about=params.map(lambda p: p.get("bound") == "approx"),
                       value=rows["value"].astype(float))
    return rows[rows["network"] == "gige"].drop_duplicates(["platform_in_paper", "test", "unit", "value"])


def paper_percentages(paper: pd.DataFrame) -> str:
    """The paper's % of native in words: latency performance (TCP_RR) and throughput (TCP_STREAM)."""
    parts = []
    for test, what in (("TCP_RR", "latency performance"), ("TCP_STREAM", "throughput")):
        rows = paper[(paper["unit"] == "%") & (paper["test"] == test)]
        sizes = sorted(set(rows["size"].dropna()))
        if len(rows):
            parts.append(f"{what}{' (' + ', '.join(sizes) + '-byte messages)' if sizes else ''} "
                         + ", ".join(f"{r['platform_in_paper']} {'about ' if r['about'] else ''}{r['value']:g} %"
                                     for _, r in rows.iterrows()))
    return "; ".join(parts)


FIG2_CAPTION = ("netperf latency and TCP throughput per platform between two instances of it on one host (no wire; "
                "the paper's: two servers over Gigabit Ethernet), the paper's throughput as reference lines (log scales); "
                "under them, the platforms that do not translate guest code relative to the baseline on linear axes "
                "around 1, with the bounds of the claims on latency (c) and throughput (d).")


@figure(PAPER, "fig2-netperf-latency-throughput", title="Regola 2010 Fig. 2", benchmarks=["netperf"],
        claims=["regola2010-netperf-*", "regola2010-abstract-*", "regola2010-conclusion-io-*",
                "regola2010-conclusion-os-virtualization-only-way"],
        caption=FIG2_CAPTION)
def fig2(table, s) -> Drawn:
    latency, throughput = netperf(table, s)
    paper = paper_netperf(s)
    fig, grid = plt.subplots(2, 2, figsize=(12, 8), gridspec_kw={"height_ratios": [3, 2]})
    axes = grid[0]
    # under each panel, the platforms that do not translate guest code against the baseline, near 1, with the
    # bounds of the figure's claims on that test (a few per cent cannot be read on a log axis)
    tested = get(PAPER, "fig2-netperf-latency-throughput").claims
    for ax, metric, test, what, higher in [(grid[1][0], "half_round_trip_latency", "TCP_RR", "latency", False),
                                           (grid[1][1], "throughput", "TCP_STREAM", "throughput", True)]:
        near = compare(netperf_rows(table, metric), s, [NETPERF_SIZE], higher_is_better=higher)
        if near.empty:
            plotting.unavailable(ax, f"{what} relative to {s.baseline!r} needs {s.baseline!r} runs")
            continue
        near = near.assign(**{NETPERF_SIZE: near[NETPERF_SIZE].astype(int).astype(str)})
        order = [str(x) for x in sorted(near[NETPERF_SIZE].astype(int).unique())]
        near_one(ax, near, s, NETPERF_SIZE, order,
                 claim_thresholds(s, tested, "netperf", untranslated(near["platform"]), {"test": test}), what, higher)
        ax.set_xlabel(NETPERF_SIZE)
        ax.set_title(f"({'c' if not higher else 'd'}) {what} near 1, with the claims' bounds", fontsize="small")
    bare = []
    for ax, summary, title, quantity in [(axes[0], latency, "(a) latency (half round trip)", "half round trip latency, us"),
                                         (axes[1], throughput, "(b) TCP throughput", "TCP throughput, Mbit/s")]:
        if summary.empty:
            plotting.unavailable(ax, f"no netperf runs on testbed {s.testbed!r}")
            continue
        bare += [f"{quantity.split(',')[0]}: {point}" for point in lines_with_bands(ax, summary, NETPERF_SIZE, errorbars=True)]
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel(NETPERF_SIZE)
        ax.set_ylabel(f"{quantity} (log scale),\n{ci_label(s, summary, dagger=False)}", fontsize="small")
        ax.set_title(title)
        ax.legend(title="platform")
    if len(throughput):  # the paper's throughput over its wire: what a 1 GbE link carries, not a target for ours
        lines = paper[paper["unit"] == "Mbit/s"].groupby("value")
        for value, rows in lines:  # labelled at the right, where our lines are far above them: the top one above it
            axes[1].axhline(value, color=PUBLISHED_GREY, linestyle="--", linewidth=1)
            axes[1].text(0.98, value, f"paper, 1 GbE: {', '.join(rows['platform_in_paper'])} "
                         f"{'about ' if rows['about'].all() else ''}{value:g} Mbit/s", transform=axes[1].get_yaxis_transform(),
                         ha="right", va="bottom" if value == max(lines.groups) else "top", fontsize=7, color=PUBLISHED_GREY)
    fig.suptitle(f"Regola 2010 Fig. 2 redrawn on testbed {s.testbed!r}", y=1.02)
    fig.tight_layout()
    note_below(fig, NETPERF_TOPOLOGY.format(testbed=s.testbed) + f". The paper, of native: {paper_percentages(paper)}."
               + (f" No interval (too few runs for a 95% interval of the median): {'; '.join(bare)}." if bare else ""))
    numbers = {}
    if len(latency) and s.baseline in set(latency["platform"]) and s.baseline in set(throughput["platform"]):
        smallest, lat = at_size(latency, min)
        largest, tp = at_size(throughput, max)
        numbers[f"% of {s.baseline} (paper, over Gigabit Ethernet: {paper_percentages(paper)})"] = pd.DataFrame({
            f"latency performance, {smallest} B": lat[s.baseline] / lat * 100,
            f"throughput, {largest} B": tp / tp[s.baseline] * 100})
    summary = ""
    if len(throughput):
        sizes = sorted(throughput[NETPERF_SIZE].unique())
        ceiling = paper.loc[paper["unit"] == "Mbit/s", "value"].max()
        summary = (f"{FIG2_CAPTION} Our throughput rests on {len(sizes)} message sizes "
                   f"({', '.join(f'{size:g}' for size in sizes)} bytes) between two instances of one host: it has no wire to "
                   f"saturate, so where it levels off is not comparable with the paper's plateau"
                   + (f" ({ceiling:g} Mbit/s, the wire speed of Gigabit Ethernet)" if ceiling == ceiling else "")
                   + "; a saturation verdict below rests on this.")
    return Drawn(fig, numbers, digits=1, summary=summary)


# IOZone's operations as the paper's tables name them
OPS = {"read": "Read", "random_read": "Rnd Read", "write": "Write", "random_write": "Rnd Write"}


def configuration(platform: str, disk: str, cache: str) -> str:
    """A row of Tables I-II as our table names it: the platform, in a VM with its image format and host cache mode."""
    return platform if disk == "host" else f"{platform} {disk} {cache}"


def disk_tables(table, s) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The iozone_disk rows (MB/s, with their ``configuration``: the platform, with its disk format and
    cache mode in a VM), their summary per configuration and operation, ours and the paper's mean MB/s
    per configuration (rows) and operation, and the paper's configurations (one row each: its
    ``platform_in_paper``, ``disk_format``, ``cache`` and ``paper_name``, as the paper names it)."""
    disk = results.view(table, "iozone_disk", metric=list(OPS)).rename(columns={"param_disk": "disk", "param_cache": "cache"})
    disk = disk.assign(**{"MB/s": disk["value"] / 1024},
                       configuration=[configuration(*row) for row in zip(disk["platform"], disk["disk"], disk["cache"])])
    summary = summarize(disk, ["configuration", "metric"], s, value="MB/s")
    ours = summary.pivot_table(index="configuration", columns="metric", values="median").reindex(columns=list(OPS)).rename(columns=OPS)
    published = pd.read_csv(Path(s.reference_dir) / "regola2010.csv")
    # Table II's native rows are Table I's
    published = published[~((published["source"] == "Table II") & (published["platform_in_paper"] == BASELINE))]
    platforms = platform_order(table["platform"])
    vm = next((p for p in platforms if has(p, "disk_formats")), "QEMU")

    def our_name(row):  # the paper's configuration as our table names it
        if row["platform_in_paper"] == BASELINE:
            return BASELINE
        if row["disk_format"] == "block":
            return "KVM on a partition (not reproduced)"
        if pd.isna(row["disk_format"]):  # Table I's container
            return stand_in_present(row["platform_in_paper"], platforms) or row["platform_in_paper"]
        return configuration(vm, row["disk_format"], row["cache"])

    published = published.assign(configuration=published.apply(our_name, axis=1))
    paper = published.pivot_table(index="configuration", columns="metric", values="value")[list(OPS)].rename(columns=OPS)
    # each row as the paper names it (KVM, OpenVZ...), for the paper's side of the figure
    rows = published.drop_duplicates("configuration").set_index("configuration")
    rows["paper_name"] = [" ".join(str(v) for v in (row["platform_in_paper"], row["disk_format"], row["cache"])
                                   if isinstance(v, str) and v) for _, row in rows.iterrows()]
    return disk, summary, ours, paper, rows[["platform_in_paper", "disk_format", "cache", "paper_name"]]


def why_not_here(row: pd.Series, disk: pd.DataFrame) -> str:
    """Why a configuration of the paper (a row of disk_tables' last table) has no row of ours: what of it
    the data's scale did not run, and whether the configuration's paper scale runs it."""
    if row["disk_format"] == "block":
        return "block device: not reproduced"
    if pd.isna(row["disk_format"]):
        return f"{row['platform_in_paper']}: no stand-in measured"
    vms = disk[disk["disk"] != "host"]
    if vms.empty:
        return f"{row['disk_format']} {row['cache']}: no VM measured"
    scale = " and ".join(sorted(set(disk["scale"].dropna()))) or "this"
    missing = [value for value, column in ((row["disk_format"], "disk"), (row["cache"], "cache")) if value not in set(vms[column])]
    paper_scale = scale_parameters("iozone_disk")
    listed = set(paper_scale.get("disk_formats", [])) | set(paper_scale.get("cache_modes", []))
    if missing and set(missing) <= listed:
        return f"{row['disk_format']} {row['cache']}: paper scale only"
    return f"{row['disk_format']} {row['cache']}: not run at the {scale} scale"


REGIME_MARKS = ("\u2020", "\u2021", "\u00a7")  # dagger, double dagger, section: a regime other than the paper's
TABLE2_CAPTION = ("IOZone throughput by platform and, in a VM, image format and host cache mode, as far as the data's scale "
                  "ran them (the others: paper scale only), each of our rows measured elsewhere than on disk marked: ours (left, rows "
                  "named as measured, mean and interval) beside the paper's Tables I and II (right, rows named as the paper "
                  "names them: its KVM is not our QEMU TCG; its numbers are a SAS hard disk's).")


@figure(PAPER, "table2-iozone-disk-formats", title="Regola 2010 Tables I-II redrawn", benchmarks=["iozone_disk"],
        claims=["regola2010-iozone-*", "regola2010-os-virtualization-near-native-io-podman"],
        caption=TABLE2_CAPTION)
def table2(table, s) -> Drawn:
    disk, summary, ours, paper, configurations = disk_tables(table, s)
    side_by_side = pd.concat({"ours": ours, "paper": paper}, axis=1).swaplevel(axis=1)[
        [(op, who) for op in OPS.values() for who in ("ours", "paper")]]
    fig, axes = plt.subplots(1, 2, figsize=(13, 0.5 * len(side_by_side) + 2.4), gridspec_kw={"wspace": 0.6})
    rows = side_by_side.index
    # each of our cells: the median over its interval (no spread shown would hide how many runs it rests on)
    cells = summary.assign(operation=summary["metric"].map(OPS), text=[
        f"{m:.0f}" + (f"\n[{lo:.0f}, {hi:.0f}]" if lo == lo and hi == hi else "")
        for m, lo, hi in zip(summary["median"], summary["ci_low"], summary["ci_high"])])
    ours_text = cells.pivot(index="configuration", columns="operation", values="text").reindex(index=rows, columns=list(OPS.values()))
    norm = plt.matplotlib.colors.LogNorm(vmin=1, vmax=max(1e4, float(ours.max().max())))
    n = f"{summary['n'].min()}" if summary["n"].min() == summary["n"].max() else f"{summary['n'].min()}-{summary['n'].max()}"
    for ax, who, frame, text, xlabel in [
            (axes[0], f"ours, testbed {s.testbed!r}", ours.reindex(rows), ours_text.fillna(""),
             f"IOZone operation: MB/s, {ci_label(s, summary, dagger=False)}\n(in brackets), n = {n} runs a cell"),
            (axes[1], "the paper's Tables I-II", paper.reindex(rows), True, "IOZone operation: MB/s, as published")]:
        sns.heatmap(frame, annot=text if text is True else text.to_numpy(), fmt=".0f" if text is True else "", cmap="viridis",
                    norm=norm, cbar=False, ax=ax, linewidths=0.5, linecolor="white", annot_kws={"fontsize": 8})
        ax.set_title(who)
        ax.set_xlabel(xlabel, fontsize="small")
        ax.set_ylabel("")
    # where each of our rows was measured: marked where it is not where the paper measured (its disk)
    regime = disk.groupby("configuration")["regime"].agg(lambda values: " / ".join(dict.fromkeys(values.dropna())))
    measured = set(disk["measures"].dropna())
    others = [r for r in dict.fromkeys(regime) if r not in measured]
    marks = dict(zip(others, REGIME_MARKS))
    # each side names its rows as its own platforms: ours as measured, the paper's as the paper ran them
    axes[0].set_yticks([i + 0.5 for i in range(len(rows))], fontsize="small", labels=[
        f"{r} {marks[regime[r]]}" if regime.get(r) in marks else r if r in ours.index
        else f"({why_not_here(configurations.loc[r], disk)})" for r in rows])
    axes[1].set_yticks([i + 0.5 for i in range(len(rows))], labels=[
        configurations["paper_name"].get(r, "(not in the paper)") for r in rows], fontsize="small")
    low, high = ours.min().min(), ours.max().max()
    direct = "o_direct" in disk.columns and bool(disk["o_direct"].fillna(False).astype(bool).all())
    size = f"{size_bytes(disk['param_size'].iloc[0]) / 2 ** 30:g} GiB file" if len(disk) else "no runs"
    fig.suptitle("Regola 2010 Tables I-II redrawn: IOZone throughput by platform, image format and host cache mode\n"
                 f"ours: a {size}{' read and written with O_DIRECT' if direct else ''} on the testbed's virtual disk, "
                 f"{low:,.0f}-{high:,.0f} MB/s: no spinning disk"
                 + "".join(f"; {mark} {WHERE.get(r, r)}" for r, mark in marks.items())
                 + "; the paper's: a SAS hard disk", fontsize="medium", y=1.0)
    footnote(fig, disk)
    numbers = {"MB/s, ours beside the paper's": side_by_side}
    if s.baseline in ours.index:
        numbers[f"ours, % of {s.baseline}"] = (ours.div(ours.loc[s.baseline], axis=1) * 100).drop(index=s.baseline)
    numbers["where ours were measured"] = regime.map(lambda r: WHERE.get(r, r)).rename("regime").to_frame()
    vms = disk[disk["disk"] != "host"]
    ran = (f"This data's {' and '.join(sorted(set(disk['scale'].dropna())))} scale ran the VM with image formats "
           f"{', '.join(sorted(set(vms['disk'])))} and host cache modes {', '.join(sorted(set(vms['cache'])))}; rows without ours "
           "say why.") if len(vms) else ""
    return Drawn(fig, numbers, digits=1, summary=f"{TABLE2_CAPTION} {ran}".strip())


def npb_scale(part: pd.DataFrame) -> str:
    """The NPB problem classes of ``part`` in words: "class W (BT, EP), A (CG)"."""
    kernels = part.groupby("param_class")["param_kernel"].agg(lambda k: ", ".join(sorted(set(k.str.upper()))))
    return "class " + ", ".join(f"{cls} ({names})" for cls, names in kernels.items())


def paper_npb_scale(s) -> str:
    """The paper's NPB Figs. 4-5 in words (their rows in data/reference): class, threads and processes."""
    figs = {**paper_figure_parameters(s, PAPER, "npb_omp"), **paper_figure_parameters(s, PAPER, "npb_mpi")}
    if not figs:
        return ""
    classes = sorted({p["class"] for p in figs.values() if "class" in p})
    threads = [p["threads"] for name, p in figs.items() if "threads" in p]
    procs = [p["procs"] for name, p in figs.items() if name.startswith("Fig. 5") and "procs" in p]
    return ("the paper's: class " + ", ".join(classes)
            + (f", {' and '.join(threads)} threads (Fig. 4)" if threads else "")
            + (f", MPI on {' and '.join(procs)} cores over Gigabit Ethernet (Fig. 5)" if procs else ""))


@figure(PAPER, "fig4-5-npb-relative-time", title="Regola 2010 Figs. 4-5 redrawn", benchmarks=["npb_omp", "npb_mpi"],
        claims=["regola2010-npb-*", "regola2010-os-virtualization-near-native-cpu-podman",
                "regola2010-conclusion-cpu-overhead-eliminated-kvm"],
        caption='NPB running time relative to the baseline platform per kernel and class (the Hodges-Lehmann ratio with its '
                'confidence interval; the platforms that do not translate guest code on a linear axis around 1 with the '
                "claims' bounds, and, where a platform translates, every platform as bars on a log axis above them; a bar "
                'or point without an interval is marked and the note says why), for OpenMP with '
                'one thread and with the most threads run (Fig. 4a-b), and MPI with the most processes in one instance '
                "and across two instances (Fig. 5); a footnote sets this scale's problem classes, threads and processes "
                "beside the paper's.")
def fig4_5(table, s) -> Drawn:
    npb = results.view(table, ["npb_omp", "npb_mpi"], metric="time")
    chosen = []
    omp = npb[npb["benchmark"] == "npb_omp"]
    if len(omp):
        threads = omp["param_threads"]
        chosen += [("(4a) OpenMP, 1 thread", omp[threads == 1]), (f"(4b) OpenMP, {threads.max()} threads", omp[threads == threads.max()])]
    mpi = npb[npb["benchmark"] == "npb_mpi"]
    absent: dict[tuple, list] = {}  # (kernels, why) an MPI panel lacks -> the panels' instance counts
    for nodes in sorted(mpi["param_nodes"].unique()) if len(mpi) else []:
        part = mpi[mpi["param_nodes"] == nodes]
        procs = part["param_procs"].max()
        chosen.append((f"(5) MPI, {procs} processes on {nodes} instance{'s' if nodes > 1 else ''}", part[part["param_procs"] == procs]))
        missing = sorted(set(mpi["param_kernel"]) - set(part.loc[part["param_procs"] == procs, "param_kernel"]))
        why = pd.Series({k: (process_count_problem(k, int(procs), int(nodes)) or "not run").removeprefix(f"{k.upper()} ")
                         for k in missing}, dtype=object)
        for reason, kernels in why.groupby(why):
            absent.setdefault((", ".join(k.upper() for k in kernels.index), reason), []).append(str(nodes))
    columns = max(2, len(chosen))
    if chosen and log_row_needed(npb["platform"]):  # under each log panel, the platforms that do not translate near 1
        fig, grid = plt.subplots(2, columns, figsize=(5 * columns, 7), squeeze=False, gridspec_kw={"height_ratios": [3, 2]})
        axes, zooms = grid[0], grid[1]
    elif chosen:  # no platform translates: the panels near 1 show every platform, no log row repeats them
        fig, grid = plt.subplots(1, columns, figsize=(5 * columns, 4), squeeze=False)
        axes, zooms = [None] * columns, grid[0]
    else:
        fig, axes = plt.subplots(1, columns, figsize=(5 * columns, 4), squeeze=False)
        axes, zooms = axes[0], [None] * columns
    numbers = {}
    tested = get(PAPER, "fig4-5-npb-relative-time").claims
    if not chosen:  # the paper's own numbers, and why ours are missing
        for ax, name in zip(axes, ["npb_omp", "npb_mpi"]):
            shown = published_panel(ax, s, PAPER, name, short_why(s, name))
            numbers[f"published: {name}"] = shown[["platform_in_paper", "parameters", "value"]]
    drawn = []
    for ax, zoom, (title, part) in zip(axes, zooms, chosen):
        compared = npb_ratio_bars(ax, part, s, "running time") if ax is not None else npb_compared(part, s)
        if compared.empty:
            plotting.unavailable(ax if ax is not None else zoom, f"needs {s.baseline!r} and another platform")
            if ax is not None:
                zoom.set_axis_off()
            continue
        if ax is not None:
            ax.set_title(title)
            ax.set_xlabel("")
            order = [t.get_text() for t in ax.get_xticklabels()]
        else:
            zoom.set_title(title)
            order = sorted(compared["kernel"].unique())
        benchmark = part["benchmark"].iloc[0]
        where = {"threads": int(part["param_threads"].iloc[0])} if benchmark == "npb_omp" else {}
        near_one(zoom, compared, s, "kernel", order,
                 claim_thresholds(s, tested, benchmark, untranslated(compared["platform"]), where), "running time")
        zoom.set_xlabel("NPB kernel.class")
        drawn.append(compared)
        numbers[f"{title}: running time / {s.baseline}"] = compared.pivot_table(index="kernel", columns="platform",
                                                                                 values="ratio")
    fig.suptitle(f"Regola 2010 Figs. 4-5 redrawn on testbed {s.testbed!r}", y=1.04)
    if chosen:
        fig.tight_layout()
        if drawn:  # one legend for the panels, right of them: which colour is which platform
            shown = [ax if ax is not None else zoom for ax, zoom in zip(axes, zooms)]
            handles = max((ax.get_legend_handles_labels() for ax in shown), key=lambda hl: len(hl[1]))
            shown[-1].legend(*handles, title="platform", fontsize="small",
                             loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0)
        largest = max(int(npb[c].max()) for c in ("param_threads", "param_procs") if c in npb.columns and npb[c].notna().any())
        note_below(fig, f"ours: NPB {npb_scale(npb)}, at most {largest} threads or processes; {paper_npb_scale(s)}."
                   + "".join(f" (5) on {' and '.join(nodes)} instance(s): no {kernels} ({reason})."
                             for (kernels, reason), nodes in absent.items()))
        if drawn:
            note_below(fig, no_interval_text(pd.concat(drawn), "ratio_ci_low", "ratio_ci_high", "ratio"))
    return Drawn(fig, numbers)
