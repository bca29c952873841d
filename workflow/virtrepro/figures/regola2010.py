"""Regola & Ducom 2010, Recommendations for virtualization technologies in HPC: Fig. 2, Tables I-II, Figs. 4-5."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from .. import plotting, results
from ..platforms.catalog import BASELINE, has
from .registry import Drawn, figure
from .common import at_size, footnote, lines_with_bands, netperf, npb_relative_bars, npb_relative_time, \
    published_panel, short_why, stand_in_present, summarize

PAPER = "regola2010"


@figure(PAPER, "fig2-netperf-latency-throughput", title="Regola 2010 Fig. 2", benchmarks=["netperf"],
        claims=["regola2010-netperf-*", "regola2010-abstract-*", "regola2010-conclusion-io-*",
                "regola2010-conclusion-os-virtualization-only-way"],
        caption='netperf latency and TCP throughput per platform between two instances (log scale).')
def fig2(table, s) -> Drawn:
    latency, throughput = netperf(table, s)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    for ax, summary, title, unit in [(axes[0], latency, "(a) latency (half round trip)", "us"),
                                     (axes[1], throughput, "(b) TCP throughput", "Mbit/s")]:
        if summary.empty:
            plotting.unavailable(ax, f"no netperf runs on testbed {s.testbed!r}")
            continue
        lines_with_bands(ax, summary, "message size (bytes)", errorbars=True)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel(f"{unit} (log scale), mean with {s.confidence:.0%} CI")
        ax.set_title(title)
        ax.legend(title="platform")
    fig.suptitle(f"Regola 2010 Fig. 2 redrawn on testbed {s.testbed!r}")
    numbers = {}
    if len(latency) and s.baseline in set(latency["platform"]) and s.baseline in set(throughput["platform"]):
        smallest, lat = at_size(latency, min)
        largest, tp = at_size(throughput, max)
        numbers[f"% of {s.baseline} (paper: OpenVZ 89.2 % / 99.99 %, KVM virtio 8.3 % / about 55 %)"] = pd.DataFrame({
            f"latency performance, {smallest} B": lat[s.baseline] / lat * 100,
            f"throughput, {largest} B": tp / tp[s.baseline] * 100})
    return Drawn(fig, numbers, digits=1)


# IOZone's operations as the paper's tables name them
OPS = {"read": "Read", "random_read": "Rnd Read", "write": "Write", "random_write": "Rnd Write"}


def disk_tables(table, s) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The iozone_disk rows (MB/s), and ours and the paper's mean MB/s per configuration (rows: the platform,
    with its disk format and cache mode in a VM) and operation."""
    disk = results.view(table, "iozone_disk", metric=list(OPS)).rename(columns={"param_disk": "disk", "param_cache": "cache"})
    disk = disk.assign(**{"MB/s": disk["value"] / 1024})
    summary = summarize(disk, ["platform", "disk", "cache", "metric"], s, value="MB/s")
    summary["configuration"] = [p if d == "host" else f"{p} {d} {c}" for p, d, c in zip(summary["platform"], summary["disk"], summary["cache"])]
    ours = summary.pivot_table(index="configuration", columns="metric", values="mean").reindex(columns=list(OPS)).rename(columns=OPS)
    published = pd.read_csv(Path(s.reference_dir) / "regola2010.csv")
    # Table II's native rows are Table I's
    published = published[~((published["source"] == "Table II") & (published["platform_in_paper"] == BASELINE))]
    platforms = sorted(table["platform"].unique())
    vm = next((p for p in platforms if has(p, "disk_formats")), "QEMU")

    def our_name(row):  # the paper's configuration as our table names it
        if row["platform_in_paper"] == BASELINE:
            return BASELINE
        if row["disk_format"] == "block":
            return "KVM on a partition (not reproduced)"
        if pd.isna(row["disk_format"]):  # Table I's container
            return stand_in_present(row["platform_in_paper"], platforms) or row["platform_in_paper"]
        return f"{vm} {row['disk_format']} {row['cache']}"

    published = published.assign(configuration=published.apply(our_name, axis=1))
    paper = published.pivot_table(index="configuration", columns="metric", values="value")[list(OPS)].rename(columns=OPS)
    # each row as the paper names it (KVM, OpenVZ...), for the paper's side of the figure
    paper_names = {row["configuration"]: " ".join(str(v) for v in (row["platform_in_paper"], row["disk_format"], row["cache"])
                                                  if isinstance(v, str) and v)
                   for _, row in published.iterrows()}
    return disk, ours, paper, paper_names


