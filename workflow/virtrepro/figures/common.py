"""What several papers' figures share: selections, summaries and ways to draw them (each said once)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from .. import datalayout, results
from ..report import plotting
from ..analysis import stats
from ..declarations.platform_names import STAND_INS

# the columns of stats.compare_to_baseline a reader wants to see
OVERHEAD = ["platform", "n_platform", "overhead_percent", "overhead_ci_low", "overhead_ci_high", "verdict"]
TESTS = ["platform", "n_platform", "ratio", "overhead_percent", "p_value", "holm_p", "tost_p", "verdict"]


def comparable(frame: pd.DataFrame, baseline: str) -> bool:
    """Whether ``frame`` has runs of ``baseline`` and of a second platform (a ratio exists)."""
    return len(frame) > 0 and baseline in set(frame["platform"]) and frame["platform"].nunique() > 1


def no_comparison(what: str, s) -> str:
    return f"no {what} runs of {s.baseline!r} and a second platform on testbed {s.testbed!r}"


def platform_order(platforms, baseline: str | None = None) -> list:
    """The platforms once each in the catalogue's order (virtrepro.platforms.catalog.PLATFORMS: the order
    of every figure's bars, colours and legend entries), ``baseline`` first; a name it does not know last."""
    from ..platforms import catalog

    rank = {name: i for i, name in enumerate(catalog.NAMES)}
    return sorted(set(platforms), key=lambda p: (p != baseline, rank.get(p, len(rank)), str(p)))


def baseline_first(platforms, baseline: str) -> list:
    """The platforms in the catalogue's order, the baseline first (:func:`platform_order`)."""
    return platform_order(platforms, baseline)


def _data_scales(table: pd.DataFrame) -> list[str]:
    return sorted(set(table["scale"].dropna())) if "scale" in table.columns and len(table) else []


def without_runs_note(table: pd.DataFrame, benchmarks, baseline: str | None = None) -> str:
    """Why a platform of the catalogue has no runs of some of ``benchmarks`` (a figure's) in ``table``
    (the testbed's tidy table), one line per platform and reason, "" when none is missing:

    - a platform whose declaration says it informs no claim on a benchmark's subsystem (the catalogue's
      ``informs_nothing_on``: QEMU TCG on CPU and HPC benchmarks) is named with why, and that the scales
      the configuration's ``informative_only`` lists do not plan it there; true on any testbed, also one
      that never measured it;
    - a platform measured on this testbed, of a benchmark the data's scale would run on it
      (benchmarks.base.runnable_variants), is named as not measured in this data.

    Said once for every figure: :func:`virtrepro.figures.registry.draw` writes it under the figure."""
    from ..analysis.conditions import informs_nothing
    from ..benchmarks import BENCHMARKS
    from ..benchmarks.base import runnable_variants
    from ..platforms import catalog

    ran = set(zip(table["platform"], table["benchmark"])) if len(table) else set()
    measured = {p for p, _ in ran}
    shown = [b for b in dict.fromkeys(benchmarks) if b in BENCHMARKS]
    scales = _data_scales(table[table["benchmark"].isin(shown)]) if len(table) else []
    lines: dict[str, list[str]] = {}  # the line's text, the benchmarks in it to be filled in
    for spec in catalog.PLATFORMS:
        if spec.name == baseline:
            continue
        label = plotting.platform_label(spec.name).split(" (")[0]
        for benchmark in shown:
            if (spec.name, benchmark) in ran:
                continue
            why = informs_nothing(spec.name, benchmark)
            if why is not None:
                listed = _informative_only()
                planned = (", ".join(listed[:-1]) + " and " + listed[-1] if len(listed) > 1 else "".join(listed)) or "informative_only"
                key = (f"{label}: no {{}} runs; it would inform no claim on them ({why}), so the {planned} scales "
                       "do not plan it there (informative_only)")
            elif spec.name in measured and scales and _runnable(runnable_variants, BENCHMARKS[benchmark], spec.name, scales):
                key = f"{label}: no {{}} runs in this data, though the {' and '.join(scales)} scale plans them"
            else:
                continue
            lines.setdefault(key, []).append(benchmark)
    return "\n".join(key.format(", ".join(names)) for key, names in lines.items())


