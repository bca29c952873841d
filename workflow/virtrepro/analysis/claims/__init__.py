"""Verdicts on the papers' comparison claims (``data/reference/claims.yaml``) from our runs.

:func:`load_claims` reads the claims, :func:`evaluate` checks each one against the tidy table
of a testbed (:func:`virtrepro.results.load`) and returns one row per claim. The format of a
claim and the meaning of every kind are in ``data/reference/README.md``; in short:

* **Relative difference** of a platform P against a baseline B, signed so that positive means
  P is worse: ``(P - B) / B`` for lower-is-better metrics, ``(B - P) / B`` for higher-is-better
  ones (each metric's declaration in :mod:`virtrepro.metric_catalog` says which; an undeclared
  metric is an error). It is
  ``1 - R`` or ``R - 1`` for the ratio ``R = P / B`` under a scale shift (P's runs are B's times R),
  estimated by Hodges-Lehmann on log values. No method is chosen by a test on the same data
  (Shapiro-Wilk decides nothing): a plain metric per variant has the exact Mann-Whitney interval
  (:func:`stats.hl_ratio_ci`, its achieved confidence in the note, e.g. 96.8 % at 5 + 5); a
  derived metric (a ratio of ratios) or an ``aggregate: mean`` claim, which is about the
  **geometric mean** of the per-variant ratios (never an arithmetic mean of ratios), the
  bootstrap of the Hodges-Lehmann shifts (:func:`stats.shift_bootstrap_ci`, coverage shown by
  simulation from 5 values a sample), each row's resamples seeded on their own
  (``stats.seed_for(seed, variant)``). Values printed at a coarse resolution widen the interval by
  their rounding. ``ci_method`` says which ran. Where no interval exists at the n (3 + 3 at 95 %),
  the claim is ``inconclusive (too few repetitions)``.
* **Derived metrics.** ``parallel_speedup``: NPB time at the smallest common thread or process
  count divided by the time at the largest. ``isolation_efficiency`` (thesis chapter 6): the
  ``isolation`` victim's ``victim_metric`` (higher is better) beside a stressing neighbour
  divided by the same alone; 1 is perfect isolation. Both are ratios, so P / B is a
  ratio of ratios.
* **Verdict per comparison** from p-values of the ratio's own inference at the threshold t (each
  compared with alpha = 1 - level; "two-sided" p-values are twice the one-sided, so the decision is
  the printed interval [lo, hi] against t):

  ====================  ==============================  ================================
  kind                  holds when                      does not hold when
  ====================  ==============================  ================================
  ``overhead_at_most``  hi <= t                         lo > t
  ``overhead_at_least`` lo >= t                         hi < t
  ``better``            hi < -t                         lo >= -t
  ``equivalent``        TOST: 1 - 2 alpha interval      [lo, hi] outside [-t, t]
                        inside (-t, t)
  ``order``             each platform ``better`` (t = 0) than the next
  ``trend``             slope interval on the claimed   on the other side
                        side of 0 (:func:`_trend_rows`)
  ``spread``            Brown-Forsythe difference on    on the other side
                        the claimed side of 0
  ``saturation``        both bounds of the saturation   both outside, on one side
                        size inside ``between``
  ====================  ==============================  ================================

  ``ratio_of_overheads`` (one platform's overhead on the check's selection against its overhead on
  ``versus``, :func:`_ratio_of_overheads_rows`) holds when the quotient's interval lies above 1 + t
  and does not hold when it lies below; ``better_in_some`` ("in several cases",
  :func:`_better_in_some_rows`) holds when some variant is ``better`` (Holm over the variants) and
  does not hold when every variant is shown not to be.

* **Verdict per claim** (one Holm family: the claim's comparisons, i.e. its variants, and for
  ``order`` its adjacent pairs times variants): ``holds`` when every comparison holds at alpha (an
  intersection-union test: no correction is needed to conclude that all hold); ``does not hold``
  when some comparison's "does not hold" p-value, Holm-adjusted across the claim's comparisons, is
  below alpha (a counterexample with the family-wise error controlled); otherwise
  ``inconclusive`` (an interval straddles the threshold, or there is no interval: a value of 0;
  too few values for any interval is ``inconclusive (too few repetitions)``). A decided claim whose
  deciding comparisons, re-estimated within each part of the run order, lie on opposite sides of
  the threshold is ``not comparable here`` (drift between parts: platform and time are confounded,
  :func:`_part_consistency`), as is one measured in a cache where the paper measured a disk or
  memory (:func:`_regime_gate`). ``not measured`` when
  the benchmark, metric, platform or selected variant has no runs on the testbed (the note says
  which), ``not testable here`` for claims marked ``testable: false`` (with their reason). The row
  shows the strongest counterexample, or else the worst comparison.
* **Variants.** ``where`` selects records: each key matches the parameter ``<key>`` (the
  ``param_<key>`` column of :func:`virtrepro.results.view`) or the record label ``<key>``, compared as text; a list means each of its values. Every parameter
  ``where`` leaves open is a variant dimension, as is a record label that varies within one raw
  log (e.g. iozone's ``file_size_kb``: one log holds every file size). The platform and the
  baseline are paired on the dimensions whose values they share; a dimension whose values
  differ entirely between the two (the VM's ``disk=qcow2`` against the host's ``disk=host``)
  is the platform's own set-up, and each of the platform's values is compared with the whole
  baseline. Without ``aggregate`` a claim is about each paired variant (decided as above); with
  ``aggregate: mean`` it is about the geometric mean of the per-variant ratios. A ``where`` list value with no paired runs keeps a claim that holds
  elsewhere at ``inconclusive`` (a counterexample still makes it ``does not hold``).
* **Conditions and analogues** (:mod:`virtrepro.conditions`). Records outside a claim's
  ``conditions`` are left out; with none left on a side (or too few process counts for a
  scalability claim) it is ``not comparable here``. A platform of another kind stands in only as
  the analogue table allows (``data/reference/analogues.yaml``): ``not comparable here`` where it
  may not, ``not informative (analogue's bias)`` where its bias favours the verdict.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd

from ... import conditions, datalayout, metric_catalog, platform_names, regimes, results, yamlfile
from ...errors import VirtreproError
from ...platforms import catalog as platform_catalog
from .. import stats

KINDS = ("overhead_at_most", "overhead_at_least", "equivalent", "better", "order", "trend", "spread", "saturation",
         "ratio_of_overheads", "better_in_some")
# the kinds about one platform's variants or its scatter, not a relative difference of means
SHAPE_KINDS = {"trend": ("worsens", "improves", "flat"), "spread": ("larger", "smaller"), "saturation": None}
# A verdict from a stand-in that is only an analogue of the paper's platform says so (platform_names),
# and one whose records are a guest faster than native without a recorded cause is not a verdict.
ANALOGUE_SUFFIX = " (analogue)"
UNEXPLAINED_FASTER = "inconclusive (guest faster than native: unexplained)"
# a claim left undecided because a comparison has no interval at its n (3 + 3 at 95 %) is TOO_FEW; a
# trend or spread (normal-theory methods) with fewer than MIN_REPETITIONS repetitions a side too
# (issue 16: at n = 3 a nominal 95 % t interval covers about 80 % of the time)
MIN_REPETITIONS = 5
TOO_FEW = "inconclusive (too few repetitions)"
# Every verdict, in the order of the counts. A claim tested outside its conditions, on data measured
# in a cache (_regime_gate) or on parts of the run order that decide opposite ways (_part_consistency)
# is conditions.NOT_COMPARABLE; one whose analogue's bias could produce it conditions.NOT_INFORMATIVE.
VERDICTS = ("holds", "does not hold", "holds" + ANALOGUE_SUFFIX, "does not hold" + ANALOGUE_SUFFIX, "inconclusive",
            TOO_FEW, UNEXPLAINED_FASTER, conditions.NOT_INFORMATIVE, conditions.NOT_COMPARABLE, "not measured",
            "not testable here")  # fmt: skip


def higher_is_better(metric: str, unit: str | None = None, benchmark: str | None = None) -> bool:
    """Whether a larger value of ``metric`` is better: its declaration in
    :mod:`virtrepro.metric_catalog` (of ``benchmark`` when given; without it every benchmark's
    metric of that name must agree). ``unit`` is not needed (the papers give the same metric in
    other units, or as a percentage). Raises ``ValueError`` (``UnknownMetric``) for a metric no
    benchmark declares or one with no better direction: a direction is never guessed.
    """
    return metric_catalog.higher_is_better(metric, benchmark)


# The parameter a derived parallel speed-up scales over (time at its smallest value / time at its largest).
SCALING_PARAMETER = {"npb_omp": "threads", "npb_mpi": "procs", "npb_serial": "threads"}
# A derived isolation efficiency: the victim's value with a stressing neighbour / alone.
ISOLATION_PARAMETER, ISOLATION_ALONE, ISOLATION_STRESSED = "neighbour", "none", "stress"
DERIVED_METRICS = ("parallel_speedup", "isolation_efficiency")

COLUMNS = [
    "id", "paper", "source", "kind", "benchmark", "metric", "published", "platforms", "threshold",
    "value", "ci_low", "ci_high", "ci_method", "n_platform", "n_baseline", "variant", "verdict", "note",
    "paper_platform", "stand_in", "suspect_faster_than_native",
]  # fmt: skip


class ClaimsError(VirtreproError, ValueError):
    """A claims file (``claims.yaml``) or the causes' registry (``faster_than_native.yaml``) that does not
    say what evaluation needs: the message names the file, the claim (or entry) and the key."""


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)  # true is no number


# what each key of a claim, of its check and of a cause's entry holds (data/reference/README.md), by
# the words that say so (None: checked by its own module, conditions.check_conditions); a key not listed is
# refused (a misspelt ``treshold`` would otherwise be ignored)
VALUE_FORMS = {
    "text": lambda v: isinstance(v, str),
    "true or false": lambda v: isinstance(v, bool),
    "a mapping": lambda v: isinstance(v, dict),
    "a number": _number,
    "a list of names": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    "[low, high]": lambda v: isinstance(v, list) and len(v) == 2 and all(map(_number, v)) and v[0] <= v[1],
}
CLAIM_KEYS = {"id": "text", "paper": "text", "source": "text", "quote": "text", "published": "text",
              "paper_platform": ("text", "a list of names"), "testable": "true or false", "note": "text",
              "reason": "text", "conditions": None, "check": "a mapping"}  # fmt: skip
CHECK_KEYS = {"kind": "text", "benchmark": "text", "metric": "text", "where": "a mapping", "platform": "text",
              "baseline": "text", "platforms": "a list of names", "threshold": "a number", "aggregate": "text",
              "over": "text", "direction": "text", "derived": "text", "between": "[low, high]", "gain": "a number",
              "victim_metric": "text", "versus": "a mapping"}  # fmt: skip
CAUSE_KEYS = {"platform": "text", "benchmark": "text", "metric": ("text", "a list of names"), "where": "a mapping",
              "cause": "text", "confounded": "true or false"}  # fmt: skip


def _check_keys(given: dict, allowed: dict, prefix: str = "") -> None:
    """ValueError ``<key>: ...`` for a key not in ``allowed`` or a value of another form (an empty
    value is left to the check that needs it)."""
    for key, value in given.items():
        if key not in allowed:
            raise ValueError(f"{prefix}{key}: unknown key (known: {', '.join(allowed)})")
        forms = allowed[key] if isinstance(allowed[key], tuple) else (allowed[key],)
        if value is not None and allowed[key] is not None and not any(VALUE_FORMS[form](value) for form in forms):
            raise ValueError(f"{prefix}{key}: {' or '.join(forms)}, not {value!r}")


def _check_claim(claim: dict) -> None:
    """One claim's keys and its check, as evaluation needs them; ValueError ``<key>: what is wrong``."""
    _check_keys(claim, CLAIM_KEYS)
    missing = [key for key in ("paper", "testable") if claim.get(key) is None]
    if missing:
        raise ValueError(f"{', '.join(missing)}: missing")
    if claim["testable"]:
        if claim.get("check") is None:
            raise ValueError("check: missing (a testable claim needs one)")
        check = claim["check"]
        _check_keys(check, CHECK_KEYS, "check.")
        kind = check.get("kind")
        if kind not in KINDS:
            raise ValueError(f"check.kind: unknown check kind {kind!r} (one of {', '.join(KINDS)})")
        needed = ["benchmark", "metric"] + (["platforms"] if kind == "order" else ["platform"])
        needed += {"trend": ["over", "direction"], "spread": ["baseline", "direction"],
                   "saturation": ["over", "between", "gain"]}.get(kind, [] if kind == "order" else ["baseline"])  # fmt: skip
        if kind not in ("order", "equivalent", *SHAPE_KINDS) or check.get("direction") == "flat":
            needed.append("threshold")
        if check.get("metric") == "isolation_efficiency":
            needed.append("victim_metric")
        if kind == "ratio_of_overheads":
            needed.append("versus")
        missing = [k for k in needed if check.get(k) is None]
        if missing:
            raise ValueError(f"check: check lacks {', '.join(missing)} (a {kind} check needs them)")
        if SHAPE_KINDS.get(kind) and check["direction"] not in SHAPE_KINDS[kind]:
            raise ValueError(f"check.direction: {kind} direction is one of {', '.join(SHAPE_KINDS[kind])}, "
                             f"not {check['direction']!r}")
        if kind == "order" and len(check["platforms"]) < 2:
            raise ValueError(f"check.platforms: two or more platforms to order, not {check['platforms']!r}")
        if check.get("aggregate") not in (None, "mean"):
            raise ValueError(f"check.aggregate: only 'mean' (or none: each variant), not {check['aggregate']!r}")
    elif not claim.get("reason"):
        raise ValueError("reason: an untestable claim needs a reason")
    _check_paper_platforms(claim)
    conditions.check_conditions(claim)


