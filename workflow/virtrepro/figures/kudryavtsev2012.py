"""Kudryavtsev 2012, Virtualizing HPC applications using modern hypervisors: NPB (Figs. 1-2) and HPCC (Fig. 3)."""

from __future__ import annotations


import matplotlib.pyplot as plt
import pandas as pd

from ..analysis import claims
from ..report import plotting
from .. import results
from ..platforms.catalog import FULL_VM, get
from .registry import Drawn, figure
from .common import (NO_INTERVAL_MARK, OVERHEAD, baseline_first, claim_thresholds, compare, comparable, footnote,
                     log_row_needed, log_worse, near_one, no_comparison, no_interval_text, note_below, npb_missing, published_panel,
                     short_why, times_axis, untranslated, with_times)

PAPER = "kudryavtsev2012"
NPB_BY = ["param_kernel", "param_class", "param_nodes", "param_procs"]


def npb_overhead(table, s) -> tuple[pd.DataFrame, str]:
    """NPB (MPI) run time overhead against the baseline per kernel, class, instances and processes,
    and why there is none."""
    npb = results.view(table, "npb_mpi", metric="time")
    why = npb_missing(s, "npb_mpi") if npb.empty else f"npb_mpi: an overhead needs {s.baseline!r} and a second platform"
    compared = compare(npb, s, NPB_BY, higher_is_better=False)
    return compared.assign(procs=compared["param_procs"]), why


def npb_figure(table, s, kernels: list[str], title: str) -> Drawn:
    compared, why = npb_overhead(table, s)
    if compared.empty and results.view(table, "npb_mpi", metric="time").empty:  # the paper's own numbers instead
        fig, ax = plt.subplots(figsize=(8, 3))
        shown = published_panel(ax, s, PAPER, "npb_mpi", short_why(s, "npb_mpi"), kernels=kernels)
        fig.suptitle(f"{title} on testbed {s.testbed!r}")
        return Drawn(fig, {"published": shown[["platform_in_paper", "parameters", "value"]]})
    if compared.empty:  # one line on why, in one panel
        fig, ax = plt.subplots(figsize=(8, 2))
        plotting.unavailable(ax, why)
        ax.set_title(f"{title} on testbed {s.testbed!r}")
        return Drawn(fig, {"overhead": why})
    zoomed = [p for p in untranslated(compared["platform"]) if p != s.baseline]  # a row near 1 for them
    # the log row of bars where a platform translates guest code (or none but it is compared); the row near 1
    # for the others, alone where no platform translates (a log row of bars at 1 would only repeat it)
    bars = 0 if log_row_needed(compared["platform"]) or not zoomed else None
    near = (1 if bars == 0 else 0) if zoomed else None
    rows = 2 if bars is not None and near is not None else 1
    fig, axes = plt.subplots(rows, len(kernels), figsize=(3.2 * len(kernels), 3.6 * rows), sharey="row", squeeze=False)
    drawn = []
    for i, kernel in enumerate(kernels):
        part = compared[compared["param_kernel"] == kernel]
        if part.empty:
            for row in range(rows):
                plotting.unavailable(axes[row][i], f"{kernel.upper()}: not run")
            continue
        part = part[part["param_nodes"] == part["param_nodes"].min()]  # one instance, as the paper's single-node points
        part = with_times(part, False)  # run times
        order = sorted(part["procs"].unique())
        heading = f"{kernel.upper()} class {part['param_class'].iloc[0]}"
        if bars is not None:
            ax = axes[bars][i]
            ax.axhspan(*log_worse([1, 5], False), color="tab:green", alpha=0.15, label="paper: 1-5 % (NUMA)")
            ax.axhspan(*log_worse([10, 60], False), color="tab:red", alpha=0.10, label="paper: 10-60 % (no NUMA)")
            plotting.grouped_bars(ax, part, "procs", "times", "times_low", "times_high",
                                  order=order, hue_order=baseline_first(part["platform"], s.baseline),
                                  no_interval=NO_INTERVAL_MARK)
            ax.axhline(0, color="black", linewidth=0.8)
            plotting.note_no_ratio(ax, part.loc[part["mean_baseline"] == 0, "procs"].unique(), s.baseline, "processes")
            ax.set_title(heading)
            ax.set_xlabel("MPI processes")
        if near is not None:
            ax = axes[near][i]
            near_one(ax, part, s, "procs", order,
                     claim_thresholds(s, NPB_CLAIMS, "npb_mpi", zoomed, where={"kernel": kernel}))
            # the paper's bands, as ratios
            ax.axhspan(1.01, 1.05, color="tab:green", alpha=0.15, label="paper: 1-5 % (NUMA)" if bars is None else None)
            ax.axhspan(1.10, 1.60, color="tab:red", alpha=0.10, label="paper: 10-60 % (no NUMA)" if bars is None else None)
            ax.set_xlabel("MPI processes")
            if bars is None:
                ax.set_title(heading)
            if i:
                ax.set_ylabel("")
        drawn.append(part)
    if bars is not None:  # the axis is shared: its scale and label once
        times_axis(axes[bars][0], s)
        for ax in axes[bars][1:]:
            ax.set_ylabel("")
    if drawn:  # right of the last panel: inside, it covers bars of its own and of the panel beside it
        axes[0][-1].legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0)
    fig.suptitle(f"{title} on testbed {s.testbed!r}")
    fig.tight_layout()
    if drawn:
        note_below(fig, no_interval_text(pd.concat(drawn), "overhead_ci_low", "overhead_ci_high", "overhead_percent"))
    shown = compared[compared["param_kernel"].isin(kernels)]
    return Drawn(fig, {f"run time overhead vs {s.baseline} (%)": shown[NPB_BY + OVERHEAD]}, digits=1)