def _informative_only() -> list[str]:
    """The scales the configuration's ``informative_only`` names ([] without a configuration)."""
    from ..yamlfile import load

    try:
        return list(load(CONFIG).get("informative_only") or []) if CONFIG.is_file() else []
    except (AttributeError, TypeError):
        return []


def _runnable(runnable_variants, benchmark, platform: str, scales: list[str]) -> bool:
    """Whether one of ``scales`` of the configuration runs ``benchmark`` on ``platform``."""
    for scale in scales:
        try:
            if runnable_variants(benchmark, scale_parameters(benchmark.name, scale), platform):
                return True
        except (KeyError, TypeError, ValueError):
            continue
    return False


def ci_label(s, summary: pd.DataFrame | None = None, dagger: bool = True) -> str:
    """What the bars and intervals show: a summary's (stats.summarize) median with its order-statistic
    interval (none below 6 runs at 95 %). ``summary`` is accepted for the callers' symmetry.
    ``dagger=False``: without what :data:`NO_INTERVAL_MARK` means, for a figure whose note says it
    (:func:`no_interval_text`)."""
    if not dagger:
        return f"median with {s.confidence:.0%} CI (order statistics)"
    return f"median with {s.confidence:.0%} CI (order statistics; \u2020: too few runs for one)"


def note_below(fig, text: str, size: float = 8) -> None:
    """``text`` in grey under everything ``fig`` draws so far (tick labels, legends, notes), each of its
    lines wrapped to the figure's width; nothing for an empty text."""
    import textwrap

    if text:
        columns = int(fig.get_figwidth() * 72 / (size * 0.6))  # a character is about 0.6 em wide
        text = "\n".join(textwrap.fill(line, columns) for line in text.split("\n"))
        bottom = fig.get_tightbbox(fig.canvas.get_renderer()).y0 / fig.get_figheight()  # below the tick labels
        fig.text(0.5, min(bottom, 0.0) - 0.01, text, ha="center", va="top", fontsize=size, color="dimgray")


def counted(counts, what: str) -> list[str]:
    """Each count with its noun: "1 thread", "2 threads"."""
    return [f"{int(n)} {what}{'s' if n > 1 else ''}" for n in counts]


def short_label(platform: str) -> str:
    """A platform's label without its parenthesis ("QEMU TCG"), for a note that names several."""
    return plotting.platform_label(platform).split(" (")[0]


def footnote(fig, frame: pd.DataFrame) -> None:
    """Where the numbers of ``frame`` were measured and where the paper's were (plotting.regime_note)."""
    note_below(fig, plotting.regime_note(frame))


# the mark over a bar without its interval (plotting.grouped_bars' no_interval); no_interval_text says why
NO_INTERVAL_MARK = "\u2020"  # a dagger


def no_interval_text(compared: pd.DataFrame, low: str, high: str, value: str, name=None) -> str:
    """Why the bars of ``compared`` (stats.compare_to_baseline rows) with a ``value`` but no ``low``/``high``
    have no whisker: the distinct reasons (their ``ci_note``, without its p-values), after
    :data:`NO_INTERVAL_MARK` (the figure marks those bars), or, with ``name`` (row -> words), naming the
    bars of each reason; "" when every bar has its interval."""
    import re

    bare = compared[compared[value].notna() & (compared[low].isna() | compared[high].isna())]
    if bare.empty:
        return ""
    notes = bare["ci_note"] if "ci_note" in bare.columns else pd.Series("no interval", index=bare.index, dtype=object)
    reasons = notes.fillna("no interval").map(lambda note: re.sub(r" \([^()]*p = [^()]*\)", "", str(note)))
    if name is None:
        return f"{NO_INTERVAL_MARK} no interval: " + "; ".join(dict.fromkeys(reasons))
    return "\n".join(f"no whisker on {', '.join(name(row) for _, row in rows.iterrows())}: {reason}"
                     for reason, rows in bare.groupby(reasons, sort=False))


# the workflow's configuration
CONFIG = Path(__file__).resolve().parents[3] / "config" / "config.yaml"


