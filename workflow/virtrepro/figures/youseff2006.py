"""Youseff 2006, Paravirtualization for HPC systems: STREAM (Fig. 1), Bonnie (Fig. 2), NPB (Fig. 3a), MIT GCM (Fig. 3b)."""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import pandas as pd

from ..report import plotting
from .. import results
from ..declarations.regimes import hpcc_stream_array_bytes
from .registry import Drawn, figure
from .common import (NO_INTERVAL_MARK, TESTS, baseline_first, ci_label, compare, comparable, footnote, no_comparison, no_interval_text, note_below,
                     paper_figure_parameters, platform_order, published_panel, published_rows, scale_parameters, short_why, summarize)
from .microbenchmarks import LOG_AXIS_SPAN
from .common import PUBLISHED_GREY

PAPER = "youseff2006"
STREAM = ["single_stream_copy", "single_stream_scale", "single_stream_add", "single_stream_triad"]


@figure(PAPER, "fig1-stream", title="Youseff 2006 Fig. 1", benchmarks=["hpcc"], claims=["youseff2006-stream-*"],
        caption="STREAM copy, scale, add and triad bandwidth (HPCC's single-process STREAM, GB/s) per platform, median "
                'with its order-statistic interval.')
def fig1(table, s) -> Drawn:
    stream = results.view(table, "hpcc", metric=STREAM)
    stream = stream.assign(operation=stream["metric"].str.removeprefix("single_stream_"))
    fig, ax = plt.subplots(figsize=(8, 4))
    if stream.empty:
        plotting.unavailable(ax, f"no hpcc runs on testbed {s.testbed!r}")
    else:
        summary = summarize(stream, ["platform", "operation"], s)
        plotting.grouped_bars(ax, summary, "operation", "median", "ci_low", "ci_high",
                              hue_order=baseline_first(summary["platform"], s.baseline), order=["copy", "scale", "add", "triad"])
        ax.set_ylabel(f"GB/s, {ci_label(s, summary, dagger=False)}")
        ax.legend(title="platform")
    ax.set_title(f"STREAM (Fig. 1) on testbed {s.testbed!r}" + "".join(f"\n{line}" for line in stream_arrays(stream)))
    if not stream.empty:  # what the dagger over a bar means, under the panel
        note_below(fig, no_interval_text(summary, "ci_low", "ci_high", "median"))
    footnote(fig, stream)
    return Drawn(fig, {f"tests against {s.baseline}": compare(stream, s, ["operation"])[["operation"] + TESTS]}, digits=3)


def stream_arrays(stream: pd.DataFrame) -> list[str]:
    """How large STREAM's arrays were, per HPL N and process count the runs record (HPCC sizes them
    from HPL's matrix: regimes.hpcc_stream_array_bytes)."""
    if stream.empty or not {"hpl_n", "processes"} <= set(stream.columns):
        return []
    sizes = stream[["hpl_n", "processes"]].dropna().drop_duplicates().astype(int)
    return [f"HPL N = {n} on {p} processes: 3 arrays of {hpcc_stream_array_bytes(n, p) / 1e6:.0f} MB each"
            for n, p in sizes.itertuples(index=False)]


BONNIE = ["putc", "put_block", "rewrite", "getc", "get_block", "seeks"]


@figure(PAPER, "fig2-bonnie-relative", title="Youseff 2006 Fig. 2", benchmarks=["bonnie"], claims=["youseff2006-bonnie-*"],
        caption='Bonnie++ rates (per-character and block output, rewrite, per-character and block input, seeks) of '
                "each platform relative to the baseline platform's, per file size the data's scale ran: the "
                'Hodges-Lehmann ratio with its exact Mann-Whitney interval; an empty slot says why it has no ratio.')
