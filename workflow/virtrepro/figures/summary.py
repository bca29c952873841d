"""The summary's overview: overhead by platform family and subsystem, the papers' numbers (then) beside ours (today)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from ..analysis import claims, conditions, stats
from .. import datalayout, results
from ..declarations import metric_catalog
from ..report import plotting
from ..platforms import catalog as platform_catalog
from ..rawdata import machines as host_machines
from .common import log_worse, times_axis, times_text
from .registry import Drawn, figure

PAPER = "summary"

# which metric stands for which subsystem in the overview, declared with the benchmarks' metrics
SUBSYSTEM_LABELS = {"cpu": "CPU", "memory": "memory", "disk": "disk", "network": "network", "hpc": "MPI"}
SUBSYSTEM = {key: SUBSYSTEM_LABELS[subsystem] for key, subsystem in metric_catalog.overview().items()}
SUBSYSTEMS = list(SUBSYSTEM_LABELS.values())
OVERVIEW_BENCHMARKS = sorted({benchmark for benchmark, _ in SUBSYSTEM})
# every platform but the native ones, with its family's name (declared once: virtrepro.platforms.catalog)
FAMILY = {p.name: platform_catalog.FAMILY_LABELS[p.family] for p in platform_catalog.PLATFORMS
          if p.family != platform_catalog.NATIVE}
CONTAINER, FULL_VM = (platform_catalog.FAMILY_LABELS[f] for f in (platform_catalog.CONTAINER, platform_catalog.FULL_VM))
# a platform that translates guest code (QEMU TCG) is no hypervisor: it is drawn apart, never as today's full VM
TRANSLATED = "binary translation"
PANEL = {p.name: TRANSLATED if p.translated else FAMILY[p.name] for p in platform_catalog.PLATFORMS if p.name in FAMILY}
TODAY, THEN = "today (ours)", "then (papers)"
ERA_COLORS = {THEN: "#bbbbbb", TODAY: "#3b6ea5"}
EMPTY_SLOT = {THEN: "none published", TODAY: "not measured"}  # what a slot without numbers means
# our bars, one a machine (never pooled over two): the first machine's colour is today's, the others' after it
MACHINE_COLORS = ("#3b6ea5", "#8fb8de", "#1b3a5c", "#6a8caf")

# the papers' platforms by family, and the names of their native baselines
PAPER_FAMILY = {"OpenVZ": CONTAINER, "LXC": CONTAINER, "Linux Containers": CONTAINER, "Xen": FULL_VM,
                "KVM": FULL_VM, "KVM/QEMU": FULL_VM, "VMWare Server": FULL_VM, "VMware Server": FULL_VM,
                "Palacios": FULL_VM, "Kitten/Palacios": FULL_VM, "KVM and Palacios": FULL_VM, "EC2": FULL_VM}
PAPER_NATIVE = {platform_catalog.BASELINE, "base", "host", "CHAOS", "RHEL2.6.12", "RHEL2.6.9", "CHAOS+RHEL2.6.9+RHEL2.6.12"}


def short_cpu(machine: dict | None) -> str:
    """A machine's CPU model, short, as a bar's label names it: "Intel Xeon", "AMD EPYC" ("" unrecorded)."""
    import re

    text = (machine or {}).get("cpu_model") or ""
    text = re.sub(r"\((?:R|TM)\)", "", text, flags=re.IGNORECASE)
    text = re.sub(r"@.*$|\b(?:Processor|CPU)\b", "", text)
    return " ".join(text.split())


def machines_of(testbed: str, data_dir, among=None) -> dict[str, str]:
    """Each benchmark's machine, as its bars name it (:func:`short_cpu`; two machines with one CPU model
    are told apart by their caches), from the table's manifest (:func:`results.recorded_machines`). The
    table's builder refuses a benchmark measured on two machines (``results.build.require_one_machine``),
    so each benchmark has one, or none recorded (then ""); one with two here is an error. ``among``: only
    these benchmarks (the figure's: a machine none of them ran on does not lengthen the names)."""
    recorded = results.recorded_machines(testbed, data_dir)
    if among is not None:
        recorded = {benchmark: found for benchmark, found in recorded.items() if benchmark in set(among)}
    distinct: dict[str, dict] = {}  # a machine's description -> the machine
    of: dict[str, str] = {}
    for benchmark, found in recorded.items():
        found = [m for m in found if m]
        if host_machines.mixed(found):
            raise ValueError(f"testbed {testbed!r}: {benchmark} was measured on more than one machine; "
                             "its comparisons would be between machines")
        if found:
            of[benchmark] = host_machines.describe(found[0])
            distinct.setdefault(of[benchmark], found[0])
    short = {name: short_cpu(machine) or name for name, machine in distinct.items()}
    names = {name: (f"{short[name]} ({name.split('(', 1)[1].split(')')[0]})"
                    if list(short.values()).count(short[name]) > 1 and "(" in name else short[name])
             for name in distinct}
    return {benchmark: names[name] for benchmark, name in of.items()}


def today_era(machine: str) -> str:
    """The era (a bar's label) of our comparisons measured on ``machine`` (:func:`machines_of`)."""
    return f"today (ours, {machine})" if machine else TODAY


def today(table: pd.DataFrame, baseline: str, machines: dict[str, str] | None = None) -> pd.DataFrame:
    """Our overhead (%, positive = worse) of every container and VM against ``baseline`` at the same variant
    and on the same machine, for each metric that stands for a subsystem; an undeclared metric in the
    table is an error. ``machines``: benchmark -> the machine that measured it (:func:`machines_of`; a
    benchmark not in it: ""), in the column ``machine``, and the era of its row (:func:`today_era`).
    A comparison is paired by round where both sides were measured in rounds (``stats.compare_to_baseline``:
    the Hodges-Lehmann ratio of the rounds' log ratios), else the unpaired Hodges-Lehmann ratio."""
    metric_catalog.require_declared(zip(table["benchmark"], table["metric"]))
    machines = machines or {}
    keys = pd.Series(list(zip(table["benchmark"], table["metric"])), index=table.index)
    ours = table[keys.isin(list(SUBSYSTEM))]
    rows = []
    if len(ours) and baseline in set(ours["platform"]):
        for (bench, metric), part in ours.groupby(["benchmark", "metric"]):
            part = results.view(part, bench)  # its parameters and labels as columns
            part["higher_is_better"] = [claims.higher_is_better(m, u) for m, u in zip(part["metric"], part["unit"])]
            part["machine"] = machines.get(bench, "")  # the baseline's runs on the same machine only
            variant = [c for c in part.columns if c.startswith("param_") and part[c].notna().any()]
            labels = [c for c in ("file_size_kb", "stressor") if c in part.columns and part[c].notna().any()]
            compared = stats.compare_to_baseline(part, baseline, by=["machine"] + variant + labels,
                                                 higher_is_better="higher_is_better")
            rows.append(compared.assign(subsystem=SUBSYSTEM[(bench, metric)], benchmark=bench, metric=metric))
    out = pd.concat(rows) if rows else pd.DataFrame(columns=["platform", "subsystem", "overhead_percent", "benchmark",
                                                             "metric", "higher_is_better", "machine"])
    out = out[out["platform"].isin(list(FAMILY)) & out["overhead_percent"].notna()]
    return out.assign(family=out["platform"].map(FAMILY), panel=out["platform"].map(PANEL),
                      era=out["machine"].map(today_era).astype(object),
                      times=log_worse(out["overhead_percent"], out["higher_is_better"].astype(bool)))


def paper_subsystem(benchmark: str, metric: str) -> str | None:
    if benchmark in ("netperf", "iperf3"):
        return "network"
    if benchmark in ("iozone", "iozone_disk", "bonnie", "sysbench_fileio", "fio", "dd"):
        return "disk"
    if benchmark == "npb_mpi" or metric.startswith("mpi_") or "ping_pong" in metric:
        return "MPI"
    if "stream" in metric or "random_access" in metric or benchmark in ("sysbench_memory", "mbw"):
        return "memory"
    if benchmark in ("npb_serial", "npb_omp", "sysbench_cpu", "hpcc", "stress_ng"):
        return "CPU"
    return None


def paper_overhead(kind: str, value: float, higher: bool) -> float | None:
    """A published relative number as an overhead in percent, positive = worse."""
    if kind == "overhead":
        return value
    if kind == "improvement":
        return -value
    if kind == "of_baseline":
        return 100 - value if higher else value - 100
    if kind == "ratio":
        return (1 - value) * 100 if higher else (value - 1) * 100
    return None  # abs_difference, overhead_change_across_process_counts: no signed overhead


def absolute_pairs(published: pd.DataFrame) -> list:
    """Overheads from absolute published values: each platform against the native value the same
    paper gives in the same table or sentence for the same benchmark, metric and parameters."""
    rows = published[published["available"].astype(bool)] if "available" in published.columns else published
    if "parameters" in rows.columns:
        rows = rows[~rows["parameters"].fillna("").str.contains("relative=")]
    rows = rows[pd.to_numeric(rows["value"], errors="coerce").notna()]
    out = []
    key = ["paper", "source", "benchmark", "metric"] + [c for c in ("parameters",) if c in rows.columns]
    for _, group in rows.groupby(key, dropna=False):
        base = group[group["platform_in_paper"].isin(PAPER_NATIVE)]
        if len(base) != 1:
            continue  # no native value (or several): nothing to pair
        base_value = float(base["value"].iloc[0])
        for _, row in group[~group["platform_in_paper"].isin(PAPER_NATIVE)].iterrows():
            higher = claims.higher_is_better(row["metric"], row["unit"])
            ratio = float(row["value"]) / base_value
            out.append((row, (1 - ratio) * 100 if higher else (ratio - 1) * 100))
    return out


def then(reference_dir: str | Path) -> pd.DataFrame:
    """The papers' overheads against a native baseline (percent, positive = worse) by family and subsystem."""
    out = []

    def add(row, value):
        family = PAPER_FAMILY.get(row["platform_in_paper"])
        subsystem = paper_subsystem(row["benchmark"], row["metric"])
        if family and subsystem and value is not None:
            higher = claims.higher_is_better(row["metric"])
            out.append({"paper": row["paper"], "platform": row["platform_in_paper"], "family": family, "panel": family,
                        "subsystem": subsystem, "overhead_percent": value, "era": THEN,
                        "higher_is_better": higher, "times": log_worse(value, higher)})

    for csv in sorted(Path(reference_dir).glob("*.csv")):
        published = pd.read_csv(csv)
        for row, value in absolute_pairs(published):
            add(row, value)
        if "parameters" not in published.columns:
            continue  # regola2010.csv (Tables I, II): absolute MB/s only, paired above
        for _, row in published[published["available"] & published["parameters"].str.contains("relative=", na=False)].iterrows():
            p = dict(kv.split("=", 1) for kv in row["parameters"].split(";") if "=" in kv)
            if p.get("baseline") in PAPER_NATIVE:
                add(row, paper_overhead(p["relative"], float(row["value"]), claims.higher_is_better(row["metric"])))
    return pd.DataFrame(out, columns=["paper", "platform", "family", "panel", "subsystem", "overhead_percent", "era",
                                      "higher_is_better", "times"])


@figure(PAPER, "overview-overhead-then-now", title="Overview", benchmarks=sorted({b for b, _ in SUBSYSTEM}),
        caption="how many times worse than native each platform family is per subsystem (CPU, memory, disk, network, "
                "MPI): containers and hardware-assisted VMs, the papers' published relative numbers (then) beside our "
                "comparisons on this testbed (today); binary translation (QEMU TCG, no hypervisor: none of the papers "
                "measured one) in a panel of its own, never beside the papers' hypervisors. Dots are single comparisons, "
                "bars their median, n under each subsystem their counts, an empty slot says why. Our bars never pool "
                "two machines: each is of one machine's comparisons, named in its label by the machine's CPU (one bar "
                "a machine where a subsystem was measured on two), and each comparison is a platform against native "
                "on the same machine, paired by round where both were measured in rounds. Times and throughputs "
                "on one log scale (a time ratio, a throughput ratio inverted: twice the time and half the throughput are "
                "the same bar); each panel has its own scale. The footer names the machines measured on.")
def overview(table, s) -> Drawn:
    ours = today(table, s.baseline, machines_of(s.testbed, s.data_dir, OVERVIEW_BENCHMARKS))
    columns = ["panel", "subsystem", "era", "times"]
    both = pd.concat([ours[columns], then(s.reference_dir)[columns]]).dropna(subset=["times"])
    # our eras, one a machine, in the order of the subsystems they first appear in; a machine has one colour throughout
    shown = ours.assign(at=ours["subsystem"].map(SUBSYSTEMS.index)).sort_values("at", kind="stable")
    today_eras = list(dict.fromkeys(shown["era"])) or [TODAY]
    colors = {THEN: ERA_COLORS[THEN], **{era: MACHINE_COLORS[i % len(MACHINE_COLORS)] for i, era in enumerate(today_eras)}}
    colors.setdefault(TODAY, ERA_COLORS[TODAY])
    machine_of_era = dict(zip(ours["era"], ours["machine"]))
    panels = [(CONTAINER, True), (FULL_VM, True), (TRANSLATED, False)]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6), gridspec_kw={"width_ratios": [5, 5, 3.2]})
    for ax, (panel, with_papers) in zip(axes, panels):
        part = both[both["panel"] == panel]
        measured = sorted(ours.loc[ours["panel"] == panel, "platform"].unique())
        mine = [era for era in today_eras if era in set(part["era"])] or [TODAY]
        eras = ([THEN] if with_papers else []) + mine
        if panel == TRANSLATED:
            ax.set_title(f"binary translation, not a hypervisor\n(ours: {', '.join(measured) or 'none'}; "
                         "no paper measured one)", fontsize="small")
        else:
            ax.set_title(f"{panel}: the papers' then, ours today\n(ours: {', '.join(measured) or 'none'})",
                         fontsize="small")
        if part.empty:
            plotting.unavailable(ax, f"no {panel} numbers")
            continue
        med = part.groupby(["subsystem", "era"], as_index=False)["times"].median()
        plotting.grouped_bars(ax, med, "subsystem", "times", hue="era", order=SUBSYSTEMS, hue_order=eras,
                              colors={era: colors[era] for era in eras})
        counts = part.groupby(["subsystem", "era"])["times"].size()
        width = 0.8 / len(eras)
        for i, era in enumerate(eras):
            offset = (i - (len(eras) - 1) / 2) * width
            dots = part[part["era"] == era]
            ax.scatter([SUBSYSTEMS.index(x) + offset for x in dots["subsystem"]], dots["times"], s=10, color="black", zorder=3)
            for x, subsystem in enumerate(SUBSYSTEMS):  # an empty slot says why it is empty
                if (subsystem, era) not in counts.index:
                    elsewhere = era != THEN and any((subsystem, other) in counts.index for other in mine if other != era)
                    why = ("no hardware-assisted VM here" if panel == FULL_VM and era != THEN and not measured
                           else "measured on the other machine" if elsewhere
                           else EMPTY_SLOT[THEN if era == THEN else TODAY])
                    ax.text(x + offset, 0.03, why, ha="center", va="bottom", rotation=90, fontsize="x-small",
                            color="#666666", transform=ax.get_xaxis_transform())
        ax.axhline(0, color="black", linewidth=0.8)
        low, high = part["times"].min(), part["times"].max()
        pad = max(high - low, 0.1) * 0.08
        ax.set_ylim(min(low, 0) - pad, max(high, 0) + pad)
        ax.set_xlim(-0.5, len(SUBSYSTEMS) - 0.5)
        # how many comparisons each bar is the median of, under its subsystem (not over the dots)
        ax.set_xticks(range(len(SUBSYSTEMS)), labels=[
            f"{x}\n" + "/".join(str(counts.get((x, era), 0)) for era in eras) for x in SUBSYSTEMS])
        named = ["then" if era == THEN else "today" if len(mine) == 1 else machine_of_era.get(era) or "unrecorded"
                 for era in eras]
        ax.set_xlabel("subsystem, n = comparisons " + " / ".join(named), fontsize="small")
        times_axis(ax, s)
        if ax is not axes[0]:
            ax.set_ylabel("")
        ax.legend(fontsize="x-small", loc="upper left")
    fig.suptitle(f"How many times worse than {s.baseline}, by platform family and subsystem: the papers vs testbed {s.testbed!r}")
    fig.tight_layout()
    overview_numbers = both.assign(factor=2.0 ** both["times"]).groupby(["panel", "subsystem", "era"])["factor"].agg(
        ["count", "median", "min", "max"])
    return Drawn(fig, {"times worse than the baseline by panel, subsystem and era (ours: one machine each)": overview_numbers,
                       "today, per benchmark (times worse)": ours.assign(factor=2.0 ** ours["times"]).groupby(
                           ["panel", "subsystem", "machine", "benchmark"])["factor"].median().unstack("panel")}, digits=3)


