"""Verdicts on the papers' comparison claims (``data/reference/claims.yaml``) from our runs.

:func:`load_claims` reads the claims, :func:`evaluate` checks each one against the tidy table
of a testbed (:func:`virtrepro.results.load`) and returns one row per claim. The format of a
claim and the meaning of every kind are in ``data/reference/README.md``; in short:

* **Relative difference** of a platform P against a baseline B, signed so that positive means
  P is worse: ``(P - B) / B`` for lower-is-better metrics, ``(B - P) / B`` for higher-is-better
  ones (:data:`DIRECTION_RULES` decides which). It is ``stats.overhead``'s overhead as a
  fraction (not percent); its confidence interval is Fieller's for the ratio of means
  (``stats.overhead``), or a percentile bootstrap where a claim averages over variants
  (``aggregate: mean``) or uses a derived metric (``parallel_speedup``, ``isolation_efficiency``).
* **Derived metrics.** ``parallel_speedup``: NPB time at the smallest common thread or process
  count divided by the time at the largest. ``isolation_efficiency`` (thesis chapter 6): the
  ``isolation`` victim's ``victim_metric`` (higher is better) beside a stressing neighbour
  divided by the same alone; 1 is perfect isolation. Both are ratios of means, so their
  intervals are bootstrap ones.
* **Verdict** from the confidence interval [lo, hi] of that difference and the threshold t:

  ====================  ========================  =========================
  kind                  holds when                does not hold when
  ====================  ========================  =========================
  ``overhead_at_most``  hi <= t                   lo > t
  ``overhead_at_least`` lo >= t                   hi < t
  ``better``            hi < -t                   lo >= -t
  ``equivalent``        TOST p < alpha, margin t  [lo, hi] outside [-t, t]
  ``order``             each platform ``better`` (t = 0) than the next, else as ``better``
  ====================  ========================  =========================

  otherwise ``inconclusive`` (the interval straddles the threshold, or there is no interval:
  fewer than 2 values a side). ``not measured`` when the benchmark, metric, platform or selected
  variant has no runs on the testbed (the note says which), ``not testable here`` for claims
  marked ``testable: false`` (with their reason).
* **Variants.** ``where`` selects records: each key matches the ``param_<key>`` column or the
  record label ``<key>``, compared as text; a list means each of its values. Every parameter
  ``where`` leaves open is a variant dimension, as is a record label that varies within one raw
  log (e.g. iozone's ``file_size_kb``: one log holds every file size). The platform and the
  baseline are paired on the dimensions whose values they share; a dimension whose values
  differ entirely between the two (the VM's ``disk=qcow2`` against the host's ``disk=host``)
  is the platform's own set-up, and each of the platform's values is compared with the whole
  baseline. Without ``aggregate`` a claim must hold for each paired variant and the row reports
  the worst one; with ``aggregate: mean`` the claim is about the mean of the per-variant
  relative differences. A ``where`` list value with no paired runs keeps a claim that holds
  elsewhere at ``inconclusive`` (a counterexample still makes it ``does not hold``).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from . import platform_names, stats

KINDS = ("overhead_at_most", "overhead_at_least", "equivalent", "better", "order")
# A verdict from a stand-in that is only an analogue of the paper's platform says so (platform_names),
# and one whose records are a guest faster than native without a recorded cause is not a verdict.
ANALOGUE_SUFFIX = " (analogue)"
UNEXPLAINED_FASTER = "inconclusive (guest faster than native: unexplained)"
VERDICTS = ("holds", "does not hold", "holds" + ANALOGUE_SUFFIX, "does not hold" + ANALOGUE_SUFFIX, "inconclusive",
            UNEXPLAINED_FASTER, "not measured", "not testable here")  # fmt: skip

# ---------------------------------------------------------------------------
# Metric direction: the one table that says whether more is better.
# ---------------------------------------------------------------------------
# Rules are tried in order; the first that matches decides. (field, test, value, higher_is_better)
DIRECTION_RULES: list[tuple[str, str, str, bool]] = [
    ("metric", "equals", "parallel_speedup", True),  # derived: more speed-up is better
    ("metric", "equals", "isolation_efficiency", True),  # derived: closer to 1 (unharmed) is better
    ("metric", "equals", "time", False),  # NPB run time
    ("metric", "in", "provision boot reboot clone destroy", False),  # lifecycle steps (s)
    ("metric", "endswith", "_latency", False),  # netperf, HPCC PingPong, bonnie
    ("metric", "startswith", "latency_", False),  # sysbench latency_avg/max/p95
    ("metric", "startswith", "rtt_latency", False),  # netperf omni
    ("metric", "endswith", "_time", False),  # hpl_time, run_time, total_time
    ("metric", "endswith", "_cpu", False),  # bonnie CPU use (%)
    ("unit", "in", "s ms us ns", False),  # any other duration
    ("unit", "equals", "%", False),  # CPU use
    # everything else (MB/s, kB/s, Mbit/s, Gflop/s, GUP/s, Mop/s, events/s, bogo-ops/s): higher is better
]


def higher_is_better(metric: str, unit: str | None = None) -> bool:
    """Whether a larger value of ``metric`` (in ``unit``) is better, by :data:`DIRECTION_RULES`."""
    fields = {"metric": metric or "", "unit": unit or ""}
    for field, test, value, higher in DIRECTION_RULES:
        got = fields[field]
        if (
            (test == "equals" and got == value)
            or (test == "in" and got in value.split())
            or (test == "endswith" and got.endswith(value))
            or (test == "startswith" and got.startswith(value))
        ):
            return higher
    return True


# The parameter a derived parallel speed-up scales over (time at its smallest value / time at its largest).
SCALING_PARAMETER = {"npb_omp": "threads", "npb_mpi": "procs", "npb_serial": "threads"}
# A derived isolation efficiency: the victim's value with a stressing neighbour / alone.
ISOLATION_PARAMETER, ISOLATION_ALONE, ISOLATION_STRESSED = "neighbour", "none", "stress"
DERIVED_METRICS = ("parallel_speedup", "isolation_efficiency")

COLUMNS = [
    "id", "paper", "source", "kind", "benchmark", "metric", "published", "platforms", "threshold",
    "value", "ci_low", "ci_high", "n_platform", "n_baseline", "variant", "verdict", "note",
    "paper_platform", "stand_in", "suspect_faster_than_native",
]  # fmt: skip


def load_claims(path: str | Path) -> list[dict]:
    """The claims of ``claims.yaml``, checked for the fields evaluation needs."""
    claims = yaml.safe_load(Path(path).read_text())
    if not isinstance(claims, list):
        raise ValueError(f"{path}: expected a list of claims")
    seen = set()
    for claim in claims:
        ident = claim.get("id")
        if not ident or ident in seen:
            raise ValueError(f"{path}: claim id {ident!r} missing or repeated")
        seen.add(ident)
        if claim.get("testable"):
            check = claim.get("check") or {}
            if check.get("kind") not in KINDS:
                raise ValueError(f"{ident}: unknown check kind {check.get('kind')!r}")
            needed = ["benchmark", "metric"] + (["platforms"] if check["kind"] == "order" else ["platform", "baseline"])
            if check["kind"] != "order" and check["kind"] != "equivalent":
                needed.append("threshold")
            if check.get("metric") == "isolation_efficiency":
                needed.append("victim_metric")
            missing = [k for k in needed if k not in check]
            if missing:
                raise ValueError(f"{ident}: check lacks {', '.join(missing)}")
        elif not claim.get("reason"):
            raise ValueError(f"{ident}: an untestable claim needs a reason")
        _check_paper_platforms(claim)
    return claims


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


def resolve_platform(name: str, table: pd.DataFrame, paper_platform: str | None = None) -> str:
    """``qemu`` is whichever QEMU the table has that may stand for ``paper_platform`` (by default the
    alias' own, KVM: qemu-kvm only; :mod:`virtrepro.platform_names`); other names are themselves."""
    if name != "qemu":
        return name
    paper_platform = paper_platform or platform_names.ALIAS_PAPER_PLATFORM[name]
    present = set(table["platform"].unique()) if len(table) else set()
    for candidate in ("qemu-kvm", "qemu-tcg"):
        if candidate in present and platform_names.stand_in(paper_platform, candidate):
            return candidate
    return "qemu"


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


def _records(table: pd.DataFrame, check: dict, platform: str) -> pd.DataFrame:
    bench, metric, where = check["benchmark"], check["metric"], check.get("where") or {}
    if platform == "qemu":
        raise NotMeasured("no qemu-kvm runs on this testbed")
    rows = table[(table["benchmark"] == bench) & (table["platform"] == platform)]
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
    fixed = {"testbed", "platform", "benchmark", "parameters", "repetition", "metric", "unit", "value", "source_log"}
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
    """The platform's and the baseline's samples of one variant."""

    def __init__(self, label: str, plat: dict, base: dict):
        self.label, self.plat, self.base = label, plat, base


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
            pairs.append(_Pair(label, {"value": prows["value"].to_numpy(float)}, {"value": brows["value"].to_numpy(float)}))
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
        counts = sorted(set(_column_text(plat, scaling_col)) & set(_column_text(base, scaling_col)), key=_number)
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

        def side(rows):
            values = _column_text(rows, scaling_col)
            return {"num": rows.loc[values == num, "value"].to_numpy(float), "den": rows.loc[values == den, "value"].to_numpy(float)}

        out.append(_Pair(f"{label + ', ' if label else ''}{text}", side(plat), side(base)))
    return out, problems


def _number(text: str):
    try:
        return (0, float(text))
    except ValueError:
        return (1, text)


# ---------------------------------------------------------------------------
# Relative differences and their intervals
# ---------------------------------------------------------------------------


def _quantity(side: dict) -> float:
    if "value" in side:
        return float(np.mean(side["value"]))
    return float(np.mean(side["num"]) / np.mean(side["den"]))


def _relative(q_plat, q_base, hib: bool):
    """Relative difference (positive = worse), of numbers or of bootstrap arrays; NaN where the
    baseline is 0 (e.g. NPB class S times printed as 0.00 s): no relative difference exists."""
    diff = np.subtract(q_base, q_plat) if hib else np.subtract(q_plat, q_base)
    base = np.broadcast_to(np.asarray(q_base, dtype=float), np.shape(diff))
    out = np.divide(diff, base, out=np.full(np.shape(diff), np.nan), where=base != 0)
    return float(out) if np.ndim(out) == 0 else out


def _boot_quantities(side: dict, rng, n_boot: int) -> np.ndarray:
    def means(x):
        return x[rng.integers(0, x.size, size=(n_boot, x.size))].mean(axis=1)

    if "value" in side:
        return means(side["value"])
    return means(side["num"]) / means(side["den"])


def _n(side: dict) -> int:
    return int(sum(len(v) for v in side.values()))


def _min_n(side: dict) -> int:
    return int(min(len(v) for v in side.values()))


def _relative_ci(pairs: list[_Pair], hib: bool, level: float, aggregate: bool, n_boot: int, seed: int) -> list[dict]:
    """Relative difference (positive = worse) and CI per pair, or one row for their mean.

    A plain metric per variant: ``stats.overhead`` (Fieller). A derived metric or an aggregate:
    percentile bootstrap of the same statistic (each sample resampled independently,
    ``numpy.random.default_rng(seed)``), as ``stats.overhead(method="bootstrap")`` does.
    """
    nan = float("nan")
    if not aggregate and all("value" in p.plat for p in pairs):
        rows = []
        for p in pairs:
            res = stats.overhead(p.base["value"], p.plat["value"], hib, level=level, method="fieller")
            rows.append({"label": p.label, "value": res["overhead_percent"] / 100,
                         "ci_low": res["overhead_ci_low"] / 100, "ci_high": res["overhead_ci_high"] / 100,
                         "n_platform": res["n_platform"], "n_baseline": res["n_baseline"], "pair": p,
                         "ci_note": res["ci_note"]})  # fmt: skip
        return rows
    alpha = 1 - level
    rng = np.random.default_rng(seed)
    groups = [pairs] if aggregate else [[p] for p in pairs]
    rows = []
    for group in groups:
        point = float(np.mean([_relative(_quantity(p.plat), _quantity(p.base), hib) for p in group]))
        low = high = nan
        note = ""
        if math.isnan(point):
            note = "baseline is 0: no relative difference"
        elif all(_min_n(p.plat) >= 2 and _min_n(p.base) >= 2 for p in group):
            boot = np.mean(
                [_relative(_boot_quantities(p.plat, rng, n_boot), _boot_quantities(p.base, rng, n_boot), hib) for p in group],
                axis=0,
            )
            low, high = (float(q) for q in np.quantile(boot, [alpha / 2, 1 - alpha / 2]))
        else:
            note = "fewer than 2 values in a sample: no interval"
        label = group[0].label if len(group) == 1 and not aggregate else f"mean over {len(group)} variants"
        rows.append({"label": label, "value": point, "ci_low": low, "ci_high": high,
                     "n_platform": sum(_n(p.plat) for p in group), "n_baseline": sum(_n(p.base) for p in group),
                     "pair": group, "ci_note": note})  # fmt: skip
    return rows


def _tost_holds(row: dict, hib: bool, margin: float, level: float, aggregate: bool, n_boot: int, seed: int) -> bool:
    """Equivalence within +-margin: TOST (Welch) per variant; for a mean over variants, the
    (1 - 2 alpha) bootstrap interval inside the margin, which is the TOST decision at alpha."""
    alpha = 1 - level
    if not aggregate and isinstance(row["pair"], _Pair) and "value" in row["pair"].plat:
        p = stats.tost_p(row["pair"].base["value"], row["pair"].plat["value"], margin)
        return bool(p < alpha)
    pairs = row["pair"] if isinstance(row["pair"], list) else [row["pair"]]
    inner = _relative_ci(pairs, hib, 1 - 2 * alpha, True, n_boot, seed)[0]
    return bool(inner["ci_low"] > -margin and inner["ci_high"] < margin)


def _verdict(kind: str, row: dict, threshold: float, **tost) -> str:
    lo, hi = row["ci_low"], row["ci_high"]
    if kind == "equivalent":
        if _tost_holds(row, margin=threshold, **tost):
            return "holds"
        if not (math.isnan(lo) or math.isnan(hi)) and (lo > threshold or hi < -threshold):
            return "does not hold"
        return "inconclusive"
    if math.isnan(lo) or math.isnan(hi):
        return "inconclusive"
    if kind == "overhead_at_most":
        return "holds" if hi <= threshold else "does not hold" if lo > threshold else "inconclusive"
    if kind == "overhead_at_least":
        return "holds" if lo >= threshold else "does not hold" if hi < threshold else "inconclusive"
    if kind == "better":
        return "holds" if hi < -threshold else "does not hold" if lo >= -threshold else "inconclusive"
    raise ValueError(f"unknown kind {kind!r}")


_SEVERITY = {"holds": 0, "inconclusive": 1, "does not hold": 2}


def _badness(kind: str, value: float) -> float:
    if kind == "overhead_at_least":
        return -value
    if kind == "equivalent":
        return abs(value)
    return value  # at_most, better, order: a larger overhead is worse


def _compare(table, check, plat_name, base_name, kind, threshold, level, n_boot, seed):
    """Rows (one per variant, or one aggregate) comparing two platforms, with verdicts."""
    where = check.get("where") or {}
    if check["metric"] == "isolation_efficiency":
        scaling = ISOLATION_PARAMETER
    else:
        scaling = SCALING_PARAMETER.get(check["benchmark"]) if check["metric"] == "parallel_speedup" else None
    sides, why = {}, []
    for name in dict.fromkeys((plat_name, base_name)):
        try:
            sides[name] = _records(table, check, name)
        except NotMeasured as reason:
            why.append(str(reason))
    if why:
        raise NotMeasured("; ".join(why))
    plat, base = sides[plat_name], sides[base_name]
    dims = _dimensions([plat, base], where, set())
    if scaling:
        col = f"param_{scaling}" if f"param_{scaling}" in plat.columns else scaling
        if col not in dims:
            dims.append(col)
    pairs, unpaired, _ = _pairs(plat, base, dims, scaling)
    problems = []
    if scaling:
        pairs, problems = _speedup_pairs(pairs, col, check)
    if not pairs:
        raise NotMeasured(
            f"no {check['benchmark']} variant run on both {plat_name} and {base_name}"
            + (f" ({'; '.join(problems)})" if problems else "")
        )
    unit = plat["unit"].iloc[0] if "unit" in plat.columns and len(plat) else None
    hib = higher_is_better(check["metric"], unit)
    rows = _relative_ci(pairs, hib, level, check.get("aggregate") == "mean", n_boot, seed)
    tost = {"hib": hib, "level": level, "aggregate": check.get("aggregate") == "mean", "n_boot": n_boot, "seed": seed}
    for row in rows:
        row["verdict"] = _verdict(kind, row, threshold, **tost)
    # values a where list asked for that were not run on both sides
    missing = []
    for key, value in where.items():
        if isinstance(value, list):
            have = set(_column_text(plat, f"param_{key}")) | set(_column_text(plat, key))
            have &= set(_column_text(base, f"param_{key}")) | set(_column_text(base, key))
            missing += [f"{key}={_text(v)}" for v in value if _text(v) not in have]
    return rows, missing + [f"only on {plat_name}: {u}" for u in unpaired] + problems


def _worst(kind: str, rows: list[dict]) -> dict:
    return max(rows, key=lambda r: (_SEVERITY[r["verdict"]], _badness(kind, r["value"])))


def evaluate_claim(claim: dict, table: pd.DataFrame, level: float = 0.95, margin: float = 0.05,
                   n_boot: int = 10_000, seed: int = 0, guard: list[dict] | None = None) -> dict:  # fmt: skip
    """One claim's verdict row (see the module docstring). ``guard``: the faster-than-native entries
    of the table (:func:`_guard`; computed here with the registry's causes when not given)."""
    check = claim.get("check") or {}
    row = {c: None for c in COLUMNS}
    row.update({k: claim.get(k) for k in ("id", "paper", "source", "published")})
    row.update({"kind": check.get("kind"), "benchmark": check.get("benchmark"), "metric": check.get("metric"),
                "threshold": check.get("threshold"), "n_platform": 0, "n_baseline": 0})  # fmt: skip
    for key in ("value", "ci_low", "ci_high"):
        row[key] = float("nan")
    papers = paper_platforms(claim)
    joint = " > " if check.get("kind") == "order" else " vs " if claim.get("testable") else ", "
    row["paper_platform"] = joint.join(p or "" for p in papers)
    if not claim.get("testable"):
        row.update(verdict="not testable here", note=claim.get("reason", ""), platforms="")
        return row
    kind = check["kind"]
    try:
        names = [resolve_platform(p, table, paper) for p, paper in zip(_check_platforms(check), papers)]
        row["platforms"] = (" > ".join(names) + " (best first)") if kind == "order" else " vs ".join(names)
        relations = _stand_ins(names, papers, table)
        row["stand_in"] = ", ".join(dict.fromkeys(relations))
        if kind == "order":
            rows, notes = [], []
            for better, worse in zip(names, names[1:]):
                got, missing = _compare(table, check, better, worse, "better", 0.0, level, n_boot, seed)
                for r in got:
                    r["label"] = f"{better} vs {worse}" + (f", {r['label']}" if r["label"] else "")
                rows += got
                notes += missing
        else:
            plat, base = names
            threshold = check.get("threshold", margin if kind == "equivalent" else None)
            row["threshold"] = threshold
            rows, notes = _compare(table, check, plat, base, kind, float(threshold), level, n_boot, seed)
    except NotMeasured as why:
        row.update(verdict="not measured", note=str(why))
        return row
    worst = _worst(kind, rows)
    verdict = worst["verdict"]
    where_missing = [n for n in notes if not n.startswith("only on")]
    if verdict == "holds" and where_missing:
        verdict = "inconclusive"
    note = []
    if len(rows) > 1:
        counts = pd.Series([r["verdict"] for r in rows]).value_counts()
        note.append(f"{len(rows)} comparisons: " + ", ".join(f"{v} {k}" for k, v in counts.items()) + "; worst shown")
    if where_missing:
        note.append("not run: " + ", ".join(where_missing))
    if worst["ci_note"]:
        note.append(worst["ci_note"])
    flags = _flagged(_guard(table, level, load_causes()) if guard is None else guard, table, check, names)
    verdict = _gated(verdict, relations, flags)
    note = [n for n in (_analogue_note(names, papers, relations), _flag_note(flags)) if n] + note
    row.update(value=worst["value"], ci_low=worst["ci_low"], ci_high=worst["ci_high"], n_platform=worst["n_platform"],
               n_baseline=worst["n_baseline"], variant=worst["label"], verdict=verdict, note="; ".join(note),
               suspect_faster_than_native=bool(flags))  # fmt: skip
    return row


def evaluate(claims: list[dict], table: pd.DataFrame, level: float = 0.95, margin: float = 0.05,
             n_boot: int = 10_000, seed: int = 0, causes: list[dict] | None = None) -> pd.DataFrame:  # fmt: skip
    """One row per claim: id, paper, source, kind, benchmark, metric, published, platforms
    (as used: ``qemu`` resolved), threshold, value (relative difference, positive = worse; for
    ``order`` the worst adjacent pair's), ci_low, ci_high (at ``level``), n_platform, n_baseline,
    variant (the one shown: the worst), verdict (one of :data:`VERDICTS`) and note.

    ``margin`` is the TOST margin of an ``equivalent`` claim that gives no threshold. Also
    paper_platform, stand_in (how the measured platforms stand for the paper's,
    :mod:`virtrepro.platform_names`) and suspect_faster_than_native (the claim compares records of a
    guest faster than native, :func:`faster_than_native`; ``causes`` defaults to the registry).
    """
    guard = _guard(table, level, load_causes() if causes is None else causes)
    rows = [evaluate_claim(c, table, level=level, margin=margin, n_boot=n_boot, seed=seed, guard=guard) for c in claims]
    return pd.DataFrame(rows, columns=COLUMNS)


def verdict_counts(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Claims per paper and verdict (columns in :data:`VERDICTS` order, a total row)."""
    counts = pd.crosstab(verdicts["paper"], verdicts["verdict"]).reindex(columns=list(VERDICTS), fill_value=0)
    counts.loc["all papers"] = counts.sum()
    return counts


def _percent(value: float) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:+.1f}%"


def report(verdicts: pd.DataFrame, width: int = 70) -> str:
    """The verdict rows as a plain-text table for a notebook: claim, verdict, our relative difference
    (positive = worse) with its interval, threshold, platforms, n per side and the note (shortened)."""
    if verdicts.empty:
        return "no claims"
    shown = pd.DataFrame(
        {
            "claim": [f"{i.split('-', 1)[1] if '-' in i else i}" for i in verdicts["id"]],
            "verdict": verdicts["verdict"],
            "ours": [
                "" if v is None or math.isnan(v) else f"{_percent(v)} [{_percent(lo)}, {_percent(hi)}]"
                for v, lo, hi in zip(verdicts["value"], verdicts["ci_low"], verdicts["ci_high"])
            ],
            "threshold": ["" if t is None or t != t else f"{100 * float(t):g}%" for t in verdicts["threshold"]],
            "platforms": verdicts["platforms"].fillna(""),
            "n": [f"{p}/{b}" if p else "" for p, b in zip(verdicts["n_platform"], verdicts["n_baseline"])],
            "note": [(n or "")[:width] + ("..." if n and len(n) > width else "") for n in verdicts["note"]],
        }
    )
    shown["claim"] = shown["claim"].str.ljust(shown["claim"].str.len().max())
    shown["note"] = shown["note"].str.ljust(shown["note"].str.len().max())
    return shown.to_string(index=False, justify="left")


# ---------------------------------------------------------------------------
# The paper's platforms and what stands for them (platform_names holds the rule)
# ---------------------------------------------------------------------------


def _check_platforms(check: dict) -> list[str]:
    if not check:
        return []
    return list(check["platforms"]) if check.get("kind") == "order" else [check["platform"], check["baseline"]]


def paper_platforms(claim: dict) -> list[str | None]:
    """The paper's platform behind each of the check's platforms, in the check's order (``platform``,
    ``baseline``, or the ``order`` list); for an untestable claim, the platforms it names.

    ``paper_platform`` in claims.yaml is a name when one platform is compared with native (the
    baseline's paper platform is then ``native``), else a list in the check's order. A claim without
    it (a hand-made one) reads ``qemu`` as KVM and every other name as itself (None)."""
    given = claim.get("paper_platform")
    names = _check_platforms(claim.get("check") or {}) if claim.get("testable") else []
    if given is None:
        return [platform_names.ALIAS_PAPER_PLATFORM.get(n) for n in names]
    given = [given] if isinstance(given, str) else list(given)
    if names and len(given) == 1 and len(names) == 2 and names[1] == "native":
        given.append("native")
    return given


def _check_paper_platforms(claim: dict) -> None:
    """claims.yaml: every claim names its paper platforms, and each check platform may stand for its own."""
    ident = claim["id"]
    if claim.get("paper_platform") is None:
        raise ValueError(f"{ident}: paper_platform missing (the paper's platform, e.g. KVM)")
    papers = paper_platforms(claim)
    for paper in papers:
        if paper not in platform_names.STAND_INS:
            raise ValueError(f"{ident}: unknown paper platform {paper!r} (known: {', '.join(platform_names.STAND_INS)})")
    if not claim.get("testable"):
        return
    names = _check_platforms(claim["check"])
    if len(papers) != len(names):
        raise ValueError(f"{ident}: paper_platform names {len(papers)} platforms, the check compares {len(names)}")
    for name, paper in zip(names, papers):
        candidates = ["qemu-kvm", "qemu-tcg"] if name == "qemu" else [name]
        if not any(platform_names.stand_in(paper, c) for c in candidates):
            raise ValueError(f"{ident}: {name} may not stand for {paper} (platform_names.STAND_INS)")


def _stand_ins(names: list[str], papers: list[str | None], table: pd.DataFrame) -> list[str]:
    """How each resolved platform stands for its paper platform; NotMeasured when one may not (qemu-tcg
    for KVM) or when the paper platform has no stand-in on this testbed."""
    present = set(table["platform"].unique()) if len(table) else set()
    relations = []
    for name, paper in zip(names, papers):
        if paper is None:
            relations.append(platform_names.SAME)
            continue
        relation = platform_names.stand_in(paper, name)
        if relation is None or name not in present:
            if relation is None or not present & set(platform_names.STAND_INS[paper]):
                raise NotMeasured(platform_names.why_not_measured(paper, present))
        relations.append(relation)
    return relations


def _analogue_note(names: list[str], papers: list[str | None], relations: list[str]) -> str:
    shown = [f"{platform_names.label(n)} for {p}" for n, p, r in zip(names, papers, relations) if r == platform_names.ANALOGUE]
    return ("analogue, not the paper's platform: " + ", ".join(shown)) if shown else ""


# ---------------------------------------------------------------------------
# The guard: a guest faster than native beyond its interval is a condition to explain, not a result
# ---------------------------------------------------------------------------

GUARD_MARGIN = 0.10  # a guest better than native by more than this at the interval's worse end is marked
CAUSES_PATH = Path(__file__).resolve().parents[2] / "data" / "reference" / "faster_than_native.yaml"


def load_causes(path: str | Path = CAUSES_PATH) -> list[dict]:
    """The registry of explained faster-than-native results: entries with ``platform``, ``benchmark``,
    optional ``metric`` and ``where`` (as in a claim's check) and the ``cause`` found, with evidence."""
    path = Path(path)
    entries = (yaml.safe_load(path.read_text()) if path.exists() else None) or []
    for entry in entries:
        missing = [k for k in ("platform", "benchmark", "cause") if not entry.get(k)]
        if missing:
            raise ValueError(f"{path}: an entry lacks {', '.join(missing)}: {entry}")
    return entries


def _guard(table: pd.DataFrame, level: float, causes: list[dict], margin: float = GUARD_MARGIN) -> list[dict]:
    """Every (guest platform, benchmark, metric, variant) whose relative difference against native
    (Fieller interval at ``level``, positive = worse) lies entirely below ``-margin``, with the table
    records of the guest's side and the recorded cause ("" when none)."""
    out = []
    if table.empty or "native" not in set(table["platform"]):
        return out
    measured = table[table["value"].notna()]
    # per benchmark first, without its empty columns: the table is wide and slow to slice
    parts = (
        (key, part)
        for _, bench_part in measured.groupby("benchmark", sort=True)
        for key, part in bench_part.dropna(axis=1, how="all").groupby(["benchmark", "metric"], sort=True)
    )
    for (bench, metric), part in parts:
        if "native" not in set(part["platform"]) or part["platform"].nunique() < 2:
            continue
        dims = _dimensions([part], {}, set())
        keys = pd.Series(list(zip(*[_column_text(part, d) for d in dims])) if dims else [()] * len(part), index=part.index)
        slim = pd.DataFrame({"platform": part["platform"].astype(str), "key": keys, "value": part["value"].astype(float)})
        base = slim[slim["platform"] == "native"]
        hib = higher_is_better(metric, part["unit"].iloc[0])
        for (platform, key), guest in slim[slim["platform"] != "native"].groupby(["platform", "key"], sort=True):
            native = base.loc[base["key"] == key, "value"].to_numpy(float)
            if len(native) < 2 or len(guest) < 2:
                continue
            res = stats.overhead(native, guest["value"].to_numpy(float), hib, level=level, method="fieller")
            high = res["overhead_ci_high"] / 100
            if not high < -margin:
                continue
            entry = {"platform": platform, "benchmark": bench, "metric": metric,
                     "variant": ", ".join(f"{_dim_name(d)}={v}" for d, v in zip(dims, key)),
                     "estimate": res["overhead_percent"] / 100, "ci_low": res["overhead_ci_low"] / 100, "ci_high": high,
                     "n_platform": len(guest), "n_baseline": len(native), "records": guest.index}  # fmt: skip
            entry["cause"] = _cause(entry, table.loc[guest.index], causes)
            out.append(entry)
    return out


def _cause(entry: dict, records: pd.DataFrame, causes: list[dict]) -> str:
    for cause in causes:
        if (cause["platform"], cause["benchmark"]) != (entry["platform"], entry["benchmark"]):
            continue
        if cause.get("metric") not in (None, entry["metric"]):
            continue
        if all(_match(records, k, v).all() for k, v in (cause.get("where") or {}).items()):
            return str(cause["cause"])
    return ""


def faster_than_native(table: pd.DataFrame, level: float = 0.95, causes: list[dict] | None = None,
                       margin: float = GUARD_MARGIN) -> pd.DataFrame:  # fmt: skip
    """The guard's list for a notebook: one row per guest platform, benchmark, metric and variant that
    beats native by more than ``margin`` beyond its confidence interval (``ci_high < -margin``, relative
    difference positive = worse), with the cause recorded in ``data/reference/faster_than_native.yaml``
    or "unexplained". Claims whose records are listed here without a cause are
    ``inconclusive (guest faster than native: unexplained)``."""
    causes = load_causes() if causes is None else causes
    rows = [{k: v for k, v in e.items() if k != "records"} for e in _guard(table, level, causes, margin)]
    columns = ["platform", "benchmark", "metric", "variant", "estimate", "ci_low", "ci_high", "n_platform", "n_baseline", "cause"]
    frame = pd.DataFrame(rows, columns=columns)
    frame["cause"] = frame["cause"].replace("", "unexplained")
    return frame


def _flagged(guard: list[dict], table: pd.DataFrame, check: dict, names: list[str]) -> list[dict]:
    """The guard's entries that hold records this claim compares."""
    used = pd.Index([])
    for name in dict.fromkeys(names):
        try:
            used = used.union(_records(table, check, name).index)
        except NotMeasured:
            continue
    return [e for e in guard if len(e["records"].intersection(used))]


def base_verdict(verdict: str) -> str:
    """A verdict without its qualifier: "holds (analogue)" -> "holds", the unexplained
    faster-than-native one -> "inconclusive"."""
    return verdict.split(" (", 1)[0]


def _gated(verdict: str, relations: list[str], flags: list[dict]) -> str:
    """The verdict as reported: unexplained faster-than-native records make it inconclusive; an
    analogue stand-in's holds / does not hold says so."""
    if verdict not in ("holds", "does not hold", "inconclusive"):
        return verdict
    if any(not f["cause"] for f in flags):
        return UNEXPLAINED_FASTER
    if verdict != "inconclusive" and platform_names.ANALOGUE in relations:
        return verdict + ANALOGUE_SUFFIX
    return verdict


def _flag_note(flags: list[dict]) -> str:
    if not flags:
        return ""
    shown = [f"{f['platform']} {f['metric']}{' ' + f['variant'] if f['variant'] else ''} {_percent(f['estimate'])}: "
             f"{f['cause'] or 'unexplained'}" for f in flags[:3]]  # fmt: skip
    more = f" (+{len(flags) - 3} more)" if len(flags) > 3 else ""
    return "guest faster than native beyond its interval: " + "; ".join(shown) + more


# ---------------------------------------------------------------------------
# The verdicts as a table (data/tables/<testbed>.claims.csv)
# ---------------------------------------------------------------------------

TABLE_COLUMNS = [
    "claim_id", "paper", "paper_platform", "platform_measured", "stand_in", "benchmark", "metric", "variant",
    "n_platform", "n_baseline", "estimate", "ci_low", "ci_high", "ci_level", "threshold", "verdict", "reason",
    "suspect_faster_than_native",
]  # fmt: skip


def claims_table(verdicts: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """The verdict rows of :func:`evaluate` in the columns of ``<testbed>.claims.csv``: the platform
    measured is empty where nothing was (not measured, not testable); estimate and interval are the
    relative difference (positive = the platform is worse) as a fraction."""
    decided = ~verdicts["verdict"].isin(["not measured", "not testable here"])
    out = pd.DataFrame({
        "claim_id": verdicts["id"], "paper": verdicts["paper"], "paper_platform": verdicts["paper_platform"],
        "platform_measured": verdicts["platforms"].where(decided, ""), "stand_in": verdicts["stand_in"].where(decided, ""),
        "benchmark": verdicts["benchmark"], "metric": verdicts["metric"], "variant": verdicts["variant"],
        "n_platform": verdicts["n_platform"], "n_baseline": verdicts["n_baseline"], "estimate": verdicts["value"],
        "ci_low": verdicts["ci_low"], "ci_high": verdicts["ci_high"], "ci_level": level, "threshold": verdicts["threshold"],
        "verdict": verdicts["verdict"], "reason": verdicts["note"],
        "suspect_faster_than_native": verdicts["suspect_faster_than_native"].fillna(False).astype(bool),
    })  # fmt: skip
    return out[TABLE_COLUMNS]


def write_claims_table(claims_path: str | Path, table: pd.DataFrame, out: str | Path, level: float = 0.95,
                       causes_path: str | Path = CAUSES_PATH) -> pd.DataFrame:  # fmt: skip
    """Evaluate every claim of ``claims_path`` on ``table`` (causes of faster-than-native results from
    ``causes_path``) and write :func:`claims_table` as CSV to ``out``."""
    verdicts = evaluate(load_claims(claims_path), table, level=level, causes=load_causes(causes_path))
    frame = claims_table(verdicts, level=level)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(out, index=False, float_format="%.6g")
    return frame
