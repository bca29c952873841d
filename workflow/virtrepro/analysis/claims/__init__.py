"""Verdicts on the papers' comparison claims (``data/reference/claims.yaml``) from our runs.

:func:`load_claims` reads the claims, :func:`evaluate` checks each one against the tidy table
of a testbed (:func:`virtrepro.results.load`) and returns one row per claim. The format of a
claim and the meaning of every kind are in ``data/reference/README.md``; in short:

* **Relative difference** of a platform P against a baseline B, signed so that positive means
  P is worse: ``(P - B) / B`` for lower-is-better metrics, ``(B - P) / B`` for higher-is-better
  ones (each metric's declaration in :mod:`virtrepro.declarations.metric_catalog` says which; an undeclared
  metric is an error). It is
  ``1 - R`` or ``R - 1`` for the ratio ``R = P / B`` under a scale shift (P's runs are B's times R),
  estimated by Hodges-Lehmann on log values. No method is chosen by a test on the same data
  (Shapiro-Wilk decides nothing): a plain metric per variant has the exact Mann-Whitney interval
  (:func:`stats.hl_ratio_ci`, its achieved confidence in the note, e.g. 96.8 % at 5 + 5), paired
  by round where both sides were measured in rounds (the table's ``round``: :func:`stats.hl_paired_ci`
  over the rounds both have, the exact signed-rank interval, 96.9 % at 6 rounds); a
  derived metric (a ratio of ratios) or an ``aggregate: mean`` claim, which is about the
  **geometric mean** of the per-variant ratios (never an arithmetic mean of ratios), the
  bootstrap of the Hodges-Lehmann shifts (:func:`stats.shift_bootstrap_ci`, coverage shown by
  simulation from 5 values a sample), or where every ratio's two sides were measured in rounds, the
  bootstrap of each variant's per-round log ratios (:func:`stats.paired_shift_bootstrap_ci`, from 6
  rounds), each row's resamples seeded on their own
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
  deciding comparisons, re-estimated within each part of the run order (in rounds: each half of
  the rounds, a paired comparison still paired), lie on opposite sides of
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
* **Conditions and analogues** (:mod:`virtrepro.analysis.conditions`). Records outside a claim's
  ``conditions`` are left out; with none left on a side (or too few process counts for a
  scalability claim) it is ``not comparable here``. A platform of another kind stands in only as
  the analogue table allows (``data/reference/analogues.yaml``): ``not comparable here`` where it
  may not, ``not informative (analogue's bias)`` where its bias favours the verdict.

The modules, one per job (this package's public names are theirs, imported here; their private
helpers are reached through the module, e.g. ``claims.gates._part_consistency``):

- ``loading``    :func:`load_claims` and :func:`load_causes`: every key's form, what each kind needs,
  :func:`paper_platforms`, :class:`ClaimsError`
- ``selection``  a check's records (``where``), the variant dimensions and the platform's variants
  paired with the baseline's (derived metrics too), :func:`resolve_platform`, :class:`NotMeasured`
- ``intervals``  relative differences and their intervals, the p-values at the threshold, the
  per-claim decision (``_compare``, ``_decide``), :func:`higher_is_better`
- ``shapes``     ``trend``, ``spread``, ``saturation`` (:func:`saturation_bounds`) and the kinds across
  variants, ``ratio_of_overheads`` and ``better_in_some``
- ``gates``      regime, drift between parts, too few repetitions, the faster-than-native guard
  (:func:`faster_than_native`), analogues and conditions, :func:`base_verdict`
- ``verdicts``   :func:`evaluate_claim`, :func:`evaluate`, :func:`verdict_counts`, :data:`VERDICTS`
- ``prose``      :func:`estimate_text`, :func:`report`, :func:`sentence`, :func:`listing`
- ``csvtable``   :func:`claims_table`, :func:`write_claims_table` and the command line
  (``python -m virtrepro.analysis.claims``)
"""

import importlib

# Each module is imported when one of its names (or the module) is first asked for: the workflow reads the
# claims at every start (``load_claims``, ``load_causes``), and the statistics behind the verdicts
# (scipy, pandas) take longer to import than the rest of the plan takes to make.
_PUBLIC = {  # module -> its public names, imported when first asked for (PEP 562)
    "loading": ("KINDS", "SHAPE_KINDS", "ClaimsError", "VALUE_FORMS", "CLAIM_KEYS", "CHECK_KEYS", "CAUSE_KEYS", "load_claims", "paper_platforms", "CAUSES_PATH", "load_causes"),
    "selection": ("SCALING_PARAMETER", "ISOLATION_PARAMETER", "ISOLATION_ALONE", "ISOLATION_STRESSED", "DERIVED_METRICS", "resolve_platform", "NotMeasured"),
    "intervals": ("higher_is_better",),
    "shapes": ("saturation_bounds", "versus_selection", "ACROSS_VARIANT_KINDS"),
    "gates": ("ANALOGUE_SUFFIX", "UNEXPLAINED_FASTER", "MIN_REPETITIONS", "TOO_FEW", "GUARD_MARGIN", "faster_than_native", "base_verdict"),
    "verdicts": ("VERDICTS", "COLUMNS", "evaluate_claim", "evaluate", "verdict_counts"),
    "prose": ("estimate_text", "report", "sentence", "listing"),
    "csvtable": ("TABLE_COLUMNS", "claims_table", "write_claims_table", "main"),
}
_WHERE = {name: module for module, names in _PUBLIC.items() for name in names}
__all__ = list(_WHERE)


def __getattr__(name: str):
    if name in _PUBLIC:  # a module of the package, e.g. ``claims.gates``
        return importlib.import_module(f"{__name__}.{name}")
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE, *_PUBLIC})