@figure(PAPER, "testbeds-side-by-side", title="Testbeds side by side", benchmarks=sorted({b for b, _ in SUBSYSTEM}),
        caption="how many times worse than native by subsystem and platform (a time's ratio, a throughput's "
                "inverted, on one log scale) on this testbed and on each testbed of the "
                "notebook's compare_testbeds parameter (their tables in the same data directory), one panel a "
                "testbed: bars are the median comparison, dots single comparisons, n their count. Each testbed is "
                "compared with its own native runs, never another's, and each machine with its own: a bar is of one "
                "machine's comparisons (a subsystem measured on two machines has a group of bars for each, named by "
                "its CPU; a testbed measured on one names it in its title), paired by round where both sides were "
                "measured in rounds.")
def testbeds(table, s) -> Drawn:
    names = [s.testbed, *s.compare_testbeds]
    tables = {s.testbed: table, **{name: results.load(name, s.data_dir) for name in s.compare_testbeds}}
    ours = pd.concat([today(tables[name], s.baseline, machines_of(name, s.data_dir, OVERVIEW_BENCHMARKS)).assign(testbed=name)
                      for name in names])
    platforms = [p.name for p in platform_catalog.PLATFORMS if p.name in set(ours["platform"])]
    # a panel wide enough for its slots (a subsystem, or a subsystem on one machine where there are several)
    slots = {name: len(ours.loc[ours["testbed"] == name, ["subsystem", "machine"]].drop_duplicates()) for name in names}
    widths = [max(5.5, 1.3 * slots[name]) for name in names]
    fig, axes = plt.subplots(1, len(names), figsize=(sum(widths), 4), sharey=True, squeeze=False,
                             gridspec_kw={"width_ratios": widths})
    for ax, name in zip(axes[0], names):
        part = ours[ours["testbed"] == name]
        scales = "/".join(sorted(tables[name]["scale"].dropna().unique())) or "unknown"
        on = list(dict.fromkeys(part.assign(at=part["subsystem"].map(SUBSYSTEMS.index))
                                .sort_values("at", kind="stable")["machine"]))
        where = f", on {on[0]}" if len(on) == 1 and on[0] else ""
        ax.set_title(f"testbed {name!r} ({scales} scale{where})", fontsize="small")
        if part.empty:
            plotting.unavailable(ax, f"no comparison with {s.baseline!r} on testbed {name!r}")
            continue
        # a slot a subsystem, or a subsystem on one machine where the testbed was measured on several
        part = part.assign(slot=[f"{x}\n{m or 'unrecorded'}" if len(on) > 1 else x
                                 for x, m in zip(part["subsystem"], part["machine"])])
        med = part.groupby(["slot", "platform"], as_index=False)["times"].median()
        shown = [f"{x}\n{m or 'unrecorded'}" if len(on) > 1 else x for x in SUBSYSTEMS for m in on]
        shown = list(dict.fromkeys(slot for slot in shown if slot in set(part["slot"])))
        plotting.grouped_bars(ax, med, "slot", "times", order=shown,
                              hue_order=[p for p in platforms if p in set(part["platform"])],
                              points=part[part["slot"].isin(shown)], points_label="one comparison")
        counts = part.groupby("slot").size()
        ax.set_xticks(range(len(shown)), labels=[f"{x}\n(n={counts[x]})" for x in shown])
        ax.axhline(0, color="black", linewidth=0.8)
        times_axis(ax, s)
        ax.legend(fontsize="small")
    for ax in axes[0][1:]:
        ax.set_ylabel("")
    plotting.tidy_legends(fig)
    fig.suptitle("The same comparisons on each testbed" + ("" if s.compare_testbeds else
                 " (set the notebook's compare_testbeds to add others)"))
    numbers = (2.0 ** ours.groupby(["subsystem", "machine", "platform", "testbed"])["times"].median()).unstack("testbed")
    return Drawn(fig, {f"median times worse than {s.baseline} by subsystem, machine, platform and testbed": numbers},
                 digits=3)