def load_claims(path: str | Path) -> list[dict]:
    """The claims of ``claims.yaml``, checked for the fields evaluation needs: a ClaimsError (or a
    :class:`~virtrepro.yamlfile.YamlFileError` for broken YAML or a key given twice) names the file,
    the claim and the key."""
    claims = yamlfile.load(path)
    if not isinstance(claims, list):
        raise ClaimsError(f"{path}: expected a list of claims, not {type(claims).__name__}")
    seen: dict[str, int] = {}
    for number, claim in enumerate(claims, 1):
        ident = claim.get("id") if isinstance(claim, dict) else None
        if not isinstance(ident, str) or not ident:
            raise ClaimsError(f"{path}: claim {number} of the list: no id (a mapping with an id: text), in {claim!r}")
        if ident in seen:
            raise ClaimsError(f"{path}: claim {ident!r}: id repeated (claims {seen[ident]} and {number} of the list)")
        seen[ident] = number
        try:
            _check_claim(claim)
        except ValueError as error:  # the conditions' own check names the claim too
            raise ClaimsError(f"{path}: claim {ident!r}: {str(error).removeprefix(f'{ident}: ')}") from None
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


def resolve_platform(name: str, table: pd.DataFrame, paper_platform: str | None = None,
                     subsystem: str | None = None) -> str:  # fmt: skip
    """``qemu`` is whichever QEMU the table has that may stand for ``paper_platform`` (by default the
    alias' own, KVM) on ``subsystem``: qemu-kvm, else an analogue the analogue table allows there
    (:mod:`virtrepro.platform_names`); a platform that is the paper platform's own (qemu-kvm for KVM)
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
    fixed = {"testbed", "platform", "benchmark", "variant", "repetition", "metric", "unit", "value", "source_log"}
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
    as the side's samples (:func:`_part_consistency`)."""

    def __init__(self, label: str, plat: dict, base: dict, parts: tuple[dict, dict] | None = None):
        self.label, self.plat, self.base, self.parts = label, plat, base, parts


def _part_of(rows: pd.DataFrame) -> np.ndarray:
    """The part (1, 2) of each record, NaN where the table does not say."""
    if "part" not in rows.columns:
        return np.full(len(rows), np.nan)
    return pd.to_numeric(rows["part"], errors="coerce").to_numpy(float, na_value=np.nan)


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
                               ({"value": _part_of(prows)}, {"value": _part_of(brows)})))
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

        def side(rows, of=lambda r: r["value"].to_numpy(float)):
            values = _column_text(rows, scaling_col)
            return {"num": of(rows.loc[values == num]), "den": of(rows.loc[values == den])}

        out.append(_Pair(f"{label + ', ' if label else ''}{text}", side(plat), side(base),
                         (side(plat, _part_of), side(base, _part_of))))
    return out, problems


def _number(text: str):
    try:
        return (0, float(text))
    except ValueError:
        return (1, text)


# ---------------------------------------------------------------------------
# Relative differences, their intervals and the per-claim decision
# ---------------------------------------------------------------------------


def _shifts(pair: _Pair, power: float = 1.0) -> list:
    """The ratio platform / baseline of one pair as :func:`stats.shift_bootstrap_ci` pairs: one shift
    for a plain metric, two for a derived one (a ratio of ratios: (P_num / P_den) / (B_num / B_den))."""
    if "value" in pair.plat:
        return [(pair.plat["value"], pair.base["value"], power)]
    return [(pair.plat["num"], pair.plat["den"], power), (pair.base["num"], pair.base["den"], -power)]


