"""Selecting a claim's records from the tidy table and pairing the platform's variants with the
baseline's (the module docstring of :mod:`virtrepro.analysis.claims`, "Variants"), including the
derived metrics' pairs (a parallel speed-up, an isolation efficiency)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...declarations import platform_names
from ... import results
from ...platforms import catalog as platform_catalog


# The parameter a derived parallel speed-up scales over (time at its smallest value / time at its largest).
SCALING_PARAMETER = {"npb_omp": "threads", "npb_mpi": "procs", "npb_serial": "threads"}
# A derived isolation efficiency: the victim's value with a stressing neighbour / alone.
ISOLATION_PARAMETER, ISOLATION_ALONE, ISOLATION_STRESSED = "neighbour", "none", "stress"
DERIVED_METRICS = ("parallel_speedup", "isolation_efficiency")


# ---------------------------------------------------------------------------
# Selecting records
# ---------------------------------------------------------------------------


def _text(value) -> str:
    """A value as the text it is compared by (1024 == "1024" == 1024.0)."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _where_text(where: dict | None) -> str:
    parts = []
    for key, value in (where or {}).items():
        shown = "|".join(_text(v) for v in value) if isinstance(value, list) else _text(value)
        parts.append(f"{key}={shown}")
    return ", ".join(parts)


def resolve_platform(name: str, table: pd.DataFrame, paper_platform: str | None = None,
                     subsystem: str | None = None) -> str:  # fmt: skip
    """``qemu`` is whichever QEMU the table has that may stand for ``paper_platform`` (by default the
    alias' own, KVM) on ``subsystem``: qemu-kvm, else an analogue the analogue table allows there
    (:mod:`virtrepro.declarations.platform_names`); a platform that is the paper platform's own (qemu-kvm for KVM)
    and has no runs is likewise replaced by such an analogue; other names are themselves."""
    present = set(table["platform"].unique()) if len(table) else set()

    def may(paper, candidate):
        return platform_names.stand_in(paper, candidate) or platform_names.analogue_rule(paper, candidate, subsystem)

    if name in platform_catalog.ALIASES:
        paper_platform = paper_platform or platform_names.ALIAS_PAPER_PLATFORM[name]
        return next((c for c in platform_catalog.ALIASES[name].candidates if c in present and may(paper_platform, c)), name)
    if name not in present and paper_platform and platform_names.stand_in(paper_platform, name) == platform_names.SAME:
        return next((c for c in platform_names.analogues_of(paper_platform) if c in present and may(paper_platform, c)), name)
    return name


def _column_text(frame: pd.DataFrame, column: str) -> pd.Series:
    return frame[column].map(_text) if column in frame.columns else pd.Series("", index=frame.index)


def _match(frame: pd.DataFrame, key: str, value) -> pd.Series:
    wanted = {_text(v) for v in (value if isinstance(value, list) else [value])}
    hit = pd.Series(False, index=frame.index)
    for column in (f"param_{key}", key):
        if column in frame.columns:
            hit |= _column_text(frame, column).isin(wanted)
    return hit


class NotMeasured(Exception):
    """The claim's records are not in the table; the message says which."""


class _Views:
    """A table and its benchmarks' rows widened (:func:`results.view`), each once: the claims
    select from the same benchmark many times."""

    def __init__(self, table: pd.DataFrame):
        self.table, self._views = table, {}

    def __getitem__(self, benchmark: str) -> pd.DataFrame:
        if benchmark not in self._views:
            self._views[benchmark] = results.view(self.table, benchmark)
        return self._views[benchmark]


def _views(table: pd.DataFrame | _Views) -> _Views:
    return table if isinstance(table, _Views) else _Views(table)