# what npb_figure's captions say of its axis and its bars without an interval
SYMLOG_AXIS = ("the platforms that do not translate guest code on a linear axis around 1, where 1-5 % can be read, and, "
               "where a platform translates (a QEMU TCG guest), every platform above them on a log axis of how many "
               "times longer than the baseline, named in factors (common.times_axis)")
MARKED = (f"A bar without an interval is marked {NO_INTERVAL_MARK}, a point near 1 without one is drawn open, and "
          "the note below says why.")
NPB_CLAIMS = ["kudryavtsev2012-numa-kvm-overhead-1-5pct-npb", "kudryavtsev2012-numa-overhead-varies-slightly",
              "kudryavtsev2012-no-numa-*", "kudryavtsev2012-mg8-*",
              "kudryavtsev2012-vm-run-times-more-scattered"]


@figure(PAPER, "fig1-npb-cg-ft-mg-is", title="Kudryavtsev 2012 Fig. 1", benchmarks=["npb_mpi"], claims=NPB_CLAIMS,
        caption='NPB (MPI) CG, FT, MG and IS run-time overhead against the baseline platform per process count, one '
                "panel per kernel, the Hodges-Lehmann ratio with its exact Mann-Whitney interval at the paper's 97 % level; the paper's 1-5 % "
                f'(NUMA guest) and 10-60 % (no NUMA) ranges as bands; {SYMLOG_AXIS}. {MARKED} When NPB was not run, '
                'the panel says why.')
def fig1(table, s) -> Drawn:
    return npb_figure(table, s, ["cg", "ft", "mg", "is"], "NPB CG, FT, MG, IS (Fig. 1)")


@figure(PAPER, "fig2-npb-ep-lu", title="Kudryavtsev 2012 Fig. 2", benchmarks=["npb_mpi"], claims=NPB_CLAIMS,
        caption='NPB (MPI) EP and LU run-time overhead against the baseline platform per process count, the Hodges-Lehmann '
                f'ratio with its exact Mann-Whitney interval at 97 %; {SYMLOG_AXIS}. {MARKED} When NPB was not run, the panel says why.')
def fig2(table, s) -> Drawn:
    return npb_figure(table, s, ["ep", "lu"], "NPB EP, LU (Fig. 2)")


HPCC = {"hpl_gflops": "HPL", "single_stream_triad": "STREAM single", "star_stream_triad": "STREAM EP",
        "single_random_access": "RandomAccess single", "star_random_access": "RandomAccess EP",
        "mpi_random_access": "RandomAccess MPI", "avg_ping_pong_latency": "PingPong latency",
        "avg_ping_pong_bandwidth": "PingPong bandwidth"}


