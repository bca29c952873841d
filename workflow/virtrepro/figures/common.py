"""What several papers' figures share: selections, summaries and ways to draw them (each said once)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from .. import plotting, results, stats
from ..npb import why_no_runs
from ..platform_names import STAND_INS

# the columns of stats.compare_to_baseline a reader wants to see
OVERHEAD = ["platform", "n_platform", "overhead_percent", "overhead_ci_low", "overhead_ci_high", "verdict"]
TESTS = ["platform", "n_platform", "ratio", "overhead_percent", "welch_p", "holm_p", "tost_p", "verdict"]


def comparable(frame: pd.DataFrame, baseline: str) -> bool:
    """Whether ``frame`` has runs of ``baseline`` and of a second platform (a ratio exists)."""
    return len(frame) > 0 and baseline in set(frame["platform"]) and frame["platform"].nunique() > 1


def no_comparison(what: str, s) -> str:
    return f"no {what} runs of {s.baseline!r} and a second platform on testbed {s.testbed!r}"


def baseline_first(platforms, baseline: str) -> list:
    """The platforms in order, the baseline first."""
    return sorted(set(platforms), key=lambda p: (p != baseline, p))


def ci_label(s) -> str:
    return f"mean with {s.confidence:.0%} CI"


def footnote(fig, frame: pd.DataFrame) -> None:
    """Where the numbers of ``frame`` were measured and where the paper's were (plotting.regime_note)."""
    fig.text(0.5, -0.02, plotting.regime_note(frame), ha="center", fontsize=8, color="dimgray")


def npb_missing(s, benchmark: str = "NPB") -> str:
    return why_no_runs(s.data_dir, s.testbed, benchmark)


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
        return pd.DataFrame(columns=by + ["n", "mean", "ci_low", "ci_high"])
    return stats.summarize(frame, by=by, level=s.confidence, value=value)


def netperf(table: pd.DataFrame, s) -> tuple[pd.DataFrame, pd.DataFrame]:
    """netperf's summaries per platform and message size: TCP_RR half round trip latency (us) and
    TCP_STREAM throughput (Mbit/s), the column of the size named "message size (bytes)"."""
    net = results.view(table, "netperf")
    size = "message size (bytes)"
    latency = net[net["metric"] == "half_round_trip_latency"].rename(columns={"request_size": size})
    throughput = net[net["metric"] == "throughput"].rename(columns={"message_size": size})
    return summarize(latency, ["platform", size], s), summarize(throughput, ["platform", size], s)


def at_size(summary: pd.DataFrame, pick) -> tuple[int, pd.Series]:
    """The size ``pick`` (min or max) of a netperf summary and the mean per platform at it."""
    size = pick(summary["message size (bytes)"])
    return size, summary[summary["message size (bytes)"] == size].set_index("platform")["mean"]


def lines_with_bands(ax, summary: pd.DataFrame, x: str, errorbars: bool = False) -> None:
    """One line per platform of a summary's means over ``x`` with its interval (band or error bars)."""
    palette = plotting.platform_palette(sorted(summary["platform"].unique()))
    for platform, group in summary.groupby("platform"):
        group = group.sort_values(x)
        if errorbars:
            ax.errorbar(group[x], group["mean"], yerr=[group["mean"] - group["ci_low"], group["ci_high"] - group["mean"]],
                        marker="o", capsize=3, color=palette[platform], label=platform)
        else:
            ax.plot(group[x], group["mean"], marker="o", color=palette[platform], label=platform)
            ax.fill_between(group[x], group["ci_low"], group["ci_high"], color=palette[platform], alpha=0.2)


def npb_relative_time(part: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Mean NPB run time per kernel (rows, upper case) and platform (columns) divided by the baseline's;
    no rows without the baseline."""
    means = part.groupby(["param_kernel", "platform"])["value"].mean().unstack("platform")
    relative = means.div(means[baseline], axis=0) if baseline in means.columns else means.iloc[0:0]
    relative.index = relative.index.str.upper()
    return relative


def npb_relative_bars(ax, relative: pd.DataFrame, baseline: str, ylabel: str) -> None:
    relative.plot.bar(ax=ax, color=plotting.platform_palette(relative.columns), rot=0)
    ax.axhline(1, color="black", linewidth=0.8)
    plotting.note_no_ratio(ax, relative.index[relative[baseline].isna()], baseline)
    ax.set_xlabel("NPB kernel")
    ax.set_ylabel(ylabel)


def ratio_rows(groups, base_of, s, **fields) -> list[dict]:
    """For each (key, rows) of ``groups`` whose baseline values ``base_of(key)`` are not None or empty,
    stats.overhead's ratio of the rows' values to them with its interval, beside ``fields[name](key, rows)``."""
    out = []
    for key, rows in groups:
        base = base_of(key)
        if base is None or len(base) == 0 or rows.empty:
            continue
        ratio = stats.overhead(base, rows["value"], higher_is_better=True, level=s.confidence)
        out.append({**{name: f(key, rows) for name, f in fields.items()},
                    **{k: ratio[k] for k in ("ratio", "ratio_ci_low", "ratio_ci_high")}})
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