# the answer's paragraphs: (heading, the overview's subsystem or None, the declared subsystems of the claims in it)
ANSWER_PARTS = [
    ("CPU", "CPU", ("cpu",)),
    ("Memory", "memory", ("memory",)),
    ("Disk", "disk", ("disk",)),
    ("Network", "network", ("network",)),
    ("HPC kernels, MPI and MIT GCM", "MPI", ("hpc",)),
    ("Operations (provisioning, boot, reboot, clone)", None, ("operations",)),
    ("Isolation between neighbours", None, ("isolation",)),
    ("Applications", None, ("application",)),
]
DERIVED_SUBSYSTEM = {"parallel_speedup": "hpc", "isolation_efficiency": "isolation"}


def claim_subsystem(benchmark, metric) -> str | None:
    """The subsystem a claim's metric measures (its declaration; a derived metric's own)."""
    if not isinstance(benchmark, str) or not isinstance(metric, str):
        return None
    if metric in DERIVED_SUBSYSTEM:
        return DERIVED_SUBSYSTEM[metric]
    try:
        return metric_catalog.metric(benchmark, metric).subsystem
    except metric_catalog.UnknownMetric:
        return None


def _median_text(values: pd.Series) -> str:
    """The median of log factors (common.log_worse) in words: "1.05x worse (median of 12)"."""
    return f"{times_text(2.0 ** values.median())} (median of {len(values)})"