@figure(PAPER, "fig3-hpcc", title="Kudryavtsev 2012 Fig. 3", benchmarks=["hpcc"],
        claims=["kudryavtsev2012-numa-kvm-overhead-1-5pct-stream", "kudryavtsev2012-numa-kvm-overhead-1-5pct-randomaccess",
                "kudryavtsev2012-randomaccess-ep-*"],
        caption='HPCC against the baseline platform, how many times worse (a latency\'s ratio, a rate\'s ratio inverted, '
                'on one log scale): HPL, STREAM triad single and EP, RandomAccess single, EP and MPI, PingPong latency '
                "and bandwidth, with confidence intervals at 97 %; the paper's ranges as bands.")
def fig3(table, s) -> Drawn:
    hpcc = results.view(table, "hpcc", metric=list(HPCC))
    fig, ax = plt.subplots(figsize=(10, 4))
    compared = pd.DataFrame()
    if not comparable(hpcc, s.baseline):
        plotting.unavailable(ax, no_comparison("hpcc", s))
    else:
        hpcc = hpcc.assign(higher_is_better=[claims.higher_is_better(m, u) for m, u in zip(hpcc["metric"], hpcc["unit"])])
        compared = compare(hpcc, s, ["metric"], higher_is_better="higher_is_better")
        compared["test"] = compared["metric"].map(HPCC)
        # the paper's overheads of rates (every HPCC test in its bands is one): as times worse
        ax.axhspan(*log_worse([1, 5], True), color="tab:green", alpha=0.15, label="paper: 1-5 % (NUMA)")
        order = [t for t in HPCC.values() if t in set(compared["test"])]
        if "RandomAccess EP" in order:
            i = order.index("RandomAccess EP")
            ax.fill_between([i - 0.45, i + 0.45], *log_worse([45, 50], True), color="tab:red", alpha=0.3,
                            label="paper: RandomAccess EP 45-50 % (no NUMA)")
        # each run against the baseline's mean: how few runs an interval rests on
        base = hpcc[hpcc["platform"] == s.baseline].groupby("metric")["value"].mean()
        runs = hpcc[hpcc["platform"] != s.baseline].assign(test=lambda f: f["metric"].map(HPCC))
        ratio = runs["value"] / runs["metric"].map(base)
        runs["overhead_percent"] = ((1 - ratio) * 100).where(runs["higher_is_better"], (ratio - 1) * 100)
        runs["times"] = log_worse(runs["overhead_percent"], runs["higher_is_better"].astype(bool))
        compared = with_times(compared)  # latencies and rates on one measure
        plotting.grouped_bars(ax, compared, "test", "times", "times_low", "times_high", order=order, points=runs)
        ax.axhline(0, color="black", linewidth=0.8)
        times_axis(ax, s)  # the paper's 1-5 % band and a TCG VM's tens of times on one axis
        ax.tick_params(axis="x", labelrotation=20)
        ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    ax.set_title(f"HPCC (Fig. 3) on testbed {s.testbed!r}")
    footnote(fig, results.view(table, "hpcc"))
    shown = compared[["test"] + OVERHEAD[:-1]] if len(compared) else no_comparison("hpcc", s)
    return Drawn(fig, {f"overhead vs {s.baseline} (%)": shown}, digits=1)


def guest_knobs(table, s) -> pd.DataFrame:
    """The KVM guest settings each VM run of hpcc and npb_mpi applied (NUMA nodes, huge pages, vCPU pinning),
    as its first variant recorded them (the run facts beside the table: results.run_facts)."""
    vm_logs = table[table["platform"].map(lambda p: get(p).family == FULL_VM) & table["benchmark"].isin(["hpcc", "npb_mpi"])]
    knobs, variants = [], results.run_facts(s.testbed, s.data_dir)["variants"] if len(vm_logs) else {}
    for (platform, benchmark), logs in vm_logs.groupby(["platform", "benchmark"]):
        facts = variants[f"{platform}/{benchmark}/{logs['variant'].iloc[0]}"]
        spec, applied = facts["spec"], facts["applied"]
        knobs.append({"platform": platform, "benchmark": benchmark, "vcpus": spec.get("vcpus"),
                      "numa_nodes": applied.get("numa_nodes"), "hugepages": applied.get("hugepages"),
                      "vcpu_pinning": applied.get("vcpu_pinning", "off")})
    return pd.DataFrame(knobs, columns=["platform", "benchmark", "vcpus", "numa_nodes", "hugepages", "vcpu_pinning"])
