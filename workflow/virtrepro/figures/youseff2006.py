"""Youseff 2006, Paravirtualization for HPC systems: STREAM (Fig. 1), Bonnie (Fig. 2), NPB (Fig. 3a)."""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import pandas as pd

from .. import plotting, results
from .registry import Drawn, figure
from .common import TESTS, baseline_first, ci_label, compare, comparable, footnote, no_comparison, published_panel, short_why, summarize

PAPER = "youseff2006"
STREAM = ["single_stream_copy", "single_stream_scale", "single_stream_add", "single_stream_triad"]


@figure(PAPER, "fig1-stream", title="Youseff 2006 Fig. 1", benchmarks=["hpcc"], claims=["youseff2006-stream-*"],
        caption="STREAM copy, scale, add and triad bandwidth (HPCC's single-process STREAM, GB/s) per platform, mean "
                'with Student-t confidence intervals.')
def fig1(table, s) -> Drawn:
    stream = results.view(table, "hpcc", metric=STREAM)
    stream = stream.assign(operation=stream["metric"].str.removeprefix("single_stream_"))
    fig, ax = plt.subplots(figsize=(8, 4))
    if stream.empty:
        plotting.unavailable(ax, f"no hpcc runs on testbed {s.testbed!r}")
    else:
        summary = summarize(stream, ["platform", "operation"], s)
        plotting.grouped_bars(ax, summary, "operation", "mean", "ci_low", "ci_high",
                              hue_order=baseline_first(summary["platform"], s.baseline), order=["copy", "scale", "add", "triad"])
        ax.set_ylabel(f"GB/s, {ci_label(s, summary)}")
        ax.legend(title="platform")
    ax.set_title(f"STREAM (Fig. 1) on testbed {s.testbed!r}")
    footnote(fig, stream)
    return Drawn(fig, {f"tests against {s.baseline}": compare(stream, s, ["operation"])[["operation"] + TESTS]}, digits=3)


BONNIE = ["putc", "put_block", "rewrite", "getc", "get_block", "seeks"]


@figure(PAPER, "fig2-bonnie-relative", title="Youseff 2006 Fig. 2", benchmarks=["bonnie"], claims=["youseff2006-bonnie-*"],
        caption='Bonnie++ rates (per-character and block output, rewrite, per-character and block input, seeks) of '
                "each platform divided by the baseline platform's mean, per file size, with Fieller intervals of the "
                'ratio.')
def fig2(table, s) -> Drawn:
    bonnie = results.view(table, "bonnie", metric=BONNIE)
    tests = compare(bonnie, s, ["param_size", "metric"])
    sizes = sorted(tests["param_size"].unique())
    fig, axes = plt.subplots(max(len(sizes), 1), 1, figsize=(8, 3 * max(len(sizes), 1)), squeeze=False)
    if not sizes:
        plotting.unavailable(axes[0][0], no_comparison("bonnie", s))
    numbers = {}
    for ax, size in zip(axes[:, 0], sizes):
        part = tests[tests["param_size"] == size]
        plotting.grouped_bars(ax, part, "metric", "ratio", "ratio_ci_low", "ratio_ci_high", order=BONNIE,
                              hue_order=sorted(set(part["platform"])), missing="no ratio")
        ax.axhline(1, color="black", linewidth=0.8)
        ax.set_ylabel(f"rate / {s.baseline}")
        ax.set_title(f"file size {size}")
        ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
        reasons = empty_slots(bonnie[bonnie["param_size"] == size], s.baseline)
        if reasons:
            ax.text(0, -0.2, textwrap.fill("no ratio: " + "; ".join(reasons), 120), transform=ax.transAxes, fontsize=7,
                    color="dimgray", va="top")
            numbers[f"file size {size}: no ratio"] = "\n".join(reasons)
    fig.suptitle(f"Bonnie relative to {s.baseline} (Fig. 2) on testbed {s.testbed!r}", y=1.02)
    footnote(fig, results.view(table, "bonnie"))
    return Drawn(fig, {f"tests against {s.baseline}": tests[["param_size", "metric"] + TESTS], **numbers}, digits=3)


def empty_slots(bonnie: pd.DataFrame, baseline: str) -> list[str]:
    """Why a Bonnie test has no ratio at one file size: not in the logs (bonnie++ -f, the direct-I/O
    runs, has no per-character tests), or no rate of the baseline (bonnie++ prints +++++ for a test
    too fast to time)."""
    reasons = []
    for metric in BONNIE:
        rows = bonnie[bonnie["metric"] == metric]
        if rows.empty:
            reasons.append(f"{metric}: not in the logs (runs with direct I/O use bonnie++ -f: no per-character tests)")
        elif baseline not in set(rows["platform"]):
            reasons.append(f"{metric}: {baseline} has no rate (bonnie++ printed +++++: too fast to time)")
    return reasons


@figure(PAPER, "fig3a-npb-relative", title="Youseff 2006 Fig. 3(a)", benchmarks=["npb_mpi"], claims=["youseff2006-npb-*"],
        caption='NPB (MPI) total time and Mop/s of EP, IS, MG, LU and CG relative to the baseline platform, with '
                'Fieller intervals of the ratio. When NPB was not run, the panel says why.')
def fig3a(table, s) -> Drawn:
    npb = results.view(table, "npb_mpi", metric=["time", "mops_total"])
    npb = npb[npb["param_kernel"].isin(["ep", "is", "mg", "lu", "cg"]) & (npb["param_nodes"] == 1)] if len(npb) else npb
    by = ["metric", "param_kernel", "param_procs"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    if npb.empty:  # the paper's own numbers, and why ours are missing
        tests = published_panel(axes[0], s, PAPER, "npb_mpi", short_why(s, "npb_mpi"))[["platform_in_paper", "parameters", "value"]]
        axes[1].set_axis_off()
    elif not comparable(npb, s.baseline):
        tests = f"npb_mpi: a ratio needs {s.baseline!r} and a second platform"
        for ax in axes:
            plotting.unavailable(ax, tests)
    else:
        tests = compare(npb.assign(higher_is_better=npb["metric"] == "mops_total"), s, by, higher_is_better="higher_is_better")
        tests["test"] = [f"{kernel.upper()} {procs}" for kernel, procs in zip(tests["param_kernel"], tests["param_procs"])]
        for ax, metric, label in zip(axes, ["time", "mops_total"], ["total time", "Mop/s"]):
            part = tests[tests["metric"] == metric]
            plotting.grouped_bars(ax, part, "test", "ratio", "ratio_ci_low", "ratio_ci_high")
            ax.axhline(1, color="black", linewidth=0.8)
            plotting.note_no_ratio(ax, part.loc[part["mean_baseline"] == 0, "test"].unique(), s.baseline)
            ax.set_ylabel(f"{label} / {s.baseline}")
            ax.tick_params(axis="x", labelrotation=45)
        axes[0].legend(fontsize="small")
        tests = tests[by + TESTS]
    fig.suptitle(f"NPB relative to {s.baseline} (Fig. 3a) on testbed {s.testbed!r}")
    return Drawn(fig, {f"tests against {s.baseline}": tests}, digits=3)