def _records(table: pd.DataFrame | _Views, check: dict, platform: str) -> pd.DataFrame:
    """The records a check compares on ``platform``, widened (parameters as ``param_<key>``)."""
    bench, metric, where = check["benchmark"], check["metric"], check.get("where") or {}
    if platform in platform_catalog.ALIASES:  # unresolved: none of its candidates that may stand for it ran
        alias = platform_catalog.ALIASES[platform]
        wanted = [c for c in alias.candidates if platform_names.stand_in(alias.paper_platform, c)]
        raise NotMeasured(f"no {' or '.join(wanted)} runs on this testbed")
    views = _views(table)
    if bench not in set(views.table["benchmark"]):
        raise NotMeasured(f"no {bench} runs on {platform}")
    rows = views[bench]
    rows = rows[rows["platform"] == platform]
    if rows.empty:
        raise NotMeasured(f"no {bench} runs on {platform}")
    if metric == "parallel_speedup":
        rows = rows[rows["metric"] == "time"]
    elif metric == "isolation_efficiency":
        rows = rows[rows["metric"] == check["victim_metric"]]
        if rows.empty:
            raise NotMeasured(f"no {check['victim_metric']} records of {bench} on {platform}")
    else:
        rows = rows[rows["metric"] == metric]
        if rows.empty:
            raise NotMeasured(f"no {metric} records of {bench} on {platform}")
    for key, value in where.items():
        rows = rows[_match(rows, key, value)]
    if rows.empty:
        raise NotMeasured(f"no {bench} runs with {_where_text(where)} on {platform}")
    return rows[rows["value"].notna()]


def _dimensions(frames: list[pd.DataFrame], where: dict, exclude: set[str]) -> list[str]:
    """Variant dimensions: open parameters, labels that vary within one log, and where's keys."""
    both = pd.concat(frames)
    dims = [c for c in both.columns if c.startswith("param_") and both[c].notna().any()]
    fixed = {"testbed", "platform", "benchmark", "variant", "repetition", "round", "metric", "unit", "value", "source_log"}
    for column in both.columns:
        if column in fixed or column.startswith("param_") or column in dims or both[column].isna().all():
            continue
        if column in where and f"param_{column}" not in both.columns:
            dims.append(column)
            continue
        per_log = both.groupby(["source_log", "metric"])[column].nunique(dropna=False)
        if (per_log > 1).any():
            dims.append(column)
    return [d for d in dims if d not in exclude and d.removeprefix("param_") not in exclude]


def _dim_name(column: str) -> str:
    return column.removeprefix("param_")


class _Pair:
    """The platform's and the baseline's samples of one variant; ``parts`` (optional): for each side,
    the part of the run order (:data:`results.COLUMNS` ``part``, NaN unknown) of each value, keyed
    as the side's samples (:func:`_part_consistency`); ``rounds`` (optional): likewise the round each
    value was measured in (``round``, NaN for a log measured before rounds), which pairs the
    comparison by round (:func:`virtrepro.analysis.stats.by_round`)."""

    def __init__(self, label: str, plat: dict, base: dict, parts: tuple[dict, dict] | None = None,
                 rounds: tuple[dict, dict] | None = None):
        self.label, self.plat, self.base, self.parts, self.rounds = label, plat, base, parts, rounds


def _part_of(rows: pd.DataFrame) -> np.ndarray:
    """The part (1, 2) of each record, NaN where the table does not say."""
    if "part" not in rows.columns:
        return np.full(len(rows), np.nan)
    return pd.to_numeric(rows["part"], errors="coerce").to_numpy(float, na_value=np.nan)


def _round_of(rows: pd.DataFrame) -> np.ndarray:
    """The round of each record, NaN where the table does not say (logs measured before rounds)."""
    if "round" not in rows.columns:
        return np.full(len(rows), np.nan)
    return pd.to_numeric(rows["round"], errors="coerce").to_numpy(float, na_value=np.nan)