def _n(side: dict) -> int:
    return int(sum(len(v) for v in side.values()))


def _to_relative(ratio: float, hib: bool) -> float:
    """Relative difference (positive = worse) of a ratio platform / baseline."""
    return 1.0 - ratio if hib else ratio - 1.0


def _relative_ci(pairs: list[_Pair], hib: bool, level: float, aggregate: bool, seed: int) -> list[dict]:
    """Relative difference (positive = worse), its interval and the ratio's inference per pair, or
    one row for their geometric mean (``aggregate``).

    No method is chosen by a test on the same data: a plain metric per variant is the Hodges-Lehmann
    ratio with the exact Mann-Whitney interval (:func:`stats.hl_ratio_ci`, its achieved confidence in
    the note); a derived metric (a ratio of ratios) or a geometric mean over variants the bootstrap of
    the Hodges-Lehmann shifts (:func:`stats.shift_bootstrap_ci`), each row's resamples seeded on their
    own (``stats.seed_for(seed, label)``). ``too_few``: no interval exists at the row's n.
    """
    groups = [pairs] if aggregate else [[p] for p in pairs]
    rows = []
    for group in groups:
        label = group[0].label if not aggregate else f"geometric mean over {len(group)} variants"
        shifts = [s for p in group for s in _shifts(p, 1.0 / len(group))]
        if len(shifts) == 1:
            ci = stats.hl_ratio_ci(shifts[0][0], shifts[0][1], level)
        else:
            ci = stats.shift_bootstrap_ci(shifts, level, seed=stats.seed_for(seed, label))
        low, high = sorted((_to_relative(ci.low, hib), _to_relative(ci.high, hib)))
        rows.append({"label": label, "value": _to_relative(ci.estimate, hib), "ci_low": low, "ci_high": high,
                     "n_platform": sum(_n(p.plat) for p in group), "n_baseline": sum(_n(p.base) for p in group),
                     "ci": ci, "ci_method": ci.method, "ci_note": ci.note, "too_few": ci.too_few,
                     "by_part": lambda group=group: _part_values(group, hib)})  # fmt: skip
    return rows


def _in_part(pair: _Pair, part: int) -> _Pair | None:
    """``pair`` restricted to the records of one part of the run order on both sides; None when a
    sample has fewer than 2 values there (or the pair does not know its parts)."""
    if pair.parts is None:
        return None
    sides = []
    for side, parts in zip((pair.plat, pair.base), pair.parts):
        kept = {key: values[parts[key] == part] for key, values in side.items()}
        if any(len(values) < 2 for values in kept.values()):
            return None
        sides.append(kept)
    return _Pair(pair.label, *sides)


def _parts_in(frames) -> list[int]:
    """The parts of the run order (1, 2) that records of ``frames`` (tables or :class:`_Pair` part arrays) name."""
    found = set()
    for frame in frames:
        found |= {int(v) for v in (_part_of(frame) if isinstance(frame, pd.DataFrame) else frame) if v == v}
    return sorted(found)


def _part_ratios(weighted: list[tuple[_Pair, float]]) -> dict[int, float]:
    """The point estimate of :func:`stats.hl_ratio_estimate` over the shifts of ``weighted`` (pair,
    power) restricted to each part of the run order on its own, on both sides. A part in which a
    sample of some pair has fewer than 2 values is left out."""
    found = _parts_in(values for pair, _ in weighted if pair.parts for side in pair.parts for values in side.values())
    out = {}
    for part in found:
        kept = [(_in_part(pair, part), power) for pair, power in weighted]
        if all(k is not None for k, _ in kept):
            estimate = stats.hl_ratio_estimate([t for k, power in kept for t in _shifts(k, power)])
            if estimate == estimate:
                out[part] = estimate
    return out


def _part_values(pairs: list[_Pair], hib: bool) -> dict[int, float]:
    """The relative difference of a :func:`_relative_ci` row (its ``pairs``, one or the aggregate's
    variants) estimated within each part of the run order on its own (:func:`_part_ratios`)."""
    return {part: _to_relative(r, hib) for part, r in _part_ratios([(p, 1.0 / len(pairs)) for p in pairs]).items()}


def _by_part_of_frames(sides: list[pd.DataFrame], estimate) -> dict[int, float]:
    """``estimate`` (a function of the sides' records) on the records of each part of the run order
    on its own; a part where it fails or gives NaN is left out."""
    out = {}
    for part in _parts_in(sides):
        kept = [side[_part_of(side) == part] for side in sides]
        try:
            value = estimate(kept)
        except (ValueError, KeyError, ZeroDivisionError, np.linalg.LinAlgError, StopIteration):
            continue
        if value == value:
            out[part] = value
    return out


def _p_relative(row: dict, hib: bool, threshold: float, alternative: str) -> float:
    """One-sided p-value against "relative difference <= threshold" (``greater``) or ">= threshold"
    (``less``), from the ratio's inference: relative = 1 - R (higher is better) or R - 1."""
    ci = row["ci"]
    if hib:  # relative > t  <=>  R < 1 - t
        return ci.p_value(1.0 - threshold, "less" if alternative == "greater" else "greater")
    return ci.p_value(1.0 + threshold, alternative)


def _p_hold_fail(kind: str, row: dict, hib: bool, threshold: float) -> tuple[float, float]:
    """p-values for "the claim holds in this comparison" and "it does not hold", each to be
    compared with alpha: two one-sided p-values doubled (so the decision is the two-sided interval's
    bound against the threshold, as printed), and for ``equivalent`` the TOST p (the larger of the
    two one-sided p-values at +-threshold, i.e. the 1 - 2 alpha interval inside the margin)."""
    def two(p):
        return min(1.0, 2.0 * p)

    if kind == "overhead_at_most":
        return two(_p_relative(row, hib, threshold, "less")), two(_p_relative(row, hib, threshold, "greater"))
    if kind == "overhead_at_least":
        return two(_p_relative(row, hib, threshold, "greater")), two(_p_relative(row, hib, threshold, "less"))
    if kind == "better":
        return two(_p_relative(row, hib, -threshold, "less")), two(_p_relative(row, hib, -threshold, "greater"))
    if kind == "equivalent":
        above, below = _p_relative(row, hib, threshold, "greater"), _p_relative(row, hib, -threshold, "less")
        tost = max(_p_relative(row, hib, threshold, "less"), _p_relative(row, hib, -threshold, "greater"))
        return tost, two(min(above, below))
    raise ValueError(f"unknown kind {kind!r}")


def _decide(rows: list[dict], alpha: float) -> str:
    """The claim's verdict over its comparisons (one family), setting each row's ``verdict``.

    * ``holds`` when every comparison holds at ``alpha`` (an intersection-union test: the claim is
      the conjunction of its comparisons, so each is tested at alpha with no correction and the
      claim's error stays at most alpha);
    * ``does not hold`` when at least one comparison's "does not hold" p-value, Holm-adjusted
      across the claim's comparisons (:func:`stats.holm`; comparisons without a test are left out),
      is below ``alpha``: a counterexample is shown with the family-wise error controlled;
    * ``inconclusive`` otherwise.
    """
    fail = stats.holm([r["p_fail"] for r in rows])
    for row, p in zip(rows, fail):
        row["holm_p_fail"] = float(p)
        row["verdict"] = "holds" if row["p_hold"] < alpha else "does not hold" if p < alpha else "inconclusive"
    if any(r["verdict"] == "does not hold" for r in rows):
        return "does not hold"
    if all(r["verdict"] == "holds" for r in rows):
        return "holds"
    return "inconclusive"


def _too_few(verdict: str, rows: list[dict], kind: str, fewest: int, level: float) -> tuple[str, str | None]:
    """:data:`TOO_FEW`, with the reason, for a claim left undecided because a comparison has no interval
    at its n (3 + 3 at 95 %: :func:`stats.hl_ratio_ci`); the shape kinds (normal-theory slopes and
    spreads) also below :data:`MIN_REPETITIONS` repetitions a side."""
    small = [r for r in rows if r.get("too_few")]
    if verdict == "inconclusive" and small:
        where = f" in {len(small)} of {len(rows)} comparisons ({small[0]['label']}: {small[0]['ci_note']})" if len(rows) > 1 else ""
        return TOO_FEW, f"too few repetitions for a {level:.0%} interval{where}"
    if kind in SHAPE_KINDS and fewest < MIN_REPETITIONS and verdict in ("holds", "does not hold", "inconclusive"):
        return TOO_FEW, f"{fewest} repetitions on a side, fewer than {MIN_REPETITIONS}"
    return verdict, None