def fig2(table, s) -> Drawn:
    bonnie = results.view(table, "bonnie", metric=BONNIE)
    tests = compare(bonnie, s, ["param_size", "metric"])
    sizes = sorted(tests["param_size"].unique())
    fig, axes = plt.subplots(max(len(sizes), 1), 1, figsize=(8, 3 * max(len(sizes), 1)), squeeze=False)
    if not sizes:
        plotting.unavailable(axes[0][0], no_comparison("bonnie", s))
    numbers = {}
    every = results.view(table, "bonnie")  # with the latencies: a test bonnie++ timed but gave no rate for
    for ax, size in zip(axes[:, 0], sizes):
        part = tests[tests["param_size"] == size]
        plotting.grouped_bars(ax, part, "metric", "ratio", "ratio_ci_low", "ratio_ci_high", order=BONNIE,
                              hue_order=platform_order(part["platform"]), missing="no ratio")
        ax.set_xlim(-0.5, len(BONNIE) - 0.5)  # every slot whole, the empty ones too
        ax.axhline(1, color="black", linewidth=0.8)
        ax.set_ylabel(f"rate / {s.baseline}")
        ax.set_title(f"file size {size}")
        ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
        reasons = empty_slots(every[every["param_size"] == size], s.baseline)
        whiskers = no_interval_text(part, "ratio_ci_low", "ratio_ci_high", "ratio",
                                    name=lambda row: f"{plotting.platform_label(row['platform'])} {row['metric']}")
        lines = (["no ratio: " + "; ".join(reasons) + "."] if reasons else []) + ([whiskers] if whiskers else [])
        if lines:
            ax.text(0, -0.2, textwrap.fill(" ".join(lines), 120), transform=ax.transAxes, fontsize=7, color="dimgray", va="top")
        if reasons:
            numbers[f"file size {size}: no ratio"] = "\n".join(reasons)
    fig.suptitle(f"Bonnie relative to {s.baseline} (Fig. 2) on testbed {s.testbed!r}", y=1.02)
    paper_sizes = [size for size in scale_parameters("bonnie").get("file_sizes", []) if size not in sizes]
    if sizes and paper_sizes:
        note_below(fig, f"File sizes {', '.join(paper_sizes)}: paper scale only (this data's "
                   f"{' and '.join(sorted(set(bonnie['scale'].dropna())))} scale ran {', '.join(sizes)}).")
    footnote(fig, every)
    return Drawn(fig, {f"tests against {s.baseline}": tests[["param_size", "metric"] + TESTS], **numbers}, digits=3)


def empty_slots(bonnie: pd.DataFrame, baseline: str) -> list[str]:
    """Why a Bonnie test has no ratio at one file size, from the rows of every bonnie metric (rates
    and ``<test>_latency``): bonnie++ printed ``+++++`` (too fast to time) where a test has its
    latency but no rate, on every platform or on some, the baseline among them; a test with
    neither was not run (bonnie++ -f, which the direct-I/O runs use, skips the per-character tests)."""
    reasons = []
    platforms = platform_order(bonnie["platform"])
    for metric in BONNIE:
        rated = set(bonnie.loc[bonnie["metric"] == metric, "platform"])
        timed = set(bonnie.loc[bonnie["metric"] == f"{metric}_latency", "platform"])
        fast = platform_order(timed - rated)
        if not rated and not timed:
            direct = bool(bonnie["param_direct"].fillna(False).astype(bool).all()) if "param_direct" in bonnie.columns else False
            reasons.append(f"{metric}: not run" + (" (the direct-I/O runs use bonnie++ -f: no per-character tests)" if direct else ""))
        elif not rated:
            reasons.append(f"{metric}: bonnie++ printed +++++ (too fast to time) on "
                           + ("every platform" if fast == platforms else ", ".join(map(plotting.platform_label, fast))))
        elif baseline not in rated:
            reasons.append(f"{metric}: {baseline} has no rate (bonnie++ printed +++++: too fast to time"
                           + (f", also on {', '.join(map(plotting.platform_label, [p for p in fast if p != baseline]))})"
                              if len(fast) > 1 else ")"))
    return reasons