def _per_machine_text(part: pd.DataFrame) -> str:
    """:func:`_median_text` of one platform's comparisons, one a machine where they span several (never pooled)."""
    groups = list(part.groupby("machine", sort=False))
    if len(groups) == 1:
        return _median_text(part["times"])
    return ", ".join(f"on {machine or 'an unrecorded machine'} {_median_text(rows['times'])}" for machine, rows in groups)


def answer(table: pd.DataFrame, s, verdicts: pd.DataFrame) -> str:
    """Whether today's containers and VMs show the overheads the papers reported, in words with the
    numbers: a paragraph per subsystem (the papers' relative numbers then, ours now per platform,
    the verdicts of the claims on it), as Markdown."""
    ours, past = today(table, s.baseline, machines_of(s.testbed, s.data_dir, OVERVIEW_BENCHMARKS)), then(s.reference_dir)
    subsystems = [claim_subsystem(b, m) for b, m in zip(verdicts["benchmark"], verdicts["metric"])]
    verdicts = verdicts.assign(subsystem=subsystems)
    scales = " and ".join(sorted(table["scale"].dropna().unique())) if "scale" in table.columns else "unrecorded"
    lines = [
        f"**The answer, on testbed `{s.testbed}`** ({scales} scale; how many times worse or better than "
        f"`{s.baseline}`: a time's ratio, a throughput's ratio inverted, so that twice the time and half the "
        "throughput read alike; medians over the comparisons of each kind, each of one machine), per subsystem, "
        "with the verdicts of its claims (each with its reason in the list below):",
        "",
    ]
    if scales == "quick":
        lines += ["*These data are a smoke check (quick scale): no verdict rests on them.*", ""]
    for heading, overview_name, declared in ANSWER_PARTS:
        said = []
        if overview_name is not None:
            was = past[past["subsystem"] == overview_name]
            now = ours[ours["subsystem"] == overview_name]
            then_text = "; ".join(f"{family}s {_median_text(part['times'])}"
                                  for family, part in was.groupby("family")) or "no relative number"
            now_text = "; ".join(f"{plotting.platform_label(platform)}"
                                 f"{', not a hypervisor,' if PANEL.get(platform) == TRANSLATED else ''}"
                                 f" {_per_machine_text(part)}"
                                 for platform, part in now.groupby("platform")) or "nothing measured"
            said.append(f"The papers: {then_text}. Here: {now_text}.")
        mine = verdicts[verdicts["subsystem"].isin(declared)]
        if len(mine):
            tally = mine["verdict"].value_counts()
            said.append(f"Its {len(mine)} claims: " + ", ".join(f"{n} {v}" for v, n in tally.items()) + ".")
            decided_rows = mine[mine["verdict"].str.startswith(("holds", "does not hold"))]
            for _, row in decided_rows.head(3).iterrows():
                said.append(claims.sentence(row))
        if said:
            lines += [f"- **{heading}.** " + " ".join(said), ""]
    return "\n".join(lines).rstrip() + "\n"