def _holding_side(kind: str, value: float, threshold: float) -> bool:
    """Whether a relative difference (positive = worse) lies where a comparison of ``kind`` holds."""
    if kind == "overhead_at_most":
        return value <= threshold
    if kind == "overhead_at_least":
        return value >= threshold
    if kind == "equivalent":
        return abs(value) <= threshold
    if kind == "between":  # a saturation size inside the claim's sizes
        return threshold[0] <= value <= threshold[1]
    return value <= -threshold  # better (an order: better with threshold 0)


def _part_consistency(verdict: str, rows: list[dict]) -> tuple[str, str | None]:
    """``not comparable here`` (conditions.NOT_COMPARABLE: platform and time are confounded), with the
    per-part estimates, for a decided claim whose deciding comparisons do
    not decide the same way in each part of the run order (the records' ``part``: A B C D D C B A
    measures every platform in two parts, and a platform's values can drift between them).

    Each comparison that decides the verdict (every one for ``holds``; those that do not hold for
    ``does not hold``) is re-estimated within each part on its own (:func:`_part_values`); it drifts
    when the parts' point estimates lie on opposite sides of its threshold (0 for an order). ``holds``
    is not comparable when any deciding comparison drifts, ``does not hold`` when every
    counterexample does (one that stays makes the claim fail by itself). Only the estimates' sides
    are looked at, and only to refuse a decision, never to make one. Every kind is re-estimated: a
    relative difference, a ratio of overheads, a trend's slope, a spread difference and a saturation
    size (its part's size inside or outside the claim's sizes); comparisons without per-part records
    (a table without ``part``) and undecided verdicts are left as they are."""
    if verdict not in ("holds", "does not hold"):
        return verdict, None
    deciding = [r for r in rows if r.get("verdict") == verdict]
    drifting = []
    for row in deciding:
        if "by_part" not in row or "test" not in row:
            continue
        kind, threshold = row["test"]
        values = row["by_part"]()
        if len({_holding_side(kind, v, threshold) for v in values.values()}) > 1:
            drifting.append((row, kind, threshold, values))
    if not drifting or (verdict == "does not hold" and len(drifting) < len(deciding)):
        return verdict, None
    row, kind, threshold, values = drifting[0]
    if kind == "between":  # a saturation size, not a relative difference
        shown = ", ".join(f"part {part} {_text(value)}" for part, value in sorted(values.items()))
        pooled, side = _text(row["value"]), f"inside and outside {_text(threshold[0])}..{_text(threshold[1])}"
    else:
        bound = (-threshold if kind in ("better", "order") else threshold) + 0.0  # no "-0.0"
        shown = ", ".join(f"part {part} {_percent(value)}" for part, value in sorted(values.items()))
        pooled, side = _percent(row["value"]), f"on opposite sides of {_percent(bound)}"
    where = f" ({row['label']})" if row["label"] else ""
    more = f" and {len(drifting) - 1} more comparison{'s' if len(drifting) > 2 else ''}" if len(drifting) > 1 else ""
    return conditions.NOT_COMPARABLE, (f"drift between parts{where}{more}: '{verdict}' pooled ({pooled}), but within each "
                                       f"part of the run order the estimate lies {side}: {shown}")


def _badness(kind: str, value: float) -> float:
    if math.isnan(value):
        return math.inf
    if kind == "overhead_at_least":
        return -value
    if kind == "equivalent":
        return abs(value)
    return value  # at_most, better, order: a larger overhead is worse


_SEVERITY = {"holds": 0, "inconclusive": 1, "does not hold": 2}


def _shown(verdict: str, kind: str, rows: list[dict]) -> dict:
    """The comparison the row shows: the strongest counterexample (smallest Holm-adjusted p), else
    the worst of the rest (inconclusive before holding, then the largest badness of the value)."""
    if verdict == "does not hold":
        return min(rows, key=lambda r: r["holm_p_fail"])
    return max(rows, key=lambda r: (_SEVERITY[r["verdict"]], _badness(kind, r["value"])))


def _compare(table, check, plat_name, base_name, kind, threshold, level, seed):
    """Rows (one per variant, or one aggregate) comparing two platforms, with their p-values."""
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
    hib = higher_is_better(check["metric"], unit, check["benchmark"])
    rows = _relative_ci(pairs, hib, level, check.get("aggregate") == "mean", seed)
    for row in rows:
        row["p_hold"], row["p_fail"] = _p_hold_fail(kind, row, hib, threshold)
        row["test"] = (kind, threshold)
    # values a where list asked for that were not run on both sides
    missing = []
    for key, value in where.items():
        if isinstance(value, list):
            have = set(_column_text(plat, f"param_{key}")) | set(_column_text(plat, key))
            have &= set(_column_text(base, f"param_{key}")) | set(_column_text(base, key))
            missing += [f"{key}={_text(v)}" for v in value if _text(v) not in have]
    return rows, missing + [f"only on {plat_name}: {u}" for u in unpaired] + problems


# ---------------------------------------------------------------------------
# Trends, spreads and saturation points (the kinds about the shape of the data)
# ---------------------------------------------------------------------------


def _over_column(frame: pd.DataFrame, over: str) -> str:
    return f"param_{over}" if f"param_{over}" in frame.columns else over


def _cells(rows: pd.DataFrame, dims: list[str], over_col: str) -> dict:
    """``{(variant key, parameter value as text): sample}``."""
    keys = list(zip(*[_column_text(rows, d) for d in dims])) if dims else [()] * len(rows)
    out: dict = {}
    for key, step, value in zip(keys, _column_text(rows, over_col), rows["value"].to_numpy(float)):
        out.setdefault((key, step), []).append(value)
    return {k: np.asarray(v) for k, v in out.items()}


def _variant_label(dims: list[str], key: tuple) -> str:
    return ", ".join(f"{_dim_name(d)}={v}" for d, v in zip(dims, key) if v)


def _shape_sides(table: pd.DataFrame, check: dict, names: list[str]):
    """Each named platform's records, the variant dimensions without ``over`` and ``over``'s column."""
    sides = [_records(table, check, name) for name in names]
    over_col = _over_column(sides[0], check["over"]) if check.get("over") else None
    dims = [d for d in _dimensions(sides, check.get("where") or {}, set()) if d != over_col]
    return sides, dims, over_col


def _two_sided(p: float) -> float:
    return min(1.0, 2.0 * p) if p == p else p


def _trend_rows(table: pd.DataFrame, check: dict, names: list[str], level: float) -> tuple[list[dict], list[str]]:
    """``trend``: the slope of log(value) (with a baseline: of log(platform / baseline)) over the
    steps of ``over`` in their order (:func:`stats.log_slope`), per variant or pooled across variants
    (``aggregate: mean``); shown as the change per step in the worse direction (positive = worsens).
    ``direction: flat`` with a ``threshold`` t: the slope stays within +-log(1 + t) a step (holds when
    its interval lies inside, does not hold when it lies beyond one bound)."""
    sides, dims, over_col = _shape_sides(table, check, names)
    cells = [_cells(side, dims, over_col) for side in sides]
    steps = set.intersection(*[{s for _, s in c} for c in cells])
    steps = sorted(steps, key=_number)
    if len(steps) < 2:
        raise NotMeasured(f"no second {check['over']} value run on {' and '.join(names)} (a trend needs two or more)")
    index = {s: i for i, s in enumerate(steps)}
    stepped = [_stepped(c, index) for c in cells]
    variants = sorted({k for k, _ in stepped[0]})
    groups = [variants] if check.get("aggregate") == "mean" else [[v] for v in variants]
    sign = -1.0 if higher_is_better(check["metric"], sides[0]["unit"].iloc[0], check["benchmark"]) else 1.0
    worsens = check["direction"] == "worsens"
    # flat: the change per step stays within +-threshold (log bound b), i.e. the interval inside (-b, b)
    bound = math.log1p(float(check["threshold"])) if check["direction"] == "flat" else None
    rows = []
    test = {"worsens": ("overhead_at_least", 0.0), "improves": ("better", 0.0)}.get(check["direction"])
    for group in groups:
        pick = [_picked(side, group) for side in stepped]
        est = stats.log_slope(pick[0], pick[1] if len(pick) > 1 else None, level)
        p_worse = est.p_value(0.0, "greater" if sign > 0 else "less")
        p_better = est.p_value(0.0, "less" if sign > 0 else "greater")
        p_hold, p_fail = (p_worse, p_better) if worsens else (p_better, p_worse)
        if bound is not None:  # inside both bounds (holds), or beyond one of them (does not hold)
            p_hold = max(est.p_value(-bound, "greater"), est.p_value(bound, "less"))
            p_fail = min(est.p_value(bound, "greater"), est.p_value(-bound, "less"))
        ends = sorted(math.expm1(sign * b) for b in (est.low, est.high))
        label = (f"geometric mean over {len(group)} variants" if len(groups) == 1 and len(group) > 1
                 else _variant_label(dims, group[0]))  # fmt: skip
        label = (label + ", " if label else "") + f"{check['over']} {steps[0]}..{steps[-1]} ({len(steps)} steps)"
        rows.append({"label": label, "value": math.expm1(sign * est.estimate), "ci_low": ends[0], "ci_high": ends[1],
                     "n_platform": sum(len(v) for v in pick[0].values()),
                     "n_baseline": sum(len(v) for v in pick[1].values()) if len(pick) > 1 else 0,
                     "ci_method": "ols-log", "ci_note": "" if est.tested else est.note,
                     "p_hold": _two_sided(p_hold), "p_fail": _two_sided(p_fail),
                     "test": test or ("equivalent", float(check["threshold"])),
                     "by_part": lambda group=group: _by_part_of_frames(sides, lambda kept: math.expm1(sign * stats.log_slope(
                         *([_picked(_stepped(_cells(k, dims, over_col), index), group) for k in kept] + [None])[:2],
                         level).estimate))})  # fmt: skip
    return rows, []