def scale_parameters(benchmark: str, scale: str = "paper") -> dict:
    """``benchmark``'s parameters at ``scale`` in the configuration ({} where it has none, or where
    there is no configuration file); a broken one, or one that gives a key twice, is its error."""
    from ..yamlfile import load

    if not CONFIG.is_file():
        return {}
    try:
        return (load(CONFIG)["scales"].get(scale) or {}).get(benchmark) or {}
    except (KeyError, TypeError, AttributeError):
        return {}


def paper_figure_parameters(s, paper: str, benchmark: str) -> dict[str, dict]:
    """The parameters of the paper's figures of ``benchmark`` (their rows in data/reference without
    a number), by figure: {"Fig. 4a": {"class": "C", "threads": "1", ...}}."""
    frames = [pd.read_csv(path) for path in sorted(Path(s.reference_dir).glob(f"{paper}*.csv"))]
    rows = pd.concat(frames) if frames else pd.DataFrame(columns=["source", "benchmark", "parameters", "value"])
    rows = rows[(rows["benchmark"] == benchmark) & rows["source"].astype(str).str.startswith("Fig.")
                & pd.to_numeric(rows["value"], errors="coerce").isna()]
    return {row["source"]: dict(kv.split("=", 1) for kv in str(row["parameters"] or "").split(";") if "=" in kv)
            for _, row in rows.iterrows()}


# Overhead in one symmetric measure: how many times worse than the baseline, drawn as its log (base 2) on a
# linear axis, so that twice the time and half the throughput are the same bar (+1), and a guest twice as
# fast the same bar downwards (-1). Per cent is not symmetric: bounded at 100 % for a throughput, unbounded
# for a time.
# the factors an axis names, the roundest first (times_axis takes them in this order while they keep apart)
TIMES_TICKS = (2, 10, 100, 1000, 10000, 5, 1.5, 1.2, 1.1, 1.05, 1.02, 1.01, 3, 20, 50, 300)