# where the results a guest won against native are measured again, platforms in alternating rounds
# (virtrepro.measurement.interleave), in the testbed's data directory
INTERLEAVED = "interleaved"


def interleaved(s) -> str:
    """The interleaved re-measurement (``<data_dir>/investigations/interleaved``, :mod:`virtrepro.measurement.interleave`)
    in words: per benchmark variant, each platform's rounds against the baseline's (the geometric mean
    of the per-round ratios, with its interval: :func:`stats.paired_rounds`), for every metric but the
    percentiles. A ratio is of the metric's values: above 1 is better where higher is better."""
    data_dir = datalayout.investigation_dir(s.data_dir, INTERLEAVED)
    if not results.has_raw_logs(data_dir, s.testbed):
        return f"no interleaved re-measurement of testbed {s.testbed!r} in {data_dir}"
    table = results.load(s.testbed, data_dir)
    paired = stats.paired_rounds(table, s.baseline, level=s.confidence)
    paired = paired[~paired["metric"].str.contains("percentile")]
    lines = []
    for (benchmark, variant), rows in paired.groupby(["benchmark", "variant"], sort=True):
        lines.append(f"{benchmark} {variant}: {rows['rounds'].max()} rounds")
        for _, row in rows.sort_values(["metric", "platform"]).iterrows():
            unit = table.loc[table["metric"] == row["metric"], "unit"].iloc[0]
            better = "higher" if claims.higher_is_better(row["metric"], unit) else "lower"
            interval = ("no interval: " + row["ci_note"] if row["ci_method"] == "none"
                        else f"[{row['ratio_ci_low']:.3f}, {row['ratio_ci_high']:.3f}]")
            lines.append(f"  {row['platform']:>8} / {s.baseline} {row['metric']} ({better} is better): "
                         f"{row['ratio']:.3f} {interval}, above 1 in {row['above']} of {row['rounds']} rounds")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# The summary's opening: what the data can carry, read from the verdicts' table