def _pairs(plat: pd.DataFrame, base: pd.DataFrame, dims: list[str], scaling: str | None):
    """Pair the two sides' variants. Returns (pairs, unpaired descriptions).

    Each side of a pair is a dict of numpy samples: {"value": ...} for a plain metric, or
    {"num": ..., "den": ...} for a derived ratio: time at the smallest / at the largest common
    scaling value for a parallel speed-up, value beside a neighbour / alone for an isolation
    efficiency.
    """
    matched, setup = [], []
    for dim in dims:
        shared = set(_column_text(plat, dim)) & set(_column_text(base, dim))
        (matched if shared else setup).append(dim)
    key_p = plat.assign(_k=list(zip(*[_column_text(plat, d) for d in matched + setup]))) if dims else plat.assign(_k=[()] * len(plat))
    key_b = base.assign(_k=list(zip(*[_column_text(base, d) for d in matched]))) if matched else base.assign(_k=[()] * len(base))
    pairs, unpaired = [], []
    varying = [d for d in matched + setup if pd.concat([_column_text(plat, d), _column_text(base, d)]).nunique() > 1]
    for key, prows in key_p.groupby("_k", sort=True):
        mkey = key[: len(matched)]
        brows = key_b[key_b["_k"] == mkey]
        values = dict(zip(matched + setup, key))
        label = ", ".join(f"{_dim_name(d)}={values[d]}" for d in varying if d in values)
        if brows.empty:
            unpaired.append(label or "all")
            continue
        if scaling is None:
            pairs.append(_Pair(label, {"value": prows["value"].to_numpy(float)}, {"value": brows["value"].to_numpy(float)},
                               ({"value": _part_of(prows)}, {"value": _part_of(brows)}),
                               ({"value": _round_of(prows)}, {"value": _round_of(brows)})))
        else:
            pairs.append(_Pair(label, prows, brows))
    return pairs, unpaired, varying


def _speedup_pairs(raw_pairs: list[_Pair], scaling_col: str, check: dict) -> tuple[list[_Pair], list[str]]:
    """Group the per-scaling-value pairs into ratio pairs: a speed-up (time at the smallest / at the
    largest common count) or an isolation efficiency (value beside a neighbour / alone)."""
    isolation = check["metric"] == "isolation_efficiency"
    # raw pairs carry the rows; regroup by the label without the scaling dimension
    groups: dict[str, list[_Pair]] = {}
    name = _dim_name(scaling_col)
    for pair in raw_pairs:
        parts = [p for p in pair.label.split(", ") if p and not p.startswith(f"{name}=")]
        groups.setdefault(", ".join(parts), []).append(pair)
    out, problems = [], []
    for label, members in sorted(groups.items()):
        plat = pd.concat([m.plat for m in members])
        base = pd.concat([m.base for m in members])
        counts = sorted(set(_column_text(plat, scaling_col)) & set(_column_text(base, scaling_col)), key=_numeric_first)
        if isolation:
            if not {ISOLATION_ALONE, ISOLATION_STRESSED} <= set(counts):
                problems.append(f"{label or 'all'}: the victim was not run both alone and beside a stressing neighbour")
                continue
            num, den = ISOLATION_STRESSED, ISOLATION_ALONE
            text = "beside a neighbour / alone"
        else:
            if len(counts) < 2:
                problems.append(f"{label or 'all'}: fewer than two common {name} values")
                continue
            num, den = counts[0], counts[-1]
            text = f"{name} {num}->{den}"

        def side(rows, of=lambda r: r["value"].to_numpy(float)):
            values = _column_text(rows, scaling_col)
            return {"num": of(rows.loc[values == num]), "den": of(rows.loc[values == den])}

        out.append(_Pair(f"{label + ', ' if label else ''}{text}", side(plat), side(base),
                         (side(plat, _part_of), side(base, _part_of)), (side(plat, _round_of), side(base, _round_of))))
    return out, problems


def _numeric_first(text: str):
    """Sort key of a parameter value as text: numbers first, by value."""
    try:
        return (0, float(text))
    except ValueError:
        return (1, text)
