"""Student-t intervals checked against hand-computable cases."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from scipy import stats as scipy_stats

from virtrepro.stats import mean_ci, summarize


def test_t_interval_of_a_textbook_sample():
    # x = 1..5: mean 3, s = sqrt(2.5), t(0.975, 4) = 2.776445
    mean, low, high = mean_ci([1, 2, 3, 4, 5], 0.95)
    half = 2.7764451051977987 * math.sqrt(2.5) / math.sqrt(5)
    assert mean == 3
    assert low == pytest.approx(3 - half, abs=1e-9) and high == pytest.approx(3 + half, abs=1e-9)


def test_97_percent_level_uses_the_right_quantile():
    data = [10.0, 12.0, 11.0, 13.0, 9.0, 11.5]
    mean, low, high = mean_ci(data, 0.97)
    s = pd.Series(data).std(ddof=1)
    half = scipy_stats.t.ppf(0.985, len(data) - 1) * s / math.sqrt(len(data))
    assert (high - low) / 2 == pytest.approx(half)
    assert mean == pytest.approx(11.083333333)


def test_one_value_has_no_interval():
    mean, low, high = mean_ci([4.0])
    assert mean == 4.0 and math.isnan(low) and math.isnan(high)


def test_summarize_groups():
    frame = pd.DataFrame({"platform": ["a", "a", "b", "b", "b"], "value": [1.0, 3.0, 2.0, 2.0, 2.0]})
    out = summarize(frame, ["platform"]).set_index("platform")
    assert out.loc["a", "n"] == 2 and out.loc["a", "mean"] == 2.0
    assert out.loc["b", "std"] == 0.0 and out.loc["b", "ci_low"] == pytest.approx(2.0)