@figure(PAPER, "fig3a-npb-relative", title="Youseff 2006 Fig. 3(a)", benchmarks=["npb_mpi"], claims=["youseff2006-npb-*"],
        caption='NPB (MPI, one instance) total time and Mop/s of EP, IS, MG, LU and CG relative to the baseline platform, '
                'per kernel, problem class and number of MPI processes, the Hodges-Lehmann ratio with its exact Mann-Whitney interval (a log axis '
                'where the ratios span more than a factor of ten). When NPB was not run, the panel says why.')
def fig3a(table, s) -> Drawn:
    npb = results.view(table, "npb_mpi", metric=["time", "mops_total"])
    npb = npb[npb["param_kernel"].isin(["ep", "is", "mg", "lu", "cg"]) & (npb["param_nodes"] == 1)] if len(npb) else npb
    by = ["metric", "param_kernel", "param_class", "param_procs"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    if npb.empty:  # the paper's own numbers, and why ours are missing
        tests = published_panel(axes[0], s, PAPER, "npb_mpi", short_why(s, "npb_mpi"))[["platform_in_paper", "parameters", "value"]]
        axes[1].set_axis_off()
    elif not comparable(npb, s.baseline):
        tests = f"npb_mpi: a ratio needs {s.baseline!r} and a second platform"
        for ax in axes:
            plotting.unavailable(ax, tests)
    else:
        tests = compare(npb.assign(higher_is_better=npb["metric"] == "mops_total"), s, by, higher_is_better="higher_is_better")
        tests["test"] = [f"{kernel.upper()} {cls}, {procs} proc." for kernel, cls, procs
                         in zip(tests["param_kernel"], tests["param_class"], tests["param_procs"])]
        for ax, metric, label in zip(axes, ["time", "mops_total"], ["total time", "Mop/s"]):
            part = tests[tests["metric"] == metric]
            plotting.grouped_bars(ax, part, "test", "ratio", "ratio_ci_low", "ratio_ci_high", no_interval=NO_INTERVAL_MARK)
            ax.axhline(1, color="black", linewidth=0.8)
            bounds = pd.concat([part["ratio"], part["ratio_ci_low"], part["ratio_ci_high"]]).dropna()
            log = not bounds.empty and bounds.max() / bounds.min() > LOG_AXIS_SPAN  # containers' bars readable beside TCG's
            if log:
                ax.set_yscale("log")
            plotting.note_no_ratio(ax, part.loc[part["mean_baseline"] == 0, "test"].unique(), s.baseline)
            ax.set_ylabel(f"{label} / {s.baseline}{' (log scale)' if log else ''}")
            ax.set_xlabel("NPB kernel, class, MPI processes (one instance)", fontsize="small")
            ax.tick_params(axis="x", labelsize="small", labelrotation=45)
            plt.setp(ax.get_xticklabels(), ha="right", rotation_mode="anchor")
        axes[1].legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)  # clear of the bars
        fig.tight_layout()
        paper = sorted({p["class"] for p in paper_figure_parameters(s, PAPER, "npb_mpi").values() if "class" in p})
        whiskers = no_interval_text(tests, "ratio_ci_low", "ratio_ci_high", "ratio")  # the bars are marked
        note_below(fig, (f"The paper's: class {', '.join(paper)}. " if paper else "") + whiskers)
        tests = tests[by + TESTS]
    fig.suptitle(f"NPB relative to {s.baseline} (Fig. 3a) on testbed {s.testbed!r}", y=1.02)
    return Drawn(fig, {f"tests against {s.baseline}": tests}, digits=3)


GCM_TIMES = {"time": "real", "user_time": "user", "sys_time": "system"}  # time -p's three times, as the paper's bars


@figure(PAPER, "fig3b-mitgcm-time", title="Youseff 2006 Fig. 3(b)", benchmarks=["mit_gcm"], claims=["youseff2006-gcm-*"],
        caption="MIT GCM exp2 (sequential, one simulated year at the reference and paper scales): real, user and system "
                "time of one run as `time -p` reports them, per platform, median with its order-statistic interval and the number "
                "of runs; beside it the bytes each run wrote, with the paper's \"approximately 33MB\" read and written. "
                "The paper draws its bars without printing their values. Without runs, the panel says why.")