# (data/tables/<testbed>.claims.csv, the workflow's claims_table job: the table is the door into analysis)
# ---------------------------------------------------------------------------

# the opening's columns: what a claim's verdict (claims.VERDICTS) makes of it, in this order
HOLDS, FAILS = "holds", "does not hold"
OPENING = (HOLDS, FAILS, "not comparable", "not informative", "inconclusive", "not measured", "not testable")
OPENING_OF = {conditions.NOT_COMPARABLE: "not comparable", conditions.NOT_INFORMATIVE: "not informative",
              "not measured": "not measured", "not testable here": "not testable"}

# the main reasons, from a claim's note (the table's ``reason``): per column, (pattern, words) in order,
# the first that matches counts; ``{0}`` in the words is the pattern's first group
REASONS = {
    "not comparable": [
        (r"may not stand in", "the stand-in differs in the trait the statement is about (analogue table)"),
        (r"no wire between them", "network measured on one host; the statement is about a network between machines"),
        (r"NPB class [^;(]*\(the statement: class", "NPB at a smaller problem class than the statement's"),
        (r"\(the statement: beyond the caches", "measured in a cache; the statement is about disk or memory"),
        (r"processes or threads \(the statement", "fewer processes or threads than the statement's"),
        (r"machine\(s\) \(the statement", "fewer machines than the statement's"),
        (r"a scalability statement needs", "too few process counts for a scalability statement"),
        (r"(^|; )measured (in the page cache|in the CPU caches)", "measured in a cache; the statement is about disk or memory"),
        (r"drift between parts", "the two parts of the run order decide opposite ways (time confounds the platform)"),
    ],
    "not informative": [(r"analogue's bias \(([^)]*)\) could produce", "an analogue's bias ({0}) could produce the verdict"),
                        (r"has no \S+ runs and would inform no claim", "binary translation informs no claim on CPU and HPC benchmarks (not measured there)")],
    "inconclusive": [
        (r"^inconclusive \((.*)\)$", "{0}"),  # matched against the verdict itself
    ],
    "not measured": [(r"^no working KVM", "no working KVM on this testbed"), (r"^no (\S+) runs", "no {0} runs at the statement's variant")],
    "not testable": [
        (r"Xen|Palacios|Kitten|EC2|dedicated host partition|'block level'",
         "a platform this stack does not have (Xen, Palacios/Kitten, EC2, KVM on a host partition)"),
        (r"InfiniBand|HCA", "InfiniBand hardware"),
        (r"not among our benchmarks|SPEC MPI2007|licensed", "a benchmark not among ours (SPEC MPI2007, MIT GCM)"),
        (r"kernels|guest configurations|tuned", "compares specific kernels or guest configurations"),
        (r"summary|prediction|recommendation|a cause|not a measurement|doubts",
         "not one measurement (a summary, prediction, recommendation, cause or anomaly)"),
    ],
}
OTHER_REASON = "other (each claim's note says)"