def _stepped(cells: dict, index: dict) -> dict:
    """``cells`` keyed by (variant, step number) for the steps of ``index``."""
    return {(k, index[s]): v for (k, s), v in cells.items() if s in index}


def _picked(stepped: dict, group: list) -> dict:
    return {c: v for c, v in stepped.items() if c[0] in group}


def _spread_rows(table: pd.DataFrame, check: dict, names: list[str], level: float) -> tuple[list[dict], list[str]]:
    """``spread``: the platform's relative scatter against the baseline's (Brown-Forsythe,
    :func:`stats.spread_difference`), per paired variant or pooled (``aggregate: mean``)."""
    sides, dims, _ = _shape_sides(table, check, names)
    keyed = [_keyed(side, dims) for side in sides]
    variants = sorted(set(keyed[0]) & set(keyed[1]))
    if not variants:
        raise NotMeasured(f"no {check['benchmark']} variant run on both {names[0]} and {names[1]}")
    groups = [variants] if check.get("aggregate") == "mean" else [[v] for v in variants]
    larger = check["direction"] == "larger"
    rows = []
    for group in groups:
        est = stats.spread_difference([keyed[0][v] for v in group], [keyed[1][v] for v in group], level)
        p_up, p_down = est.p_value(0.0, "greater"), est.p_value(0.0, "less")
        label = f"pooled over {len(group)} variants" if len(group) > 1 else _variant_label(dims, group[0])
        rows.append({"label": label, "value": est.estimate, "ci_low": est.low, "ci_high": est.high,
                     "n_platform": sum(len(keyed[0][v]) for v in group), "n_baseline": sum(len(keyed[1][v]) for v in group),
                     "ci_method": "brown-forsythe", "ci_note": "" if est.tested else est.note,
                     "p_hold": _two_sided(p_up if larger else p_down), "p_fail": _two_sided(p_down if larger else p_up),
                     "test": ("overhead_at_least" if larger else "better", 0.0),
                     "by_part": lambda group=group: _by_part_of_frames(sides, lambda kept: stats.spread_difference(
                         *[[_keyed(k, dims)[v] for v in group] for k in kept], level).estimate)})  # fmt: skip
    return rows, []


def _keyed(side: pd.DataFrame, dims: list[str]) -> dict:
    """``{variant key: values}`` of one side's records."""
    keys = list(zip(*[_column_text(side, d) for d in dims])) if dims else [()] * len(side)
    groups: dict = {}
    for key, value in zip(keys, side["value"].to_numpy(float)):
        groups.setdefault(key, []).append(value)
    return groups


def saturation_bounds(samples: list, gain: float, level: float = 0.95) -> dict:
    """Where a throughput stops growing, from samples at increasing sizes ``s_0 < ... < s_k``.

    The saturation point is the first size from which every further step gains less than ``gain``
    (``R_i - 1 < gain``, ``R_i`` the Hodges-Lehmann ratio of s_i+1 to s_i). Each step's ratio has the
    exact Mann-Whitney interval (:func:`stats.hl_ratio_ci`); ``latest`` is the first index from which every step gains
    significantly less than ``gain`` (each at alpha: an intersection-union test), ``earliest`` the index
    after the last step that gains significantly more (Holm across the steps), ``estimate`` the point
    estimate's index. ``latest`` is ``k`` (the largest size) when the last step is not shown flat.
    """
    alpha = 1.0 - level
    cis = [stats.hl_ratio_ci(b, a, level) for a, b in zip(samples, samples[1:])]
    grows = stats.holm([_two_sided(ci.p_value(1.0 + gain, "greater")) for ci in cis])
    flat = [_two_sided(ci.p_value(1.0 + gain, "less")) for ci in cis]
    k = len(samples) - 1
    earliest = max([i + 1 for i, p in enumerate(grows) if p < alpha], default=0)
    latest = next((j for j in range(k + 1) if all(p < alpha for p in flat[j:])), k)
    estimate = next(j for j in range(k + 1) if all(ci.estimate - 1.0 < gain for ci in cis[j:]))
    return {"earliest": earliest, "latest": latest, "estimate": estimate, "gains": [ci.estimate - 1.0 for ci in cis]}


def _saturation_rows(table: pd.DataFrame, check: dict, names: list[str], level: float) -> tuple[list[dict], list[str]]:
    """``saturation``: per variant, the bounds of the saturation point (:func:`saturation_bounds`)
    against the claim's ``between: [low, high]`` sizes: holds when both bounds lie inside, does not
    hold when they lie entirely outside, else inconclusive."""
    (side,), dims, over_col = _shape_sides(table, check, names)
    cells = _cells(side, dims, over_col)
    low, high = (float(v) for v in check["between"])
    rows = []
    for key in sorted({k for k, _ in cells}):
        steps = sorted((s for k, s in cells if k == key), key=_number)
        if len(steps) < 2:
            continue
        sizes = [float(s) for s in steps]
        got = saturation_bounds([cells[(key, s)] for s in steps], float(check["gain"]), level)
        first = sizes[got["earliest"]]
        # not shown flat up to the largest size: it may saturate beyond the sizes run
        last = sizes[got["latest"]] if got["latest"] < len(sizes) - 1 else math.inf
        verdict = "holds" if low <= first and last <= high else "does not hold" if last < low or first > high else "inconclusive"
        gains = ", ".join(f"{a}->{b} {100 * g:+.0f}%" for a, b, g in zip(steps, steps[1:], got["gains"]))
        label = (_variant_label(dims, key) + ", " if _variant_label(dims, key) else "") + f"{check['over']} {steps[0]}..{steps[-1]}"
        def by_part(key=key, steps=steps, sizes=sizes):
            def size(kept):
                part_cells = _cells(kept[0], dims, over_col)
                samples = [part_cells[(key, s)] for s in steps]
                if any(len(x) < 2 for x in samples):
                    raise ValueError("fewer than 2 values at a size")
                return sizes[saturation_bounds(samples, float(check["gain"]), level)["estimate"]]
            return _by_part_of_frames([side], size)

        rows.append({"test": ("between", (low, high)), "by_part": by_part,
                     "label": label, "value": sizes[got["estimate"]], "ci_low": first, "ci_high": last,  # sizes
                     "n_platform": sum(len(cells[(key, s)]) for s in steps), "n_baseline": 0, "ci_method": "hl-moses-steps",
                     "ci_note": f"saturation size {_text(sizes[got['estimate']])} (bounds {_text(first)}..{_text(last)}) "
                                f"against {_text(low)}..{_text(high)}; gains per step: {gains}",
                     "verdict": verdict, "holm_p_fail": 0.0 if verdict == "does not hold" else 1.0})  # fmt: skip
    if not rows:
        raise NotMeasured(f"no second {check['over']} value run on {names[0]} (a saturation needs two or more)")
    return rows, []


def _shape_verdict(kind: str, rows: list[dict], alpha: float) -> str:
    if kind != "saturation":
        return _decide(rows, alpha)
    verdicts = {r["verdict"] for r in rows}
    return "does not hold" if "does not hold" in verdicts else "holds" if verdicts == {"holds"} else "inconclusive"


# ---------------------------------------------------------------------------
# Kinds that compare across a claim's variants: one platform's overheads on two selections, and
# "better in some variant" (each gives one row, decided by _decide like the others)
# ---------------------------------------------------------------------------