def fig3b(table, s) -> Drawn:
    gcm = results.view(table, "mit_gcm", metric=list(GCM_TIMES) + ["output_bytes", "sys_share"])
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), gridspec_kw={"width_ratios": [3, 2]})
    paper_io = published_rows(s.reference_dir, PAPER, "mit_gcm", unit="MB")
    paper_io = paper_io[paper_io["metric"] == "io_volume"]
    if gcm.empty:
        why = short_why(s, "mit_gcm")
        plotting.unavailable(axes[0], f"{why}\n(the paper draws Fig. 3(b) without printing its values)")
        plotting.unavailable(axes[1], "the paper: about " + ", ".join(f"{float(v):g} MB" for v in paper_io["value"])
                             + " read and written per run, in writes of about 200 bytes")
        fig.suptitle(f"MIT GCM exp2 (Fig. 3b) on testbed {s.testbed!r}", y=1.02)
        return Drawn(fig, {"runs": why, "the paper's I/O": paper_io[["source", "metric", "unit", "value", "parameters"]]})
    times = gcm[gcm["metric"].isin(list(GCM_TIMES))].assign(time=lambda f: f["metric"].map(GCM_TIMES))
    summary = summarize(times, ["platform", "time"], s)
    platforms = baseline_first(summary["platform"], s.baseline)
    counts = summary.groupby("platform")["n"].min()
    # each platform by its label, as the right panel's ticks are (plotting.name_series names those)
    summary = summary.assign(where=summary["platform"].map(
        lambda p: f"{plotting.platform_label(p).replace(' (', chr(10) + '(', 1)}\nn = {int(counts[p])}"))
    plotting.grouped_bars(axes[0], summary, "where", "median", "ci_low", "ci_high", hue="time",
                          order=[summary.loc[summary["platform"] == p, "where"].iloc[0] for p in platforms],
                          hue_order=list(GCM_TIMES.values()), colors={"real": "#4c72b0", "user": "#dd8452", "system": "#55a868"})
    axes[0].set_ylabel(f"seconds, {ci_label(s, summary, dagger=False)}")
    axes[0].legend(title="time -p", fontsize="small")
    written = gcm[gcm["metric"] == "output_bytes"].assign(value=lambda f: f["value"] / 1e6)
    io = summarize(written, ["platform"], s).set_index("platform").reindex(platforms).reset_index()
    axes[1].bar(range(len(io)), io["median"], color=[plotting.platform_palette(platforms).get(p, "#999999") for p in io["platform"]])
    axes[1].set_xticks(range(len(io)), labels=list(io["platform"]), fontsize="small")
    axes[1].set_ylim(0, 1.2 * max([*io["median"].dropna(), *map(float, paper_io["value"]), 1]))
    for value in paper_io["value"]:
        axes[1].axhline(float(value), color=PUBLISHED_GREY, linestyle="--", linewidth=1)
        axes[1].text(0.01, float(value), f" the paper: about {float(value):g} MB read and written", color=PUBLISHED_GREY,
                     fontsize="x-small", va="bottom", transform=axes[1].get_yaxis_transform())
    axes[1].set_ylabel("MB written per run")
    steps = sorted({int(v) for v in gcm["time_steps"].dropna()}) if "time_steps" in gcm.columns else []
    fig.suptitle(f"MIT GCM exp2 (Fig. 3b) on testbed {s.testbed!r}"
                 + (f": {', '.join(map(str, steps))} time steps of 1.25 days" if steps else ""), y=1.02)
    fig.tight_layout()
    note_below(fig, no_interval_text(summary.assign(platform=summary["platform"] + " " + summary["time"]), "ci_low", "ci_high", "median"))
    tests = compare(gcm[gcm["metric"].isin(list(GCM_TIMES))], s, ["metric"], higher_is_better=False)
    shown = summary[["platform", "time", "n", "median", "ci_low", "ci_high"]]
    return Drawn(fig, {"run time per platform": shown, f"tests against {s.baseline}": tests[["metric"] + TESTS],
                       "MB written per run": io[["platform", "n", "median", "ci_low", "ci_high"]]}, digits=3)
