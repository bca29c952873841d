"""The operating-system microbenchmarks' figure (lmbench): what each platform costs relative to
native. One function draws it (:func:`lmbench_figure`), registered as figure ``lmbench-relative`` of
the ``microbenchmarks`` notebook, which draws it and says what it shows.

Panels: system call latency, context switch latency and memory bandwidth as each platform's
ratio to the baseline (the Hodges-Lehmann ratio with its exact Mann-Whitney interval,
:func:`virtrepro.analysis.stats.hl_ratio_ci`, as the verdicts use; a log axis when the
ratios span more than a factor of ten), and lat_mem_rd's load latency over array sizes, one line
per platform (the cache and memory staircase), with the testbed host's cache sizes as its runs
recorded them marked: where the largest array stays within the last-level cache as the
host's CPU reports it, the title says so (the Intel Xeon reference host, itself a virtual machine,
reports 480 MiB, which a virtual CPU's CPUID need not match: a step the staircase shows anyway is
the real cache's edge).
Colours and labels are the platforms' declarations (``platform_catalog``, through
:mod:`virtrepro.report.plotting`).
"""

from __future__ import annotations

import pandas as pd

from ..report import plotting
from ..declarations import regimes
from .. import results
from ..analysis import stats
from ..platforms import catalog as platform_catalog
from ..declarations.platform_names import label
from .registry import Drawn, figure

BENCHMARK = "lmbench"
NOT_MEASURED = ("lmbench: not measured in this data yet\n(add lmbench to the configuration's "
                "benchmarks and run the workflow)")
# ratio panels: metric, the labels that tell its values apart, title, how a case is written (given the
# host's cache sizes, as for the staircase)
RATIO_PANELS = (
    ("syscall_latency", ("syscall",), "system call latency", lambda r, caches: str(r["syscall"])),
    ("context_switch", ("size_kb", "processes"), "context switch latency",
     lambda r, caches: f"{int(r['processes'])} proc.\n{int(r['size_kb'])} KiB"),
    ("memory_bandwidth", ("operation", "size_mib"), "memory bandwidth (bw_mem)",
     lambda r, caches: f"{r['operation']}\n{_size(r['size_mib'])}{_in_cache(r['size_mib'], caches)}"),
)
LOG_AXIS_SPAN = 10  # ratios spanning more than this factor are drawn on a log axis
CROWDED = 8  # a ratio panel with more cases than this writes them smaller
NO_INTERVAL = ("A bar without whiskers has too few runs for any interval at this level (the exact "
               "Mann-Whitney interval needs 4 + 4 at 95 %; virtrepro.analysis.stats.hl_ratio_ci).")
# the variant's ``cpu`` parameter in words (benchmarks/lmbench.py: where its programs ran)
PLACEMENT = {"one": "every program on one CPU", "any": "CPUs left to the scheduler"}


def lmbench_rows(table: pd.DataFrame) -> pd.DataFrame:
    """lmbench's rows of the tidy table, its parameters and labels as columns (results.view), bw_mem's
    array size also in MiB as its variant asked for it (``size_mib``: bw_mem prints 10^6 bytes with two
    decimals, 1 MiB as 1.05). ValueError when they hold several variants (another scale's, or programs
    pinned and not: ``cpu``): their means would pool runs of different conditions."""
    if table is None or len(table) == 0 or "benchmark" not in table.columns:
        return pd.DataFrame(columns=["platform", "metric", "value", "repetition"])
    rows = results.view(table, BENCHMARK)
    variants = sorted(set(rows["variant"]))
    if len(variants) > 1:
        raise ValueError("lmbench: the data hold runs of several variants, which one figure would pool: "
                         + "; ".join(variants) + " (measure one scale into a data directory of its own)")
    if "size_mb" in rows.columns:
        # the sizes the variant asked for, by the size bw_mem prints for each (benchmarks.lmbench: expected);
        # a log whose variant does not say: its size converted
        asked = {round(mib * 2**20 / 1e6, 2): float(mib)
                 for text in (rows["param_bwmib"].dropna().unique() if "param_bwmib" in rows.columns else [])
                 for mib in map(int, str(text).split("+"))}
        mib = rows["size_mb"].map(lambda mb: asked.get(mb, mb * 1e6 / 2**20))
        rows = rows.assign(size_mib=rows["size_mib"].fillna(mib) if "size_mib" in rows.columns else mib)
    return rows


def _platforms(rows: pd.DataFrame) -> list[str]:
    present = set(rows["platform"])
    return [name for name in platform_catalog.NAMES if name in present]


