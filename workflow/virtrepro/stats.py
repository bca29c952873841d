"""Summary statistics over repetitions (statsmodels underneath)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from statsmodels.stats.weightstats import DescrStatsW


def mean_ci(values, level: float = 0.95) -> tuple[float, float, float]:
    """Mean and two-sided Student-t confidence interval of the mean.

    With one value the interval is undefined (NaN, NaN); it is never faked.
    """
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        raise ValueError("no values")
    mean = float(data.mean())
    if data.size < 2:
        return mean, float("nan"), float("nan")
    low, high = DescrStatsW(data).tconfint_mean(alpha=1 - level)
    return mean, float(low), float(high)


def summarize(frame: pd.DataFrame, by: list[str], level: float = 0.95, value: str = "value") -> pd.DataFrame:
    """n, mean, standard deviation and t confidence interval per group."""
    rows = []
    for key, group in frame.groupby(by, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        mean, low, high = mean_ci(group[value], level)
        rows.append(
            {
                **dict(zip(by, key)),
                "n": int(group[value].count()),
                "mean": mean,
                "std": float(group[value].std(ddof=1)) if len(group) > 1 else float("nan"),
                "ci_low": low,
                "ci_high": high,
                "level": level,
            }
        )
    return pd.DataFrame(rows)