def opening_column(verdict: str) -> str:
    """The opening's column of a verdict of claims.VERDICTS ("holds (analogue)" is "holds")."""
    if verdict in OPENING_OF:
        return OPENING_OF[verdict]
    for column in (HOLDS, FAILS, "inconclusive"):
        if verdict == column or verdict.startswith(column + " ("):
            return column
    raise ValueError(verdict)


def opening_reason(column: str, verdict: str, reason: str, interval: bool = False) -> str | None:
    """The main reason of a claim in ``column`` (:data:`REASONS`), None for a decided one; a plain
    "inconclusive" is one whose ``interval`` straddles the threshold, or one without an interval."""
    import re

    if column in (HOLDS, FAILS):
        return None
    if verdict == "inconclusive":
        return "the interval straddles the threshold" if interval else "no interval at this n"
    text = verdict if column == "inconclusive" else str(reason or "")
    for pattern, words in REASONS[column]:
        found = re.search(pattern, text)
        if found:
            return words.format(*found.groups())
    return OTHER_REASON


def claims_csv(s) -> Path:
    return datalayout.claims_table_path(s.data_dir, s.testbed)


def read_verdicts(path: str | Path) -> pd.DataFrame:
    """The verdicts' table with each claim's opening column and main reason; a verdict the table should
    not hold is the file's error (VirtreproError naming it and the claim)."""
    from ..errors import VirtreproError

    table = pd.read_csv(path, keep_default_na=False, dtype=str)
    missing = {"claim_id", "paper", "verdict", "reason"} - set(table.columns)
    if missing:
        raise VirtreproError(f"{path}: no column {', '.join(sorted(missing))} (written by python -m virtrepro.analysis.claims)")
    columns = []
    for ident, verdict in zip(table["claim_id"], table["verdict"]):
        try:
            columns.append(opening_column(verdict))
        except ValueError:
            raise VirtreproError(f"{path}: claim {ident}: unknown verdict {verdict!r} (known: "
                                 f"{', '.join(claims.VERDICTS)})") from None
    table["column"] = columns
    interval = [bool(low and high) for low, high in zip(table.get("ci_low", ""), table.get("ci_high", ""))]
    table["why"] = [opening_reason(*row) for row in zip(table["column"], table["verdict"], table["reason"], interval)]
    return table


