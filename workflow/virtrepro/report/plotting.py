"""Figure styling shared by every notebook: one colour per platform, PNG + PDF output."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from ..platforms import catalog as platform_catalog  # noqa: E402
from ..declarations.platform_names import LABELS, label as platform_label, paper_label  # noqa: E402,F401  (the one place for names)

# One colour per platform, the same in every figure of every paper (declared in platform_catalog).
PLATFORM_COLORS = {spec.name: spec.colour for spec in platform_catalog.PLATFORMS}

def style() -> None:
    sns.set_theme(context="notebook", style="whitegrid")
    plt.rcParams.update({"figure.dpi": 100, "savefig.dpi": 150, "savefig.bbox": "tight"})


def platform_palette(platforms) -> dict:
    return {p: PLATFORM_COLORS.get(p, "#999999") for p in platforms}


def wrapped(ax, text: str, size: float = 9) -> str:
    """``text`` wrapped to the width of panel ``ax`` at font ``size`` (points), its own line breaks
    kept (matplotlib's wrap=True wraps to the figure's width, so the texts of side-by-side panels
    overlap)."""
    import textwrap

    inches = ax.get_position().width * ax.figure.get_figwidth()
    columns = max(20, int(inches * 72 / (size * 0.6)))  # a character is about 0.6 em wide
    return "\n".join(textwrap.fill(part, columns) for part in text.split("\n"))


def unavailable(ax, reason: str) -> None:
    """An empty panel that says why the figure cannot be drawn (no data, no such platform...), its
    text wrapped to the panel's own width (:func:`wrapped`)."""
    size = 9
    ax.text(0.5, 0.5, wrapped(ax, reason, size), ha="center", va="center", fontsize=size, transform=ax.transAxes)
    ax.set_axis_off()


def note_no_ratio(ax, names, baseline: str, what: str = "") -> None:
    """Say which bars are missing because the baseline's value is 0, where a ratio does not exist
    (NPB class S times under 5 ms print as 0.00 s)."""
    names = [str(n) for n in names]
    if names:
        ax.text(0.01, 0.99, f"no ratio for {', '.join(names)}{' ' + what if what else ''}: {baseline}'s time is 0.00 s "
                "(under NPB's resolution)",
                transform=ax.transAxes, ha="left", va="top", fontsize=7, color="dimgray", wrap=True)


def regime_note(frame, scale: str | None = None) -> str:
    """One line that says where the numbers of ``frame`` (rows of the tidy table, or of its
    ``results.view``) were measured and where the paper measured them (its ``regime`` column and the
    benchmark's declared ``measures``, virtrepro.declarations.regimes), e.g. "ours: in the page cache (quick
    scale); the paper's: on disk"; "" for rows without a regime."""
    from ..declarations.regimes import WHERE
    from ..results import declared_measures

    if "regime" not in frame.columns:
        return ""
    ours = [r for r in dict.fromkeys(frame["regime"].dropna()) if r]
    measures = frame["measures"] if "measures" in frame.columns else declared_measures(frame)
    paper = [m for m in dict.fromkeys(measures.dropna()) if m]
    if not ours:
        return ""
    text = "ours: " + " / ".join(WHERE.get(r, r) for r in ours) + (f" ({scale} scale)" if scale else "")
    if paper:
        text += "; the paper's: " + " / ".join(WHERE.get(m, m) for m in paper)
        if set(ours) != set(paper):
            text += " - not comparable"
    return text


def _named(text: str, wrap: bool = False) -> str:
    """``text`` with a leading measured platform name replaced by its label ("qemu-tcg, 2 instances");
    ``wrap``: the label's parenthesis on a line of its own (a category tick under a bar)."""
    for name, shown in LABELS.items():
        if shown != name and (text == name or text.startswith(name + ",") or text.startswith(name + " ")):
            return (shown.replace(" (", "\n(", 1) if wrap else shown) + text[len(name):]
    return text


def name_series(fig) -> None:
    """Name every series, legend entry and category tick that is a measured platform by its label
    (:func:`platform_label`: qemu-tcg is "QEMU TCG (binary translation, no KVM)"). :func:`save` does
    this for every figure, so a notebook may label series with the platform's short name."""
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    for legend in legends:
        for text in legend.get_texts():
            text.set_text(_named(text.get_text()))
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            labels = [t.get_text() for t in axis.get_ticklabels()]
            named = [_named(t, wrap=axis is ax.xaxis) for t in labels]
            if named != labels:
                axis.set_ticks(axis.get_ticklocs(), labels=named)


# the scale of the data the notebook drew (set by notebook.scale_note from the table): every
# figure says it in a footer, so a quick-scale smoke check is never read as a result
DATA_SCALE: str | None = None