def versus_selection(check: dict) -> dict:
    """The second selection of a ``ratio_of_overheads`` check: the check with ``versus``' benchmark,
    metric and ``where`` (``where`` is replaced, not merged; what ``versus`` leaves out is the check's)."""
    other = {k: v for k, v in check.items() if k not in ("where", "versus")}
    other.update(check["versus"])
    return other


def _selection(table, check: dict, plat_name: str, base_name: str) -> tuple[list[_Pair], bool]:
    """The paired variants of one selection (benchmark, metric, ``where``) on the two platforms, and
    whether its metric is higher-is-better."""
    where = check.get("where") or {}
    plat, base = _records(table, check, plat_name), _records(table, check, base_name)
    pairs, _, _ = _pairs(plat, base, _dimensions([plat, base], where, set()), None)
    if not pairs:
        shown = _where_text(where)
        raise NotMeasured(f"no {check['benchmark']} variant{' with ' + shown if shown else ''} run on both {plat_name} and {base_name}")
    return pairs, higher_is_better(check["metric"], None, check["benchmark"])


def _ratio_of_overheads_rows(table, check: dict, names: list[str], level: float, seed: int) -> tuple[list[dict], list[str]]:
    """``ratio_of_overheads``: the platform's overhead on the check's selection against its overhead
    on ``versus``, as the quotient q = W_1 / W_2 of the two "worse-direction" ratios, each the
    geometric mean over its selection's paired variants of platform / baseline (lower-is-better
    metrics) or baseline / platform (higher-is-better ones), so W > 1 is an overhead whatever the
    metric. One interval (:func:`stats.shift_bootstrap_ci` on the Hodges-Lehmann shifts of both
    selections, the two independent: they must not share records). ``value`` is q - 1 (positive: the first overhead is the larger);
    holds when q's interval lies above 1 + threshold, does not hold when it lies below."""
    plat_name, base_name = names
    shifts, sizes, labels, weighted = [], [0, 0], [], []
    for sign, selection in ((1.0, check), (-1.0, versus_selection(check))):
        pairs, hib = _selection(table, selection, plat_name, base_name)
        power = sign * (-1.0 if hib else 1.0) / len(pairs)
        shifts += [t for pair in pairs for t in _shifts(pair, power)]
        weighted += [(pair, power) for pair in pairs]
        sizes[0] += sum(_n(p.plat) for p in pairs)
        sizes[1] += sum(_n(p.base) for p in pairs)
        shown = _where_text(selection.get("where"))
        labels.append(f"{selection['benchmark']} {selection['metric']}{' ' + shown if shown else ''} ({len(pairs)} variants)")
    ci = stats.shift_bootstrap_ci(shifts, level, seed=stats.seed_for(seed, "ratio_of_overheads"))
    bound = 1.0 + float(check["threshold"])
    row = {"label": " vs ".join(labels), "value": ci.estimate - 1.0, "ci_low": ci.low - 1.0, "ci_high": ci.high - 1.0,
           "n_platform": sizes[0], "n_baseline": sizes[1], "ci": ci, "ci_method": ci.method, "ci_note": ci.note,
           "too_few": ci.too_few, "test": ("overhead_at_least", float(check["threshold"])),
           "by_part": lambda: {part: q - 1.0 for part, q in _part_ratios(weighted).items()},
           "p_hold": _two_sided(ci.p_value(bound, "greater")), "p_fail": _two_sided(ci.p_value(bound, "less"))}  # fmt: skip
    return [row], []


def _better_in_some_rows(table, check: dict, names: list[str], level: float, seed: int) -> tuple[list[dict], list[str]]:
    """``better_in_some``: the platform is better than the baseline by more than ``threshold`` in at
    least one variant ("in several cases"). Each variant is compared as ``better`` (:func:`_compare`);
    the claim's row is the variant most clearly better, its "holds" p-value Holm-adjusted over the k
    variants (the first step of Holm's method, k times the smallest p: an existence claim needs the
    correction), its "does not hold" p-value the largest of the variants' (every variant must be shown
    not better: an intersection-union test)."""
    plat, base = names
    rows, notes = _compare(table, check, plat, base, "better", float(check.get("threshold", 0.0)), level, seed)
    k = len(rows)
    witness = min(rows, key=lambda r: (r["p_hold"] != r["p_hold"], r["p_hold"], r["value"]))
    fails = [r["p_fail"] for r in rows]
    row = dict(witness)
    row["label"] = f"best of {k} variant{'s' if k > 1 else ''}" + (f": {witness['label']}" if witness["label"] else "")
    row["p_hold"] = min(1.0, k * witness["p_hold"])
    if k > 1:  # the shown interval is the variant's own: say that the verdict weighs it against k variants
        said = f"the most clearly better of {k} variants, its p-value for 'better' x {k} (Holm) = {row['p_hold']:.3g}"
        row["ci_note"] = "; ".join(n for n in (said, witness["ci_note"]) if n)
    row["p_fail"] = float("nan") if any(p != p for p in fails) else max(fails)
    return [row], notes


ACROSS_VARIANT_KINDS = {"ratio_of_overheads": _ratio_of_overheads_rows, "better_in_some": _better_in_some_rows}


def evaluate_claim(claim: dict, table: pd.DataFrame, level: float = 0.95, margin: float = 0.05,
                   seed: int = 0, guard: list[dict] | None = None,
                   unavailable: dict[str, str] | None = None) -> dict:  # fmt: skip
    """One claim's verdict row (see the module docstring). ``guard``: the faster-than-native entries
    of the table (:func:`_guard`; computed here with the registry's causes when not given).
    ``unavailable``: platform -> why the testbed cannot run it (its platform probe,
    :mod:`virtrepro.availability`), said in the note of a claim not measured for that reason."""
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
    views = _views(table)
    table = views.table
    names: list[str] = []
    rules: list = []
    judged = None
    try:
        names = [resolve_platform(p, table, paper, conditions.rule_subsystem(check)) for p, paper in zip(_check_platforms(check), papers)]
        row["platforms"] = (" > ".join(names) + " (best first)") if kind == "order" else " vs ".join(names)
        relations = _stand_ins(names, papers, table, check)
        rules = _analogue_rules(check, names, papers, relations)
        row["stand_in"] = ", ".join(dict.fromkeys(relations))
        views, judged = _within_conditions(claim, views, check, names)
        if kind in SHAPE_KINDS:
            rows, notes = {"trend": _trend_rows, "spread": _spread_rows, "saturation": _saturation_rows}[kind](
                views, check, names, level)
            row["threshold"] = check.get("threshold")
        elif kind in ACROSS_VARIANT_KINDS:
            rows, notes = ACROSS_VARIANT_KINDS[kind](views, check, names, level, seed)
            row["threshold"] = check.get("threshold")
        elif kind == "order":
            rows, notes = [], []
            for better, worse in zip(names, names[1:]):
                got, missing = _compare(views, check, better, worse, "better", 0.0, level, seed)
                for r in got:
                    r["label"] = f"{better} vs {worse}" + (f", {r['label']}" if r["label"] else "")
                rows += got
                notes += missing
        else:
            plat, base = names
            threshold = check.get("threshold", margin if kind == "equivalent" else None)
            row["threshold"] = threshold
            rows, notes = _compare(views, check, plat, base, kind, float(threshold), level, seed)
    except NotMeasured as why:
        reasons = [f"{name} is unavailable on this testbed: {(unavailable or {})[name]}"
                   for name in dict.fromkeys(names) if name in (unavailable or {})]
        # a claim that its conditions or the analogue table put out of reach is not comparable, whatever
        # else is missing: measuring more of the same would not make it comparable
        ruled, rule_notes = conditions.analogue_verdict("not measured", check, rules)
        outside = judged.outside if judged is not None else ""
        if outside or ruled == conditions.NOT_COMPARABLE:
            row.update(verdict=conditions.NOT_COMPARABLE, note="; ".join(n for n in [outside, *rule_notes, str(why)] if n))
            return row
        row.update(verdict="not measured", note="; ".join([str(why), *reasons]))
        return row
    verdict = _shape_verdict(kind, rows, 1.0 - level)
    shown_as = {"order": "better", "trend": "overhead_at_least" if check.get("direction") == "worsens" else "better",
                "spread": "overhead_at_least" if check.get("direction") == "larger" else "better",
                "saturation": "equivalent"}.get(kind, kind)  # fmt: skip
    shown = _shown(verdict, shown_as, rows)
    where_missing = [n for n in notes if not n.startswith("only on")]
    if verdict == "holds" and where_missing:
        verdict = "inconclusive"
    note = []
    if len(rows) > 1:
        counts = pd.Series([r["verdict"] for r in rows]).value_counts()
        note.append(f"{len(rows)} comparisons (Holm across them): " + ", ".join(f"{v} {k}" for k, v in counts.items())
                    + ("; strongest counterexample shown" if verdict == "does not hold" else "; worst shown"))  # fmt: skip
    if where_missing:
        note.append("not run: " + ", ".join(where_missing))
    if shown["ci_note"]:
        note.append(shown["ci_note"])
    verdict, why = _regime_gate(verdict, views, check, names)
    if why:
        note.insert(0, why)
    verdict, why = _part_consistency(verdict, rows)
    if why:
        note.insert(0, why)
    verdict, why = _too_few(verdict, rows, kind, _fewest_repetitions(views, check, names), level)
    if why:
        note.insert(0, why)
    flags = _flagged(_guard(table, level, load_causes()) if guard is None else guard, views, check, names)
    verdict = _gated(verdict, relations, flags)
    verdict, rule_notes = conditions.analogue_verdict(verdict, check, rules)
    if judged.outside:  # a test outside the claim's conditions answers another question
        verdict = conditions.NOT_COMPARABLE
    lead = [judged.outside, _analogue_note(names, papers, relations), *rule_notes, _flag_note(flags), judged.note]
    note = [n for n in lead if n] + note
    row.update(value=shown["value"], ci_low=shown["ci_low"], ci_high=shown["ci_high"], n_platform=shown["n_platform"],
               n_baseline=shown["n_baseline"], variant=shown["label"], ci_method=shown["ci_method"], verdict=verdict,
               note="; ".join(note), suspect_faster_than_native=bool(flags))  # fmt: skip
    return row