@figure(PAPER, "table2-iozone-disk-formats", title="Regola 2010 Tables I-II redrawn", benchmarks=["iozone_disk"],
        claims=["regola2010-iozone-*", "regola2010-os-virtualization-near-native-io-podman"],
        caption='IOZone disk throughput by platform, VM image format (raw, qcow2, vmdk) and host cache mode (none, '
                "writeback, writethrough): ours (left, rows named as measured) beside the paper's Tables I and II "
                "(right, rows named as the paper names them: its KVM is not our QEMU TCG).")
def table2(table, s) -> Drawn:
    disk, ours, paper, paper_names = disk_tables(table, s)
    side_by_side = pd.concat({"ours": ours, "paper": paper}, axis=1).swaplevel(axis=1)[
        [(op, who) for op in OPS.values() for who in ("ours", "paper")]]
    fig, axes = plt.subplots(1, 2, figsize=(13, 0.45 * len(side_by_side) + 2), gridspec_kw={"wspace": 0.6})
    rows = side_by_side.index
    norm = plt.matplotlib.colors.LogNorm(vmin=1, vmax=max(1e4, float(ours.max().max())))
    for ax, (who, frame) in zip(axes, [(f"ours, testbed {s.testbed!r}", ours.reindex(rows)),
                                       ("the paper's Tables I-II", paper.reindex(rows))]):
        sns.heatmap(frame, annot=True, fmt=".0f", cmap="viridis", norm=norm, cbar=False, ax=ax, linewidths=0.5, linecolor="white")
        ax.set_title(who)
        ax.set_xlabel("IOZone operation (MB/s)")
        ax.set_ylabel("")
    # each side names its rows as its own platforms: ours as measured, the paper's as the paper ran them
    axes[0].set_yticks([i + 0.5 for i in range(len(rows))], labels=[r if r in ours.index else "(not measured here)" for r in rows],
                       fontsize="small")
    axes[1].set_yticks([i + 0.5 for i in range(len(rows))], labels=[paper_names.get(r, "(not in the paper)") for r in rows],
                       fontsize="small")
    fig.suptitle("Regola 2010 Tables I-II redrawn: disk throughput by platform, image format and host cache mode")
    footnote(fig, disk)
    numbers = {"MB/s, ours beside the paper's": side_by_side}
    if s.baseline in ours.index:
        numbers[f"ours, % of {s.baseline}"] = (ours.div(ours.loc[s.baseline], axis=1) * 100).drop(index=s.baseline)
    return Drawn(fig, numbers, digits=1)


@figure(PAPER, "fig4-5-npb-relative-time", title="Regola 2010 Figs. 4-5 redrawn", benchmarks=["npb_omp", "npb_mpi"],
        claims=["regola2010-npb-*", "regola2010-os-virtualization-near-native-cpu-podman",
                "regola2010-conclusion-cpu-overhead-eliminated-kvm"],
        caption='NPB running time relative to the baseline platform per kernel, for OpenMP with one thread and with '
                'the most threads run (Fig. 4a-b), and MPI with the most processes in one instance and across two '
                'instances (Fig. 5).')
def fig4_5(table, s) -> Drawn:
    npb = results.view(table, ["npb_omp", "npb_mpi"], metric="time")
    chosen = []
    omp = npb[npb["benchmark"] == "npb_omp"]
    if len(omp):
        threads = omp["param_threads"]
        chosen += [("(4a) OpenMP, 1 thread", omp[threads == 1]), (f"(4b) OpenMP, {threads.max()} threads", omp[threads == threads.max()])]
    mpi = npb[npb["benchmark"] == "npb_mpi"]
    for nodes in sorted(mpi["param_nodes"].unique()) if len(mpi) else []:
        part = mpi[mpi["param_nodes"] == nodes]
        procs = part["param_procs"].max()
        chosen.append((f"(5) MPI, {procs} processes on {nodes} instance{'s' if nodes > 1 else ''}", part[part["param_procs"] == procs]))
    fig, axes = plt.subplots(1, max(2, len(chosen)), figsize=(5 * max(2, len(chosen)), 4), squeeze=False)
    axes = axes[0]
    numbers = {}
    if not chosen:  # the paper's own numbers, and why ours are missing
        for ax, name in zip(axes, ["npb_omp", "npb_mpi"]):
            shown = published_panel(ax, s, PAPER, name, short_why(s, name))
            numbers[f"published: {name}"] = shown[["platform_in_paper", "parameters", "value"]]
    for ax, (title, part) in zip(axes, chosen):
        relative = npb_relative_time(part, s.baseline)
        if relative.empty:
            plotting.unavailable(ax, f"needs {s.baseline!r} and another platform")
            continue
        npb_relative_bars(ax, relative, s.baseline, f"running time relative to {s.baseline}")
        ax.set_title(title)
        numbers[f"{title}: running time / {s.baseline}"] = relative
    fig.suptitle(f"Regola 2010 Figs. 4-5 redrawn on testbed {s.testbed!r}")
    return Drawn(fig, numbers)