def footer(hosts=()) -> str:
    """The line(s) below a figure: the data's testbed and scale (:data:`DATA_SCALE`) and the machine(s)
    its benchmarks were measured on (``hosts``, in words: :func:`virtrepro.rawdata.machines.describe`)."""
    lines = [f"data: {DATA_SCALE}"] if DATA_SCALE else []
    if len(hosts) == 1:
        lines.append(f"measured on {hosts[0]}")
    elif hosts:
        lines += [f"measured on {len(hosts)} machines, each benchmark on one (the notebook's first cell says which):",
                  *hosts]
    return "\n".join(lines)


# the files of a figure: the image, its PDF (the notebook's reading goes beside them as .reading.md)
SUFFIXES = (".png", ".pdf")
# the PNG text chunk that marks a placeholder: a figure drawn without runs (the paper's numbers and the
# reason ours are missing), which save() never writes over a figure drawn from runs
PLACEHOLDER_KEY = "virtrepro-placeholder"
PLACEHOLDER_TEXT = "no runs of its benchmarks in the data it was drawn from"


# a figure's file: <figures_dir>/<paper>/<name><suffix> (figures_dir: a testbed's, figures_home)
from .figure_files import figure_file  # noqa: E402,F401


def is_placeholder(png: str | Path) -> bool:
    """Whether the PNG ``png`` is a placeholder that :func:`save` wrote (marked with
    :data:`PLACEHOLDER_KEY`); a figure without the mark (drawn from runs, written before the mark
    existed, or not readable) is not."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(png) as image:
            return image.text.get(PLACEHOLDER_KEY) == PLACEHOLDER_TEXT
    except (OSError, UnidentifiedImageError, SyntaxError, ValueError):
        return False


def save(fig, figures_dir: str | Path, paper: str, name: str, hosts=(), placeholder: bool = False) -> list[Path]:
    """Save ``fig`` as figures/<paper>/<name>.png and .pdf, its platforms named by their labels
    (:func:`name_series`) and the data's scale and machines (:func:`footer`) below it; return the paths.
    ``placeholder``: the figure shows no runs; it is marked so in its PNG and never replaces a figure
    that is not marked (one drawn from runs): then nothing is written and ``[]`` returned."""
    paths = [figure_file(figures_dir, paper, name, suffix) for suffix in SUFFIXES]
    if placeholder and any(p.exists() for p in paths) and not is_placeholder(paths[0]):
        return []
    name_series(fig)
    tidy_legends(fig)
    text = footer(tuple(hosts))
    if text:  # below everything drawn (rotated tick labels, notes): nothing is covered
        bottom = fig.get_tightbbox(fig.canvas.get_renderer()).y0 / fig.get_figheight()
        fig.text(0.5, min(bottom, 0.0) - 0.02, text, fontsize="small", color="#444444", ha="center", va="top")
    paths[0].parent.mkdir(parents=True, exist_ok=True)
    marked = {PLACEHOLDER_KEY: PLACEHOLDER_TEXT} if placeholder else {}
    for path in paths:
        # fixed metadata so that reruns on the same data give the same files
        fig.savefig(path, bbox_inches="tight",
                    metadata={"CreationDate": None} if path.suffix == ".pdf" else {"Software": None, **marked})
    return paths


def _data_extents(ax, renderer) -> list:
    """The boxes of what ``ax`` draws from data: bars, markers, bands, error bars, lines of three points
    or more (a reference line across the panel, such as y = 1, does not count)."""
    artists = list(ax.patches) + list(ax.collections)
    artists += [line for line in ax.lines if len(line.get_xdata()) > 2 or line.get_marker() not in ("None", "", None)]
    boxes = []
    for artist in artists:
        if not artist.get_visible():
            continue
        try:
            box = artist.get_window_extent(renderer)
        except (AttributeError, RuntimeError, ValueError):
            continue
        if box.width > 0 and box.height > 0 and all(map(lambda v: v == v, box.bounds)):
            boxes.append(box)
    return boxes


def tidy_legends(fig) -> None:
    """No legend covers data: the same legend in several panels becomes one above them; a legend that
    overlaps a bar, marker or band moves out of its panel (right of the last panel, else below its own)."""
    renderer = fig.canvas.get_renderer()
    with_legend = [ax for ax in fig.axes if ax.get_legend() is not None]
    labels = {tuple(t.get_text() for t in ax.get_legend().get_texts()) for ax in with_legend}
    if len(with_legend) > 1 and len(labels) == 1:
        first = with_legend[0].get_legend()
        handles, names = list(first.legend_handles), [t.get_text() for t in first.get_texts()]  # as named for readers
        for ax in with_legend:
            ax.get_legend().remove()
        right = max(ax.get_position().x1 for ax in fig.axes)  # right of the panels: clear of titles and labels
        fig.legend(handles, names, loc="center left", bbox_to_anchor=(right + 0.01, 0.5), frameon=False, fontsize="small")
        return
    for ax in with_legend:
        legend = ax.get_legend()
        box = legend.get_window_extent(renderer)
        if not any(box.overlaps(data) for data in _data_extents(ax, renderer)):
            continue
        rightmost = ax.get_position().x1 >= max(a.get_position().x1 for a in fig.axes) - 1e-6
        if rightmost:
            legend.set_loc("upper left")
            legend.set_bbox_to_anchor((1.01, 1), transform=ax.transAxes)
        else:
            legend.set_loc("upper center")
            legend.set_bbox_to_anchor((0.5, -0.25), transform=ax.transAxes)


def grouped_bars(ax, frame, x: str, value: str, low: str | None = None, high: str | None = None,
                 hue: str = "platform", order=None, hue_order=None, colors: dict | None = None,
                 points=None, missing: str | None = None, points_label: str = "one run",
                 no_interval: str | None = "\u2020") -> None:
    """Bars of ``value`` grouped by ``x``, one per ``hue`` (platform colours by default), with error
    bars from the ``low``/``high`` columns where they are not NaN (an unbounded interval has none;
    an interval of the median, ``ci_of`` "median" beside a ``median`` column, is drawn around the
    median, marked).
    ``points``: rows with ``x``, ``hue`` and ``value`` columns (the individual runs), drawn as dots on
    their bar, so that a reader sees how few runs a wide interval rests on. ``missing``: the mark of a
    slot without a value (its reason belongs in the figure's note), so that no slot is silently empty.
    ``no_interval``: the mark (a dagger unless another is given; None for none) over a bar that has a value but no interval (its reason, the ``ci_note``
    of the comparison, belongs in the figure's note: figures.common.no_interval_text), so that no
    whisker is silently missing."""
    order = list(order if order is not None else dict.fromkeys(frame[x]))
    hue_order = list(hue_order if hue_order is not None else dict.fromkeys(frame[hue]))
    colors = colors or platform_palette(hue_order)
    width = 0.8 / max(len(hue_order), 1)
    for i, name in enumerate(hue_order):
        part = frame[frame[hue] == name].drop_duplicates(x).set_index(x).reindex(order)
        pos = [j + (i - (len(hue_order) - 1) / 2) * width for j in range(len(order))]
        ax.bar(pos, part[value], width=width, color=colors.get(name, "#999999"), label=name)
        if missing:
            for p, v in zip(pos, part[value]):
                if v != v:  # NaN: nothing measured in this slot
                    ax.text(p, 0.02, missing, rotation=90, ha="center", va="bottom", fontsize=7, color="dimgray",
                            transform=ax.get_xaxis_transform())
        if points is not None and len(points):
            runs = points[(points[hue] == name) & points[x].isin(order)]
            where = {o: p for o, p in zip(order, pos)}
            ax.scatter([where[v] for v in runs[x]], runs[value], s=9, facecolor="white", edgecolor="black",
                       linewidth=0.7, zorder=4, label=points_label if i == 0 else None)
        if low and high:
            ok = part[low].notna() & part[high].notna()
            # an interval of the median (stats.location_ci: ci_of "median") is drawn around the
            # median, marked, not around the bar's mean, which it need not contain
            centre = part[value]
            if "ci_of" in part.columns and "median" in part.columns:
                centre = part["median"].where(part["ci_of"] == "median", part[value])
            err = [(centre - part[low])[ok], (part[high] - centre)[ok]]
            marker = "_" if (centre[ok] != part[value][ok]).any() else "none"
            # above the run dots (zorder 4): a whisker hidden under its dots would read as "no interval"
            ax.errorbar([p for p, k in zip(pos, ok) if k], centre[ok], yerr=err, fmt=marker, color="black", ecolor="black",
                        capsize=3, linewidth=1, markersize=8, zorder=5)
            if no_interval:
                # above the bar's run dots too (a mark among them is not seen)
                runs = (points[(points[hue] == name)].groupby(x)[value].agg(["min", "max"]).reindex(order)
                        if points is not None and len(points) else pd.DataFrame(index=order, columns=["min", "max"]))
                for p, v, k, (_, extent) in zip(pos, part[value], ok, runs.iterrows()):
                    if not k and v == v:  # a value without its interval
                        at = max(v, extent["max"]) if v >= 0 and extent["max"] == extent["max"] else (
                            min(v, extent["min"]) if v < 0 and extent["min"] == extent["min"] else v)
                        ax.annotate(no_interval, (p, at), xytext=(0, 2 if v >= 0 else -2), textcoords="offset points",
                                    ha="center", va="bottom" if v >= 0 else "top", fontsize=9, zorder=6)
    ax.set_xticks(range(len(order)), labels=[str(o) for o in order])