def opening_counts(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Claims per paper (rows, then "all papers") and opening column (:data:`OPENING`, with "total")."""
    counts = pd.crosstab(verdicts["paper"], verdicts["column"]).reindex(columns=list(OPENING), fill_value=0)
    counts.loc["all papers"] = counts.sum()
    counts["total"] = counts.sum(axis=1)
    return counts


def opening(s) -> str:
    """The summary's first paragraph, as Markdown: per paper, how many claims are decided (holds / does
    not hold, on the paper's platform or an analogue), not comparable, not informative, inconclusive,
    not measured and not testable, and the main reasons, counted from ``<data_dir>/tables/<testbed>.claims.csv``."""
    path = claims_csv(s)
    if not path.exists():
        return (f"**What the data can carry:** no verdicts' table `tables/{path.name}` for testbed `{s.testbed}` yet "
                f"(the workflow's claims_table job writes it: `python -m virtrepro.analysis.claims --data-dir {s.data_dir} "
                f"--testbed {s.testbed} --claims <claims.yaml>`).\n")
    verdicts = read_verdicts(path)
    counts = opening_counts(verdicts)
    every = counts.loc["all papers"]
    analogue = int(verdicts["verdict"].str.endswith(claims.ANALOGUE_SUFFIX).sum())
    decided = int(every[HOLDS] + every[FAILS])
    lines = [
        f"**What the data can carry** (the verdicts' table `tables/{path.name}`): of the papers' {int(every['total'])} "
        f"claims, **{decided} are decided** on testbed `{s.testbed}` ({int(every[HOLDS])} hold, {int(every[FAILS])} "
        f"{'does' if every[FAILS] == 1 else 'do'} not{f'; {analogue} of them on an analogue of the paper platform' if analogue else ''}), "
        f"{int(every['not comparable'])} are not comparable here (measured outside the conditions the statement was "
        f"made in), {int(every['not informative'])} not informative (an analogue whose bias could produce the "
        f"verdict), {int(every['inconclusive'])} inconclusive, {int(every['not measured'])} not measured and "
        f"{int(every['not testable'])} not testable on this stack.",
        "",
        "| paper | " + " | ".join(counts.columns) + " |",
        "|---|" + "---:|" * len(counts.columns),
        *(f"| {paper} | " + " | ".join(str(int(n)) for n in row) + " |" for paper, row in counts.iterrows()),
        "",
        "Why, the main reasons (claims per reason):",
        "",
    ]
    for column in OPENING[2:]:
        why = verdicts.loc[verdicts["column"] == column, "why"].value_counts()
        if len(why):
            lines.append(f"- **{column}** ({int(why.sum())}): " + "; ".join(f"{reason} ({n})" for reason, n in why.items()) + ".")
    return "\n".join(lines) + "\n"
