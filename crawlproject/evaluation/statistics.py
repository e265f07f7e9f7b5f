"""Across topics: mean ± one standard error, a 95 % t interval, the paired one-tailed t-test,
and Holm's correction for a family of tests."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from scipy import stats

if TYPE_CHECKING:
    from collections.abc import Sequence


def mean_and_stderr(values: Sequence[float]) -> tuple[float, float]:
    """Mean and standard error of the mean (NaNs ignored).

    >>> mean_and_stderr([1.0, 2.0, 3.0, 6.0])
    (3.0, 1.0801234497346435)
    """
    clean = [v for v in values if not math.isnan(v)]
    if not clean:
        return math.nan, math.nan
    mean = sum(clean) / len(clean)
    if len(clean) < 2:
        return mean, math.nan
    variance = sum((v - mean) ** 2 for v in clean) / (len(clean) - 1)
    return mean, math.sqrt(variance / len(clean))


def t_interval(values: Sequence[float]) -> tuple[float, float, float]:
    """The mean and its 95 % t interval (nan bounds for fewer than two values).

    >>> [round(v, 3) for v in t_interval([1.0, 2.0, 3.0])]
    [2.0, -0.484, 4.484]
    """
    mean, error = mean_and_stderr(values)
    if math.isnan(error):
        return mean, math.nan, math.nan
    half = float(stats.t.ppf(0.975, len(values) - 1)) * error
    return mean, mean - half, mean + half


def paired_one_tailed(better: Sequence[float], worse: Sequence[float]) -> tuple[float, float]:
    """t statistic and p-value that *better* > *worse* on paired samples."""
    result = stats.ttest_rel(better, worse, alternative="greater")
    return float(result.statistic), float(result.pvalue)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in the order given: the i-th
    smallest p is multiplied by (m − i + 1), and the adjusted values are
    made non-decreasing in that order (Holm 1979). Reject where adjusted ≤ α.

    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