def evaluate(claims: list[dict], table: pd.DataFrame, level: float = 0.95, margin: float = 0.05,
             seed: int = 0, causes: list[dict] | None = None,
             unavailable: dict[str, str] | None = None) -> pd.DataFrame:  # fmt: skip
    """One row per claim: id, paper, source, kind, benchmark, metric, published, platforms
    (as used: ``qemu`` resolved), threshold, value (relative difference, positive = worse),
    ci_low, ci_high (at ``level``), ci_method (the interval's method: ``hl-moses``, ``bootstrap-hl``, ...),
    n_platform, n_baseline, variant (the comparison shown: the strongest counterexample of a claim
    that does not hold, else the weakest comparison), verdict (one of :data:`VERDICTS`) and note.

    ``margin`` is the TOST margin of an ``equivalent`` claim that gives no threshold. Also
    paper_platform, stand_in (how the measured platforms stand for the paper's,
    :mod:`virtrepro.platform_names`) and suspect_faster_than_native (the claim compares records of a
    guest faster than native, :func:`faster_than_native`; ``causes`` defaults to the registry).
    ``unavailable``: platform -> why the testbed cannot run it (:func:`unavailable_platforms`).
    """
    guard = _guard(table, level, load_causes() if causes is None else causes)
    views = _Views(table)
    rows = [evaluate_claim(c, views, level=level, margin=margin, seed=seed, guard=guard, unavailable=unavailable)
            for c in claims]
    return pd.DataFrame(rows, columns=COLUMNS)