def times_worse(overhead_percent, higher_is_better):
    """How many times worse than the baseline, from an overhead in per cent (positive = worse) as
    stats.compare_to_baseline gives it: the time's ratio (1 + o) where lower is better, the inverted
    throughput ratio 1 / (1 - o) where higher is better; above 1 worse, below 1 better; NaN where
    there is no finite one (a throughput of 0, a time below 0). Scalars or aligned columns."""
    import numpy as np

    o = np.asarray(pd.to_numeric(pd.Series(overhead_percent), errors="coerce"), dtype=float) / 100
    higher = np.broadcast_to(np.asarray(higher_is_better, dtype=bool), o.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(higher, 1 / (1 - o), 1 + o)
    factor = np.where(np.isfinite(factor) & (factor > 0), factor, np.nan)
    return factor if np.ndim(overhead_percent) else float(factor[0])


def log_worse(overhead_percent, higher_is_better):
    """:func:`times_worse` as the value drawn: its log base 2 (0 = as the baseline, +1 = twice as bad)."""
    import numpy as np

    return np.log2(times_worse(overhead_percent, higher_is_better))


def with_times(compared: pd.DataFrame, higher_is_better="higher_is_better") -> pd.DataFrame:
    """stats.compare_to_baseline rows with their overhead and its interval as :func:`log_worse`
    (``times``, ``times_low``, ``times_high``); ``higher_is_better``: a column's name or one for all."""
    higher = compared[higher_is_better].astype(bool) if isinstance(higher_is_better, str) else bool(higher_is_better)
    return compared.assign(**{name: log_worse(compared[column], higher) for name, column in (
        ("times", "overhead_percent"), ("times_low", "overhead_ci_low"), ("times_high", "overhead_ci_high"))})


def times_text(factor: float) -> str:
    """A factor of :func:`times_worse` in words: "2x worse", "1.05x better", "same"."""
    if factor != factor:
        return "n/a"
    shown = f"{max(factor, 1 / factor):.3g}"
    if shown == "1":
        return "same"
    return f"{shown}x worse" if factor > 1 else f"{shown}x better"


def times_axis(ax, s, axis: str = "y") -> None:
    """A linear axis of :func:`log_worse`, its ticks named as factors (:func:`times_text`: "2x worse",
    "same", "1.1x better"), the roundest of :data:`TIMES_TICKS` that keep a tenth of the axis apart."""
    import numpy as np
    from matplotlib.ticker import FuncFormatter, Locator

    class Factors(Locator):
        def __call__(self):
            low, high = sorted(self.axis.get_view_interval())
            gap, ticks = (high - low) / 10, [0.0] if low <= 0 <= high else []
            for value in (sign * np.log2(t) for t in TIMES_TICKS for sign in (1, -1)):
                if low <= value <= high and all(abs(value - t) >= gap for t in ticks):
                    ticks.append(value)
            return sorted(ticks)

    which = ax.yaxis if axis == "y" else ax.xaxis
    which.set_major_locator(Factors())
    which.set_major_formatter(FuncFormatter(lambda value, _pos=None: times_text(2.0 ** value)))
    label = f"vs {s.baseline}: times worse / better\n(time ratio, throughput ratio inverted; log scale)"
    (ax.set_ylabel if axis == "y" else ax.set_xlabel)(label)


def probe_record(s, probe: str) -> dict:
    """What the testbed's probe ``probe`` recorded (its ``status`` and ``reason``; none if it did not
    run), from the run facts beside the table (:func:`virtrepro.results.run_facts`)."""
    return results.run_facts(s.testbed, s.data_dir)["probes"].get(probe, {})


def npb_missing(s, benchmark: str = "NPB") -> str:
    """One line on why ``benchmark`` (an NPB one) has no runs here: the reason recorded when NPB was
    skipped, else that nothing was measured yet."""
    record = probe_record(s, datalayout.NPB_PROBE)
    if record.get("status") == "skipped":
        return f"no {benchmark} runs: NPB was skipped ({record.get('reason', 'no reason recorded')})"
    return f"no {benchmark} runs on testbed {s.testbed!r}"


# a source build's name in words (virtrepro.builds.registry)
BUILD_NAMES = {"npb": "NPB", "mitgcm": "MITgcm"}


def short_why(s, benchmark: str) -> str:
    """One short line on why ``benchmark`` has no runs here (the whole reason stays in its record): a
    compiled benchmark whose source was not obtained says so and names its probe record."""
    from ..benchmarks import BENCHMARKS

    build = BENCHMARKS[benchmark].build if benchmark in BENCHMARKS else None
    if build and probe_record(s, build).get("status") == "skipped":
        probe = datalayout.probe_path(s.data_dir, s.testbed, build)  # named, not read
        return (f"no {benchmark} runs here: {BUILD_NAMES.get(build, build)} was not obtained on this testbed "
                f"(why: its probe record, {probe.relative_to(s.data_dir)})")
    return f"no {benchmark} runs on testbed {s.testbed!r}"


# a published bound as a marker: at most ("<"), at least / more than (">"), about or exact ("o")
BOUND_MARKERS = {"at_most": "<", "at_least": ">", "more_than": ">", "approx": "o", "range_low": "|", "range_high": "|"}
PUBLISHED_GREY = "#555555"  # no platform's colour: the paper's numbers are no measured platform


def published_rows(reference_dir, paper: str, benchmark: str, unit: str = "%") -> pd.DataFrame:
    """The paper's stated numbers on ``benchmark`` in ``unit`` (data/reference/<paper>*.csv rows with a value)."""
    frames = [pd.read_csv(path) for path in sorted(Path(reference_dir).glob(f"{paper}*.csv"))]
    rows = pd.concat(frames) if frames else pd.DataFrame(columns=["benchmark", "unit", "value", "available"])
    rows = rows[(rows["benchmark"] == benchmark) & (rows["unit"] == unit) & rows["available"].astype(bool)]
    return rows[pd.to_numeric(rows["value"], errors="coerce").notna()]


def published_panel(ax, s, paper: str, benchmark: str, why: str, unit: str = "%",
                    kernels: list[str] | None = None) -> pd.DataFrame:
    """A panel without our runs: the paper's own numbers on ``benchmark`` (a marker per statement, its
    kind of bound as the marker's shape, in grey), and one line on why ours are missing. ``kernels``:
    only the statements on one of these kernels (a figure of some of a suite's kernels)."""
    rows = published_rows(s.reference_dir, paper, benchmark, unit)
    if kernels is not None:
        on = rows["parameters"].fillna("").map(lambda text: set(dict(kv.split("=", 1) for kv in text.split(";")
                                                                     if "=" in kv).get("kernel", "").split("+")))
        rows = rows[on.map(lambda named: bool(named & set(kernels)))]
    if rows.empty:
        plotting.unavailable(ax, f"{why}\n(the paper gives this figure as a plot only: no numbers to draw)")
        return rows
    import textwrap

    labels = []
    for i, (_, row) in enumerate(rows.iterrows()):
        p = dict(kv.split("=", 1) for kv in str(row.get("parameters") or "").split(";") if "=" in kv)
        detail = [p[k].upper() if k == "kernel" else f"{k} {p[k]}" for k in ("kernel", "threads", "procs", "network") if k in p]
        relative = {"overhead": "overhead", "improvement": "faster by", "abs_difference": "within"}.get(p.get("relative"), "")
        if rows["metric"].nunique() > 1:  # time and Mop/s of one kernel are two statements
            detail.insert(0, str(row["metric"]))
        labels.append(f"{row['platform_in_paper']}{', ' + ', '.join(detail) if detail else ''}"
                      f"{' (' + relative + ')' if relative else ''}")
        ax.plot(float(row["value"]), i, BOUND_MARKERS.get(p.get("bound"), "o"), color=PUBLISHED_GREY, markersize=7)
    ax.set_yticks(range(len(labels)), labels=labels, fontsize="x-small")
    ax.set_ylim(len(labels) - 0.5, -0.5)  # the first statement on top
    values = rows["value"].astype(float)
    ax.set_xlim(min(0.0, values.min()) * 1.15, max(0.0, values.max()) * 1.15 or 1)
    # no panel title: a figure's suptitle sits right above it
    ax.set_xlabel(f"{benchmark}: {unit} vs its baseline, as {paper} states it\n(< at most, > at least, o about)",
                  fontsize="small")
    columns = max(30, int(ax.get_position().width * ax.figure.get_figwidth() * 72 / (7 * 0.6)))
    ax.text(0.5, -0.45, textwrap.fill(why, columns), transform=ax.transAxes, ha="center", va="top", fontsize=7,
            color="dimgray")
    return rows


def stand_in_present(paper_platform: str, platforms) -> str | None:
    """The first measured platform (in declaration order) among ``platforms`` that stands for ``paper_platform``."""
    return next((p for p in STAND_INS.get(paper_platform, {}) if p in set(platforms)), None)


def compare(frame: pd.DataFrame, s, by: list[str], higher_is_better=True, **kw) -> pd.DataFrame:
    """stats.compare_to_baseline at the setting's level and margin; no rows without a comparison."""
    if not comparable(frame, s.baseline):
        return pd.DataFrame(columns=by + list(dict.fromkeys(OVERHEAD + TESTS + ["ratio_ci_low", "ratio_ci_high", "mean_baseline"])))
    return stats.compare_to_baseline(frame, s.baseline, by=by, higher_is_better=higher_is_better,
                                     level=s.confidence, margin=kw.pop("margin", s.margin), **kw)


def summarize(frame: pd.DataFrame, by: list[str], s, value: str = "value") -> pd.DataFrame:
    """stats.summarize at the setting's level; the empty summary's columns for no rows."""
    if frame.empty:
        return pd.DataFrame(columns=by + ["n", "mean", "median", "ci_low", "ci_high"])
    return stats.summarize(frame, by=by, level=s.confidence, value=value)


NETPERF_SIZE = "message size (bytes)"
# netperf's two instances always share one host of the testbed (benchmarks/network.py: instances 2,
# virtrepro.testbed.placement: one host per variant); the papers' netperf ran between two servers
NETPERF_TOPOLOGY = ("ours: two instances of each platform on one host of testbed {testbed!r}, through its virtual "
                    "network (no wire: no link's speed caps the throughput); the paper's: two servers over Gigabit Ethernet")


def netperf_rows(table: pd.DataFrame, metric: str) -> pd.DataFrame:
    """netperf's runs of ``metric`` (half_round_trip_latency: TCP_RR; throughput: TCP_STREAM), widened,
    the size column named :data:`NETPERF_SIZE`."""
    net = results.view(table, "netperf", metric=metric)
    return net.rename(columns={"request_size" if metric == "half_round_trip_latency" else "message_size": NETPERF_SIZE})


def netperf(table: pd.DataFrame, s) -> tuple[pd.DataFrame, pd.DataFrame]:
    """netperf's summaries per platform and message size: TCP_RR half round trip latency (us) and
    TCP_STREAM throughput (Mbit/s), the column of the size named :data:`NETPERF_SIZE`."""
    return tuple(summarize(netperf_rows(table, metric), ["platform", NETPERF_SIZE], s)
                 for metric in ("half_round_trip_latency", "throughput"))


def at_size(summary: pd.DataFrame, pick) -> tuple[int, pd.Series]:
    """The size ``pick`` (min or max) of a netperf summary and the median per platform at it."""
    size = pick(summary["message size (bytes)"])
    return size, summary[summary["message size (bytes)"] == size].set_index("platform")["median"]


def lines_with_bands(ax, summary: pd.DataFrame, x: str, errorbars: bool = False) -> list[str]:
    """One line per platform through a summary's medians over ``x``, each point's interval (of the
    median, stats.location_ci) as a band or an error bar. Returns the points that have no interval,
    in words."""
    palette = plotting.platform_palette(platform_order(summary["platform"]))
    bare = []
    for platform in palette:  # the catalogue's order: the legend's
        group = summary[summary["platform"] == platform]
        group = group.sort_values(x)
        colour = palette[platform]
        ax.plot(group[x], group["median"], marker="o", color=colour, label=platform)
        bounded = group["ci_low"].notna() & group["ci_high"].notna()
        if errorbars and bounded.any():
            centre = group["median"]
            ax.errorbar(group[x][bounded], centre[bounded], fmt="none", color=colour, ecolor=colour, capsize=3,
                        yerr=[(centre - group["ci_low"])[bounded], (group["ci_high"] - centre)[bounded]])
        elif bounded.any():
            ax.fill_between(group[x], group["ci_low"], group["ci_high"], where=bounded.to_numpy(), color=colour, alpha=0.2)
        bare += [f"{plotting.platform_label(platform)} at {size:g} (n = {n})" for size, n in zip(group[x][~bounded], group["n"][~bounded])]
    return bare


def npb_kernel_class(kernel: str, cls: str) -> str:
    """A kernel run at a problem class as NPB names it: "CG.A"."""
    return f"{kernel.upper()}.{cls}"


def npb_compared(part: pd.DataFrame, s) -> pd.DataFrame:
    """NPB run time of each platform relative to the baseline's per kernel and class
    (stats.compare_to_baseline), each row's tick in ``kernel`` (:func:`npb_kernel_class`)."""
    compared = compare(part, s, ["param_kernel", "param_class"], higher_is_better=False)
    if compared.empty:
        return compared
    return compared.assign(kernel=[npb_kernel_class(k, c) for k, c in zip(compared["param_kernel"], compared["param_class"])])


def npb_ratio_bars(ax, part: pd.DataFrame, s, what: str = "run time") -> pd.DataFrame:
    """NPB run time of each platform relative to the baseline's per kernel and class (its tick:
    :func:`npb_kernel_class`): the Hodges-Lehmann ratio with its exact Mann-Whitney interval
    (stats.compare_to_baseline), a bar
    without one marked :data:`NO_INTERVAL_MARK`, on a log axis (a binary-translating VM's tens of times
    beside the containers' ones); the comparisons drawn (no rows without the baseline)."""
    compared = npb_compared(part, s)
    if compared.empty:
        return compared
    order = sorted(compared["kernel"].unique())
    plotting.grouped_bars(ax, compared, "kernel", "ratio", "ratio_ci_low", "ratio_ci_high", order=order,
                          hue_order=baseline_first(compared["platform"], s.baseline), no_interval=NO_INTERVAL_MARK)
    ax.axhline(1, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ratios = compared[["ratio", "ratio_ci_low", "ratio_ci_high"]].stack()
    ratios = ratios[ratios > 0]
    if len(ratios):  # bars start at the panel's foot: below the smallest ratio, so one under 1 shows
        low, high = min(ratios.min(), 1) / 2, ratios.max() * 1.5
        if not ax.get_autoscaley_on():  # limits a panel sharing this axis set: room for both
            low, high = min(low, ax.get_ylim()[0]), max(high, ax.get_ylim()[1])
        ax.set_ylim(low, high)
    plotting.note_no_ratio(ax, compared.loc[compared["mean_baseline"] == 0, "kernel"].unique(), s.baseline)
    ax.set_xlabel("NPB kernel.class")
    ax.set_ylabel(f"{what} / {s.baseline} (log scale),\nHodges-Lehmann ratio, {s.confidence:.0%} CI")
    return compared


def untranslated(platforms) -> list[str]:
    """The platforms (in order, once each) that do not translate guest code: a panel near 1 shows them."""
    from ..platforms import catalog

    return [p for p in dict.fromkeys(platforms) if not catalog.get(p).translated]


def log_row_needed(platforms) -> bool:
    """Whether a platform that translates guest code is among ``platforms``: its tens of times need a row on
    a log axis above the row near 1 (:func:`near_one`); without one, the row near 1 alone shows every
    platform, and a log row of bars at 1 would only repeat it with intervals too small to see."""
    found = list(dict.fromkeys(platforms))
    return len(untranslated(found)) < len(found)


# the claims whose threshold a figure draws: a platform within a bound of the baseline
THRESHOLD_KINDS = ("overhead_at_most", "equivalent")


def claim_thresholds(s, ids, benchmark: str, platforms, where: dict | None = None,
                     metric: str | None = None) -> dict[tuple, list[str]]:
    """The thresholds of the testable claims among ``ids`` (their patterns, fnmatch) that bound the
    overhead of one of ``platforms`` on ``benchmark`` (:data:`THRESHOLD_KINDS`), read from claims.yaml
    through claims.load_claims: (kind, threshold) -> the claims' ids. ``where``: a panel's parameters; a
    claim whose ``where`` names one of them with another value is left out; ``metric``: a panel's metric,
    a claim on another metric is left out."""
    import fnmatch

    from ..analysis import claims

    found: dict[tuple, list[str]] = {}
    for claim in claims.load_claims(Path(s.reference_dir) / "claims.yaml"):
        check = claim.get("check") or {}
        if (not claim.get("testable") or check.get("kind") not in THRESHOLD_KINDS or check.get("benchmark") != benchmark
                or check.get("platform") not in set(platforms) or check.get("threshold") is None
                or (metric is not None and check.get("metric") not in (None, metric))
                or not any(fnmatch.fnmatch(claim["id"], pattern) for pattern in ids)):
            continue
        wanted = check.get("where") or {}
        if any(key in wanted and value not in (wanted[key] if isinstance(wanted[key], list) else [wanted[key]])
               for key, value in (where or {}).items()):
            continue
        found.setdefault((check["kind"], float(check["threshold"])), []).append(claim["id"])
    return found


THRESHOLD_COLOUR = "#7a0177"  # a claim's bound: no platform's colour


def near_one(ax, compared: pd.DataFrame, s, x: str, order: list, thresholds: dict, what: str = "run time",
             higher_is_better: bool = False) -> None:
    """The platforms of ``compared`` that do not translate guest code (containers; hardware VMs) as their
    ratio to the baseline with its interval, a point a platform, on a linear axis around 1 where 1-10 %
    can be read, with each claim's bound of :func:`claim_thresholds` as a line: ``overhead_at_most``
    at 1 + threshold (a ratio of times, higher is worse; 1 - threshold where ``higher_is_better``, a
    ratio of rates), ``equivalent`` at 1 +- threshold."""
    shown = compared[compared["platform"].isin(untranslated(compared["platform"]))]
    platforms = [p for p in baseline_first(shown["platform"], s.baseline) if p != s.baseline]
    palette = plotting.platform_palette(platforms)
    width = 0.8 / max(len(platforms), 1)
    for i, platform in enumerate(platforms):
        part = shown[shown["platform"] == platform].set_index(x).reindex(order)
        pos = [j + (i - (len(platforms) - 1) / 2) * width for j in range(len(order))]
        ax.errorbar(pos, part["ratio"], yerr=[part["ratio"] - part["ratio_ci_low"], part["ratio_ci_high"] - part["ratio"]],
                    fmt="o", color=palette[platform], capsize=3, markersize=5, label=platform)
        bare = (part["ratio_ci_low"].isna() | part["ratio_ci_high"].isna()).to_numpy()
        ax.plot([p for p, b in zip(pos, bare) if b], part["ratio"][bare], "o", markersize=5,  # no interval: open
                markerfacecolor="white", markeredgecolor=palette[platform], zorder=4)
    if (shown["ratio"].notna() & (shown["ratio_ci_low"].isna() | shown["ratio_ci_high"].isna())).any():
        ax.text(0.01, 0.02, "open: no interval", transform=ax.transAxes, fontsize=7, color="dimgray")
    ax.axhline(1, color="black", linewidth=0.8)
    said: dict[float, list[str]] = {}  # a bound's height -> the claims drawn there, in words
    for (kind, threshold), ids in sorted(thresholds.items()):
        worse = 1 - threshold if higher_is_better else 1 + threshold  # the bound on the worse side
        for y in [worse] + ([2 - worse] if kind == "equivalent" else []):
            ax.axhline(y, color=THRESHOLD_COLOUR, linestyle="--", linewidth=1)
            said.setdefault(y, [])
        words = f"within ±{threshold:.0%}" if kind == "equivalent" else f"at most {threshold:.0%} worse"
        said[worse].append(f"{words} ({len(ids)} claim{'s' if len(ids) > 1 else ''})")
    bounds = list(said)
    for y, words in said.items():
        if words:
            ax.annotate("claims: " + "; ".join(words), (1, y), xycoords=("axes fraction", "data"), xytext=(-2, 2),
                        textcoords="offset points", ha="right", va="bottom", fontsize=7, color=THRESHOLD_COLOUR)
    values = pd.concat([shown["ratio"], shown["ratio_ci_low"], shown["ratio_ci_high"]]).dropna()
    values = values[(values > 0.5) & (values < 2)]  # an interval reaching far out is cut at the panel's edge
    low, high = min([0.95, *values, *bounds]), max([1.05, *values, *bounds])
    pad = (high - low) * 0.1
    ax.set_ylim(low - pad, high + pad)
    ax.set_xlim(-0.5, len(order) - 0.5)
    ax.set_xticks(range(len(order)), labels=order)
    ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _p=None: f"{v:.2f}"))
    ax.set_ylabel(f"{what} / {s.baseline}\n(linear, no translation)")


