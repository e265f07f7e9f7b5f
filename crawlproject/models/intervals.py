"""How sure a stated proportion is: the intervals every precision the
crawl states comes with (a judge's, ``scrapy train``'s, the labels')."""

from __future__ import annotations

import math

#: Added to each side of the interval of a precision stated from calibrated
#: probabilities: what the probabilities get wrong beyond chance. Chosen on
#: two corpora, measured on the third (bench.judges; docs/strategies.md,
#: "How sure a judge is").
PRECISION_MARGIN = 0.19


def stated_interval(probability_sum: float, variance_sum: float, calls: int, margin: float) -> tuple[float, float]:
    """The interval of a precision stated from the probabilities of *calls*
    relevant calls: their mean ± 1.96 standard deviations of the share of
    right calls were the probabilities right (Σ p(1 − p) / n²), widened by
    *margin* for what they get wrong.

    >>> [round(x, 3) for x in stated_interval(8.0, 1.6, 10, 0.05)]
    [0.502, 1.0]
    """
    mean = probability_sum / calls
    half = 1.96 * math.sqrt(variance_sum) / calls + margin
    return max(0.0, mean - half), min(1.0, mean + half)


def spanning(intervals: list[tuple[float, float]], margin: float = PRECISION_MARGIN) -> tuple[float, float]:
    """The interval that holds every one of *intervals* (estimates from
    different evidence), widened by *margin* and kept in [0, 1].

    >>> [round(x, 2) for x in spanning([(0.5, 0.7), (0.6, 0.95)], 0.1)]
    [0.4, 1.0]
    """
    low, high = min(lo for lo, _ in intervals), max(hi for _, hi in intervals)
    return max(0.0, low - margin), min(1.0, high + margin)


def wilson(successes: float, trials: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson's 95 % interval of a proportion (sound for small counts).

    >>> [round(x, 3) for x in wilson(8, 10)]
    [0.49, 0.943]
    """
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    return max(0.0, centre - half), min(1.0, centre + half)