def verdict_counts(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Claims per paper and verdict (columns in :data:`VERDICTS` order, a total row)."""
    counts = pd.crosstab(verdicts["paper"], verdicts["verdict"]).reindex(columns=list(VERDICTS), fill_value=0)
    counts.loc["all papers"] = counts.sum()
    return counts


def _percent(value: float) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:+.1f}%"


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


def _regime_gate(verdict: str, table: pd.DataFrame, check: dict, platforms: list[str]) -> tuple[str, str | None]:
    """A number measured in a cache is not a disk or memory number: a verdict whose records (on any of
    ``platforms``) were not measured where the paper measured (the table's ``regime`` against its
    ``measures``, :mod:`virtrepro.regimes`) answers another question: it is not comparable here
    (conditions.NOT_COMPARABLE), with the reason."""
    if "regime" not in _views(table).table.columns:
        return verdict, None
    used = pd.concat([_records(table, check, name) for name in platforms])
    if "measures" not in used.columns:
        return verdict, None
    why = regimes.gate_reason(verdict, used["measures"].dropna().unique(), used["regime"].dropna().unique())
    return (conditions.NOT_COMPARABLE, why) if why else (verdict, None)


# ---------------------------------------------------------------------------
# The paper's platforms and what stands for them (platform_names holds the rule)
# ---------------------------------------------------------------------------


def _fewest_repetitions(table: pd.DataFrame, check: dict, names: list[str]) -> int:
    """The fewest repetitions (distinct raw logs) of any variant the claim compares, on any side."""
    counts = []
    for name in dict.fromkeys(names):
        records = _records(table, check, name)
        runs = records["source_log"] if "source_log" in records.columns else records["repetition"]
        counts.append(int(runs.groupby(records["variant"]).nunique().min()))
    return min(counts)


def _check_platforms(check: dict) -> list[str]:
    if not check:
        return []
    if check.get("kind") == "order":
        return list(check["platforms"])
    return [check["platform"]] + ([check["baseline"]] if check.get("baseline") else [])


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
    if names and len(given) == 1 and len(names) == 2 and names[1] == platform_catalog.BASELINE:
        given.append(platform_catalog.BASELINE)  # the baseline's paper platform has its name
    return given


def _check_paper_platforms(claim: dict) -> None:
    """claims.yaml: every claim names its paper platforms, and each check platform may stand for its own
    (ValueError ``<key>: ...``; :func:`load_claims` adds the file and the claim)."""
    if claim.get("paper_platform") is None:
        raise ValueError("paper_platform missing (the paper's platform, e.g. KVM)")
    papers = paper_platforms(claim)
    for paper in papers:
        if paper not in platform_names.STAND_INS:
            raise ValueError(f"paper_platform: unknown paper platform {paper!r} "
                             f"(known: {', '.join(platform_names.STAND_INS)})")
    if not claim.get("testable"):
        return
    names = _check_platforms(claim["check"])
    if len(papers) != len(names):
        raise ValueError(f"paper_platform names {len(papers)} platforms, the check compares {len(names)}")
    for name, paper in zip(names, papers):
        candidates = list(platform_catalog.ALIASES[name].candidates) if name in platform_catalog.ALIASES else [name]
        if not any(platform_names.stand_in(paper, c) for c in candidates):
            raise ValueError(f"check: {name} may not stand for {paper} (platform_names.STAND_INS)")


def _stand_ins(names: list[str], papers: list[str | None], table: pd.DataFrame, check: dict | None = None) -> list[str]:
    """How each resolved platform stands for its paper platform: its own relation, or ANALOGUE where the
    analogue table has a rule for it on the check's subsystem (qemu-tcg for KVM); NotMeasured when it
    may not or when the paper platform has no stand-in on this testbed."""
    present = set(table["platform"].unique()) if len(table) else set()
    subsystem = conditions.rule_subsystem(check or {})
    relations = []
    for name, paper in zip(names, papers):
        if paper is None:
            relations.append(platform_names.SAME)
            continue
        relation = platform_names.stand_in(paper, name) or (
            platform_names.ANALOGUE if platform_names.analogue_rule(paper, name, subsystem) else None)
        if relation is None or name not in present:
            if relation is None or not present & set(platform_names.STAND_INS[paper]):
                raise NotMeasured(platform_names.why_not_measured(paper, present))
        relations.append(relation)
    return relations


def _analogue_rules(check: dict, names: list[str], papers: list[str | None], relations: list[str]) -> list:
    """The analogue table's rule for each analogue stand-in of the check (:func:`conditions.analogue_rules`);
    NotMeasured when the table lists the pair but not the check's subsystem."""
    rules = conditions.analogue_rules(check, names, papers, [r == platform_names.ANALOGUE for r in relations])
    for _, name, paper, rule in rules:
        if rule is None:
            raise NotMeasured(f"the analogue table (data/reference/analogues.yaml) has no rule for {platform_names.label(name)} "
                              f"standing in for {paper} on a {conditions.rule_subsystem(check) or 'undeclared'} metric")
    return rules


def _within_conditions(claim: dict, views: _Views, check: dict, names: list[str]) -> tuple[_Views, "conditions.Judged"]:
    """The check's records judged against the claim's ``conditions`` (:func:`conditions.judge`), and the
    views without the records outside them (unchanged when none is left: the claim is then not
    comparable, and its estimate shows what was measured)."""
    sides = {name: _records(views, check, name) for name in dict.fromkeys(names)}
    judged = conditions.judge(claim, sides)
    if judged.outside or not judged.note:
        return views, judged
    used = pd.Index([]).append([records.index for records in sides.values()])
    return _Views(views.table.drop(index=used.difference(judged.kept))), judged


def _analogue_note(names: list[str], papers: list[str | None], relations: list[str]) -> str:
    shown = [f"{platform_names.label(n)} for {p}" for n, p, r in zip(names, papers, relations) if r == platform_names.ANALOGUE]
    return ("analogue, not the paper's platform: " + ", ".join(shown)) if shown else ""


# ---------------------------------------------------------------------------
# The guard: a guest faster than native beyond its interval is a condition to explain, not a result
# ---------------------------------------------------------------------------

GUARD_MARGIN = 0.10  # a guest better than native by more than this at the interval's worse end is marked
CAUSES_PATH = Path(__file__).resolve().parents[4] / "data" / "reference" / "faster_than_native.yaml"


def load_causes(path: str | Path = CAUSES_PATH) -> list[dict]:
    """The registry of explained faster-than-native results: entries with ``platform``, ``benchmark``,
    optional ``metric`` (a name or a list of names) and ``where`` (as in a claim's check), the ``cause`` found, with evidence, and
    optional ``confounded: true`` when the cause is a difference in the conditions of the measurement
    rather than of the platform (the host drifting between the platforms' runs): a claim on those
    records is then inconclusive, its note naming the cause."""
    path = Path(path)
    entries = (yamlfile.load(path) if path.exists() else None) or []
    if not isinstance(entries, list):
        raise ClaimsError(f"{path}: expected a list of entries, not {type(entries).__name__}")
    for number, entry in enumerate(entries, 1):
        if not isinstance(entry, dict):
            raise ClaimsError(f"{path}: entry {number} of the list: a mapping of keys, not {entry!r}")
        name = f"entry {number} of the list ({entry.get('platform')}/{entry.get('benchmark')})"
        missing = [k for k in ("platform", "benchmark", "cause") if not entry.get(k)]
        if missing:
            raise ClaimsError(f"{path}: {name}: lacks {', '.join(missing)}")
        try:
            _check_keys(entry, CAUSE_KEYS)
        except ValueError as error:  # confounded must be true or false, and so on
            raise ClaimsError(f"{path}: {name}: {error}") from None
    return entries


def _guard(table: pd.DataFrame, level: float, causes: list[dict], margin: float = GUARD_MARGIN) -> list[dict]:
    """Every (guest platform, benchmark, metric, variant) whose relative difference against native
    (the Hodges-Lehmann ratio's exact Mann-Whitney interval at ``level``, positive = worse) lies entirely below ``-margin``, with the table
    records of the guest's side and the recorded cause ("" when none)."""
    out = []
    baseline = platform_catalog.BASELINE
    if table.empty or baseline not in set(table["platform"]):
        return out
    measured = table[table["value"].notna()]
    parts = (  # per benchmark, widened (results.view)
        ((bench, metric), part)
        for bench in sorted(measured["benchmark"].unique())
        for metric, part in results.view(measured, bench).groupby("metric", sort=True)
    )
    for (bench, metric), part in parts:
        if baseline not in set(part["platform"]) or part["platform"].nunique() < 2:
            continue
        dims = _dimensions([part], {}, set())
        keys = pd.Series(list(zip(*[_column_text(part, d) for d in dims])) if dims else [()] * len(part), index=part.index)
        slim = pd.DataFrame({"platform": part["platform"].astype(str), "key": keys, "value": part["value"].astype(float)})
        base = slim[slim["platform"] == baseline]
        hib = higher_is_better(metric, part["unit"].iloc[0], bench)
        for (platform, key), guest in slim[slim["platform"] != baseline].groupby(["platform", "key"], sort=True):
            native = base.loc[base["key"] == key, "value"].to_numpy(float)
            if len(native) < 2 or len(guest) < 2:
                continue
            res = stats.overhead(native, guest["value"].to_numpy(float), hib, level=level)
            high = res["overhead_ci_high"] / 100
            if not high < -margin:
                continue
            entry = {"platform": platform, "benchmark": bench, "metric": metric,
                     "variant": ", ".join(f"{_dim_name(d)}={v}" for d, v in zip(dims, key)),
                     "estimate": res["overhead_percent"] / 100, "ci_low": res["overhead_ci_low"] / 100, "ci_high": high,
                     "n_platform": len(guest), "n_baseline": len(native), "records": guest.index}  # fmt: skip
            found = _cause(entry, part.loc[guest.index], causes)
            entry["cause"] = str(found["cause"]) if found else ""
            entry["confounded"] = bool(found and found.get("confounded"))
            out.append(entry)
    return out


def _cause(entry: dict, records: pd.DataFrame, causes: list[dict]) -> dict | None:
    """The registry's entry that explains ``entry`` (its platform, benchmark, metric and ``where``), or None."""
    for cause in causes:
        if (cause["platform"], cause["benchmark"]) != (entry["platform"], entry["benchmark"]):
            continue
        metrics = cause.get("metric")
        if metrics is not None and entry["metric"] not in ([metrics] if isinstance(metrics, str) else metrics):
            continue
        if all(_match(records, k, v).all() for k, v in (cause.get("where") or {}).items()):
            return cause
    return None


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
    if any(f.get("confounded") for f in flags):  # a measured difference in conditions: it decides nothing
        return "inconclusive"
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
    "n_platform", "n_baseline", "estimate", "ci_low", "ci_high", "ci_level", "ci_method", "threshold", "verdict", "reason",
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
        "ci_low": verdicts["ci_low"], "ci_high": verdicts["ci_high"], "ci_level": level, "ci_method": verdicts["ci_method"],
        "threshold": verdicts["threshold"],
        "verdict": verdicts["verdict"], "reason": verdicts["note"],
        "suspect_faster_than_native": verdicts["suspect_faster_than_native"].fillna(False).astype(bool),
    })  # fmt: skip
    return out[TABLE_COLUMNS]


def unavailable_platforms(probe_path: str | Path) -> dict[str, str]:
    """platform -> reason, from a testbed's platform probe record (``probes/platforms.json``,
    :mod:`virtrepro.availability`); empty where there is none (a testbed measured before it existed)."""
    from ...availability import unavailable

    try:
        return unavailable(json.loads(Path(probe_path).read_text()))
    except FileNotFoundError:
        return {}


def write_claims_table(claims_path: str | Path, table: pd.DataFrame, out: str | Path, level: float = 0.95,
                       causes_path: str | Path = CAUSES_PATH, probe_path: str | Path | None = None) -> pd.DataFrame:  # fmt: skip
    """Evaluate every claim of ``claims_path`` on ``table`` (causes of faster-than-native results from
    ``causes_path``; the platforms the testbed could not run from its platform probe ``probe_path``)
    and write :func:`claims_table` as CSV to ``out``: whole, and only once every claim is evaluated (an
    error, such as a :class:`ClaimsError`, leaves an earlier ``out`` as it was)."""
    unavailable = unavailable_platforms(probe_path) if probe_path else {}
    verdicts = evaluate(load_claims(claims_path), table, level=level, causes=load_causes(causes_path),
                        unavailable=unavailable)
    frame = claims_table(verdicts, level=level)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.{os.getpid()}.partial")
    try:
        frame.to_csv(partial, index=False, float_format="%.6g")
        os.replace(partial, out)
    finally:
        partial.unlink(missing_ok=True)
    return frame


def main(argv: list[str] | None = None) -> int:
    """Write a testbed's verdicts, ``<data-dir>/tables/<testbed>.claims.csv`` (the workflow's claims_table
    job), from its table, and print how many claims got each verdict."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m virtrepro.claims", description=main.__doc__)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--testbed", required=True)
    parser.add_argument("--claims", required=True, help="the claims (data/reference/claims.yaml)")
    parser.add_argument("--causes", default=str(CAUSES_PATH), help="the causes' registry (faster_than_native.yaml)")
    args = parser.parse_args(argv)
    results.require_raw_logs(args.data_dir, args.testbed)  # no verdicts from a table of no runs (one left from before)
    table = results.read_table(results.table_paths(args.data_dir, args.testbed)["parquet"])
    # a platform the testbed could not run is "not measured" with the probe's reason
    probe = datalayout.probe_path(args.data_dir, args.testbed, datalayout.PLATFORM_PROBE)
    out = datalayout.claims_table_path(args.data_dir, args.testbed)
    frame = write_claims_table(args.claims, table, out, causes_path=args.causes, probe_path=probe)
    print(frame["verdict"].value_counts().to_string())
    return 0


if __name__ == "__main__":
    from ...cli import run as run_cli

    run_cli(main)