def ratio_rows(groups, base_of, s, **fields) -> list[dict]:
    """For each (key, rows) of ``groups`` whose baseline values ``base_of(key)`` are not None or empty,
    stats.overhead's ratio of the rows' values to them with its interval (and ``ci_note``: its achieved
    confidence, or why it has none), beside ``fields[name](key, rows)``."""
    out = []
    for key, rows in groups:
        base = base_of(key)
        if base is None or len(base) == 0 or rows.empty:
            continue
        ratio = stats.overhead(base, rows["value"], higher_is_better=True, level=s.confidence)
        out.append({**{name: f(key, rows) for name, f in fields.items()},
                    **{k: ratio[k] for k in ("ratio", "ratio_ci_low", "ratio_ci_high", "ci_note")}})
    return out


def panels(n: int, width: float, height: float, **kw):
    """A figure with ``n`` panels in a row (not shared: a panel without data says why in its middle)."""
    fig, axes = plt.subplots(1, n, figsize=(width, height), squeeze=False, **kw)
    return fig, list(axes[0])


def one_legend(fig, axes) -> None:
    """One legend for all panels under the title (the panels' own removed)."""
    legends = [ax.get_legend_handles_labels() for ax in axes if ax.get_legend() is not None]
    for ax in axes:
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    if legends:
        handles, labels = max(legends, key=lambda hl: len(hl[1]))
        fig.legend(handles, labels, loc="upper center", ncol=len(labels), bbox_to_anchor=(0.5, 0.93), frameon=False)
