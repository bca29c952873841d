"""The verdicts for a reader: a plain-text table (:func:`report`), one sentence a claim
(:func:`sentence`), every claim in full (:func:`listing`)."""

from __future__ import annotations

import pandas as pd

from .intervals import _percent
from .selection import _text


def estimate_text(kind: str | None, value, low, high) -> str:
    """Our estimate and its interval as a reader reads them, by the claim's kind (the table's
    ``estimate``, ``ci_low``, ``ci_high``): a saturation size with its bounds (sizes, not fractions);
    a trend's change per step; else the relative difference, positive = worse. Empty when nothing
    was estimated."""
    if value is None or value != value:
        return ""
    if kind == "saturation":
        return f"saturates at {_text(float(value))} (bounds {_text(float(low))}..{_text(float(high))})"
    per = " per step" if kind == "trend" else ""
    return f"{_percent(value)}{per} [{_percent(low)}, {_percent(high)}]"


def report(verdicts: pd.DataFrame, width: int = 70) -> str:
    """The verdict rows as a plain-text table for a notebook: claim, verdict, our relative difference
    (positive = worse) with its interval, threshold, platforms, n per side and the note (shortened)."""
    if verdicts.empty:
        return "no claims"
    shown = pd.DataFrame(
        {
            "claim": [f"{i.split('-', 1)[1] if '-' in i else i}" for i in verdicts["id"]],
            "verdict": verdicts["verdict"],
            "ours": [estimate_text(k, v, lo, hi) for k, v, lo, hi in
                     zip(verdicts["kind"], verdicts["value"], verdicts["ci_low"], verdicts["ci_high"])],
            "threshold": ["" if t is None or t != t else f"{100 * float(t):g}%" for t in verdicts["threshold"]],
            "platforms": verdicts["platforms"].fillna(""),
            "n": [f"{p}/{b}" if p else "" for p, b in zip(verdicts["n_platform"], verdicts["n_baseline"])],
            "note": [(n or "")[:width] + ("..." if n and len(n) > width else "") for n in verdicts["note"]],
        }
    )
    shown["claim"] = shown["claim"].str.ljust(shown["claim"].str.len().max())
    shown["note"] = shown["note"].str.ljust(shown["note"].str.len().max())
    return shown.to_string(index=False, justify="left")


def _given(value) -> bool:
    """Whether a verdict row's field holds something (not None, NaN or empty)."""
    return value is not None and value == value and value != ""


def sentence(row: dict | pd.Series) -> str:
    """One verdict row as a sentence for a reader (Markdown): what the paper said, what we measured
    (our relative difference, positive = worse, with its interval and n per side), the verdict and
    why, when a note says why."""
    said = f"{row['paper_platform']}: {row['published']}" if _given(row.get("paper_platform")) else str(row["published"])
    verdict = str(row["verdict"])
    value = row.get("value")
    if not _given(value):  # nothing measured
        ours = f"{row.get('platforms')}, nothing to compare" if _given(row.get("platforms")) else ""
    else:
        threshold = row.get("threshold")
        bound = "" if threshold is None or threshold != threshold else f", threshold {100 * float(threshold):g} %"
        ours = (f"{row['platforms']}: {estimate_text(row.get('kind'), value, row['ci_low'], row['ci_high'])}"
                f" (n = {row['n_platform']}/{row['n_baseline']}{bound})")
    note = f" ({row['note']})" if _given(row.get("note")) else ""
    return f"The paper: {said}. Here{', ' + ours if ours else ''}: **{verdict}**{note}."


def listing(verdicts: pd.DataFrame, width: int = 100) -> str:
    """Every claim in full for a reader: its id, then its verdict with our relative difference, the
    interval, threshold, platforms and n, then the whole note (wrapped, never cut)."""
    import textwrap

    blocks = []
    for _, row in verdicts.iterrows():
        parts = [str(row["verdict"])]
        if _given(row["value"]):
            parts.append(f"ours {_percent(row['value'])} [{_percent(row['ci_low'])}, {_percent(row['ci_high'])}]")
        if _given(row["threshold"]):
            parts.append(f"threshold {100 * float(row['threshold']):g}%")
        if _given(row.get("platforms")):
            parts.append(f"{row['platforms']}, n {row['n_platform']}/{row['n_baseline']}")
        text = [row["id"], textwrap.fill("; ".join(parts), width, initial_indent="  ", subsequent_indent="    ")]
        if _given(row.get("note")):
            text.append(textwrap.fill(str(row["note"]), width, initial_indent="  why: ", subsequent_indent="       "))
        blocks.append("\n".join(text))
    return "\n".join(blocks)