def ratios(rows: pd.DataFrame, metric: str, labels: tuple, baseline: str, level: float = 0.95) -> pd.DataFrame:
    """Each platform's Hodges-Lehmann ratio of ``metric`` to the baseline, per case (a combination of
    ``labels``), with its exact Mann-Whitney interval: columns platform, case labels, ratio, low, high, method."""
    part = rows[rows["metric"] == metric]
    out = []
    if part.empty:  # a program the scale did not run: its labels are no columns either
        return pd.DataFrame(out, columns=["platform", *labels, "ratio", "low", "high", "method"])
    base = part[part["platform"] == baseline]
    for keys, group in part[part["platform"] != baseline].groupby(["platform", *labels], sort=False):
        platform, case = keys[0], dict(zip(labels, keys[1:]))
        reference = base
        for name, value in case.items():
            reference = reference[reference[name] == value]
        if reference.empty:
            continue
        ci = stats.hl_ratio_ci(group["value"].to_numpy(float), reference["value"].to_numpy(float), level)
        out.append({"platform": platform, **case, "ratio": ci.estimate, "low": ci.low, "high": ci.high, "method": ci.method})
    return pd.DataFrame(out, columns=["platform", *labels, "ratio", "low", "high", "method"])


def _in_cache(mib: float, caches: dict[str, int] | None) -> str:
    """The marked cache below the last level that an array of ``mib`` MiB fits in, as the host's CPU reports
    its caches ("\n(in L2)"); "" for none (a virtual CPU's last level need not be real: the staircase
    shows where the latency steps, its title what the CPU reports)."""
    marked = sorted((size, name) for name, size in (caches or {}).items() if name in MARKED_CACHES)
    holding = [name for size, name in marked[:-1] if mib * 2**20 <= size]
    return f"\n(in {holding[0]})" if holding else ""


def _readable_log_axis(ax) -> None:
    """A log ratio axis whose values near 1 can be read: plain numbers, minor ticks labelled at 1.2, 1.5, 2, 3, 5 x 10^k."""
    from matplotlib.ticker import FuncFormatter, LogLocator

    plain = FuncFormatter(lambda value, _: f"{value:g}")
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_locator(LogLocator(base=10, subs=(1.2, 1.5, 2, 3, 5)))
    ax.yaxis.set_minor_formatter(plain)
    ax.tick_params(axis="y", which="minor", labelsize=7)


def _ratio_panel(ax, rows, metric, labels, title, case_text, baseline, level, caches=None) -> bool:
    """The panel of ``metric``'s ratios; True when a bar has no interval."""
    frame = ratios(rows, metric, labels, baseline, level)
    if frame.empty:
        measured = not rows.empty and (rows["metric"] == metric).any()
        plotting.unavailable(ax, f"{title}: no {label(baseline)} runs to compare with" if measured
                             else f"{title}: not measured")
        return False
    frame["case"] = frame.apply(case_text, axis=1, caches=caches)
    order = [name for name in platform_catalog.NAMES if name in set(frame["platform"])]
    plotting.grouped_bars(ax, frame, "case", "ratio", "low", "high", hue_order=order)
    ax.axhline(1.0, color="black", linewidth=0.8)
    bounds = pd.concat([frame["ratio"], frame["low"], frame["high"]]).dropna()
    bounds = bounds[bounds > 0]
    if not bounds.empty and bounds.max() / bounds.min() > LOG_AXIS_SPAN:
        ax.set_yscale("log")
        _readable_log_axis(ax)
    better = "higher" if metric == "memory_bandwidth" else "lower"
    if len(set(frame["case"])) > CROWDED:
        ax.tick_params(axis="x", labelsize=7)
    ax.set_title(title)
    ax.set_ylabel(f"ratio to {label(baseline)} ({better} is better)")
    return bool(frame["low"].isna().any())  # stats.hl_ratio_ci's none: too few runs for the level


# the caches marked on the staircase (a machine's cache_sizes names), drawn as vertical lines of this id
MARKED_CACHES = ("L1d", "L2", "L3")
CACHE_LINE = "cache size"


