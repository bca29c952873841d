"""Summary statistics over repetitions and platform-vs-baseline comparisons.

statsmodels and scipy underneath. Two families:

**The verdicts' intervals** (:mod:`virtrepro.analysis.claims`), chosen by what is compared, never by a test on
the same data (a normality pre-test decides nothing: its conditional coverage is worse than either
method's, Rochon, Kieser and Kopp 2012; Shapiro-Wilk p-values are still recorded in ``RatioCI.shapiro``):

* a ratio platform / baseline of two samples: :func:`hl_ratio_ci`, Hodges-Lehmann on log values
  with the exact Mann-Whitney (Moses) interval, distribution-free under a scale shift; it reports
  its ACHIEVED confidence (97.1 % at 4 + 4, 96.8 % at 5 + 5, 95.0-96 % from 10 + 10 for a nominal
  95 %) and gives no interval (``too_few``) where even the widest falls short (3 + 3: 90 %);
* paired rounds: :func:`hl_paired_ci`, the signed-rank counterpart (96.9 % at 6 rounds, none at 5);
* one sample's median: :func:`median_order_ci`, order statistics (96.9 % at n = 6, none at 5);
* one sample's location on the log scale: :func:`hl_location_ci`, the one-sample signed-rank interval
  of the log values (none below :func:`signed_rank_min_n`, 6 at 95 %): the repetition rule's
  per-sample proxy for the ratio's width (:mod:`virtrepro.planning.adaptive`);
* a product of ratios (a ratio of ratios from four samples, a geometric mean over variants):
  :func:`shift_bootstrap_ci`, each sample resampled on its own, percentile tails stretched by
  sqrt(n / (n - 1)); coverage 0.96-0.97 pooled over 5 to 30 values a sample and four noise shapes
  (``bench/interval_coverage.py`` prints the table; ``tests/test_rank_intervals.py`` asserts it);
  where every ratio's two sides were measured in rounds, :func:`paired_shift_bootstrap_ci`, the
  same with each sample of per-round log ratios resampled by round (from 6 rounds a sample);
* values printed at a resolution (ties) widen the rank and bootstrap intervals by each value's
  rounding bound on the log scale, so their coverage holds for the true values behind the print
  (the comment block before :func:`printed_resolution`).

**The figures' and summaries' intervals** use the same methods, so a whisker and a verdict never
disagree by construction: ``overhead`` and ``compare_to_baseline`` (a platform against a baseline,
one Holm family per call) give the Hodges-Lehmann ratio with its exact Mann-Whitney interval
(:func:`hl_ratio_ci`), or paired by round where both sides were measured in rounds (:func:`by_round`,
:func:`hl_paired_ci`), ``location_ci``/``summarize`` a sample's median with its order-statistic
interval (:func:`median_order_ci`), ``paired_rounds`` the signed-rank interval of paired rounds
(:func:`hl_paired_ci`), ``drift_between_parts`` a part's ratio to the other's (:func:`hl_ratio_ci`).
Each says its achieved confidence in ``ci_note``; where n is too small for any interval at the level
there is none (``ci_method`` ``none``), never a guess. ``mean_ci`` (a Student-t interval of a mean,
normal theory, said so) serves the repetition rule's width (:mod:`virtrepro.planning.adaptive`) only.
Shapiro-Wilk p-values are reported as a description and decide nothing.

The modules, one per job (this package's names are theirs, imported here):

- ``rank``       the rank intervals: :func:`hl_ratio_ci` (Moses), :func:`hl_paired_ci` and
  :func:`hl_location_ci` (signed rank), :func:`median_order_ci` (order statistics), the widening by
  the printed resolution, :class:`RatioCI`
- ``bootstrap``  :func:`shift_bootstrap_ci`, :func:`paired_shift_bootstrap_ci`, :func:`hl_ratio_estimate`,
  :func:`seed_for`
- ``compare``    the figures' comparisons: :func:`overhead`, :func:`compare_to_baseline`, :func:`holm`,
  :func:`outliers`, :func:`location_ci`/:func:`summarize`, :func:`paired_rounds`,
  :func:`drift_between_parts`, :func:`by_round` and :func:`round_halves` (pairing by round)
- ``shape``      the normal-theory estimates: :func:`log_slope`, :func:`spread_difference`,
  :func:`mean_ci` (the repetition rule)
"""

# Each name is imported from its module on first use (PEP 562): the table's stop rule needs the rank
# intervals only, and scipy.stats and statsmodels take about a second to import (bench/table_build.py).
_MODULES = {
    "rank": (
        "CONSTANT_NOTE", "shapiro_p", "median_order_ci", "RatioCI", "printed_resolution", "rank_sum_cdf",
        "signed_rank_cdf", "hl_ratio_ci", "hl_paired_ci", "hl_location_ci", "signed_rank_min_n",
        "rank_sum_min_n",
    ),
    "bootstrap": (
        "N_RESAMPLES", "seed_for", "MIN_N_BOOTSTRAP", "N_RESAMPLES_SHIFT", "hl_ratio_estimate",
        "shift_bootstrap_ci", "MIN_N_PAIRED_BOOTSTRAP", "paired_shift_bootstrap_ci",
        "paired_ratio_estimate",
    ),
    "compare": (
        "location_ci", "summarize", "overhead", "rank_p", "equivalence_p", "holm", "outliers", "VERDICTS",
        "compare_to_baseline", "drift_between_parts", "paired_rounds", "by_round", "round_halves",
    ),
    "shape": (
        "mean_ci", "Estimate", "log_slope", "spread_difference",
    ),
}
_WHERE = {name: module for module, names in _MODULES.items() for name in names}
__all__ = sorted(_WHERE)


def __getattr__(name: str):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])