def _staircase(ax, rows, caches: dict[str, int] | None = None) -> None:
    part = rows[rows["metric"] == "memory_latency"]
    if part.empty:
        plotting.unavailable(ax, "lat_mem_rd: not measured")
        return
    strides = sorted(set(part["stride"]))
    styles = dict(zip(strides, ["-", "--", ":", "-."] * len(strides)))
    for platform in _platforms(part):
        for stride in strides:
            line = part[(part["platform"] == platform) & (part["stride"] == stride)].groupby("size_mib")["value"].mean()
            if line.empty:
                continue
            name = platform if len(strides) == 1 else f"{platform}, stride {int(stride)} B"
            ax.plot(line.index, line.to_numpy(), styles[stride], marker=".", color=plotting.PLATFORM_COLORS[platform],
                    label=name)
    from matplotlib.ticker import FuncFormatter, LogLocator

    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(LogLocator(base=4))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda mib, _: _size(mib)))
    ax.set_yscale("log")
    ax.set_xlabel("array size")
    ax.set_ylabel("load latency (ns, mean)")
    title = "memory load latency (lat_mem_rd)"
    title = title if len(strides) > 1 else f"{title}, stride {int(strides[0])} B"
    marked = {name: size / 2**20 for name, size in (caches or {}).items() if name in MARKED_CACHES}
    for name, mib in marked.items():
        ax.axvline(mib, color="0.5", linestyle=":", linewidth=0.9, gid=CACHE_LINE)
        ax.annotate(f"{name} {_size(mib)}", (mib, 1), xycoords=("data", "axes fraction"), rotation=90, ha="right",
                    va="top", fontsize="x-small", color="0.4")
    last = max(marked.items(), key=lambda item: item[1], default=None)
    if last is not None and part["size_mib"].max() <= last[1]:
        # a guest's CPUID may report a cache the hardware does not have (a virtual CPU's L3 of 480 MiB)
        title += f"\nlargest array {_size(part['size_mib'].max())}: within the {last[0]} the host's CPU reports"
    ax.set_title(title)
    ax.legend(fontsize="x-small", loc="upper left", framealpha=0.9)


def _size(mib: float) -> str:
    """An array size given in MiB, as a person writes it (512 B, 32 KiB, 8 MiB)."""
    for unit, factor in (("MiB", 1), ("KiB", 1024), ("B", 1024 * 1024)):
        if mib * factor >= 1 or unit == "B":
            return f"{mib * factor:g} {unit}"


@figure("microbenchmarks", "lmbench-relative", title="lmbench", benchmarks=[BENCHMARK],
        caption="System call and context switch latency and memory bandwidth of each platform relative to the "
                "baseline's mean (with the interval of the ratio), and lat_mem_rd's load latency over the array size "
                "(the cache and memory staircase), one line per platform, the host's cache sizes marked.")
def lmbench_relative(table: pd.DataFrame, s) -> Drawn:
    # one machine per benchmark (virtrepro.rawdata.machines): its cache sizes, as the table's manifest records them
    found = results.recorded_machines(s.testbed, s.data_dir).get(BENCHMARK)
    fig = lmbench_figure(table, s.baseline, s.confidence, regimes.cache_sizes(found[0]) if found else None)
    rows = lmbench_rows(table)
    numbers = {}
    for metric, labels, _, _ in RATIO_PANELS:
        if not rows.empty:
            numbers[f"{metric} / {s.baseline}"] = ratios(rows, metric, labels, s.baseline, s.confidence)
    return Drawn(fig, numbers, digits=3)


def lmbench_figure(table: pd.DataFrame, baseline: str = platform_catalog.BASELINE, level: float = 0.95,
                   caches: dict[str, int] | None = None):
    """lmbench on each platform relative to ``baseline``; a figure that says so when there is nothing to draw.
    ``caches``: the host's cache sizes in bytes (``regimes.cache_sizes``), marked on the staircase."""
    import matplotlib.pyplot as plt

    rows = lmbench_rows(table)
    if rows.empty:
        fig, ax = plt.subplots(figsize=(8, 2))
        plotting.unavailable(ax, NOT_MEASURED)
        return fig
    fig, axes = plt.subplots(2, 2, figsize=(13, 9))
    without = [_ratio_panel(ax, rows, metric, labels, title, case_text, baseline, level, caches)
               for ax, (metric, labels, title, case_text) in zip(axes.flat, RATIO_PANELS)]
    if any(without):
        fig.text(0.5, -0.01, NO_INTERVAL, ha="center", va="top", fontsize=9, color="dimgray")
    _staircase(axes.flat[3], rows, caches)
    handles = {}
    for ax in axes.flat[:3]:
        for handle, name in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(name, handle)
    if handles:
        fig.legend(list(handles.values()), list(handles), loc="upper center", ncol=len(handles),
                   bbox_to_anchor=(0.5, 1.02))
    placement = sorted(set(rows["param_cpu"].dropna())) if "param_cpu" in rows.columns else []
    where = "".join(f"; {PLACEMENT.get(value, value)}" for value in placement)
    fig.suptitle(f"lmbench: each platform relative to {label(baseline)} (means, {level:.0%} intervals{where})", y=1.05)
    fig.tight_layout()
    return fig
