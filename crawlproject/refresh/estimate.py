"""A page's change rate λ (changes per unit of time) from what its refreshes
saw. A refresh only tells whether the page changed *at least once* since the
last visit, so counting changes underestimates λ; Cho & Garcia-Molina
("Estimating frequency of change", TOIT 2003) give estimators that account
for it, assuming changes arrive as a Poisson process:

* regular visits every I, X of n intervals saw a change (their bias-reduced
  estimator): λ̂ = −ln((n − X + 0.5) / (n + 0.5)) / I;
* irregular visits (intervals t_i): the maximum-likelihood λ solves
  Σ_{changed} t_i / (e^{λ t_i} − 1) = Σ_{unchanged} t_j; when every or no
  interval saw a change the MLE is ∞ or 0, and the bias-reduced form with
  the mean interval is used instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass
class ChangeHistory:
    """The intervals between a page's visits, and whether each saw a change."""

    intervals: list[float] = field(default_factory=list)
    changed: list[bool] = field(default_factory=list)

    def add(self, interval: float, changed: bool) -> None:
        if interval > 0:
            self.intervals.append(interval)
            self.changed.append(changed)

    def __len__(self) -> int:
        return len(self.intervals)


def estimate_rate(history: ChangeHistory) -> float | None:
    """λ̂ for *history*; None with no interval observed yet.

    >>> round(estimate_rate(ChangeHistory([1.0] * 10, [True] * 3 + [False] * 7)), 4)
    0.3365
    """
    n = len(history)
    if n == 0:
        return None
    changes = sum(history.changed)
    regular = max(history.intervals) - min(history.intervals) <= 1e-9 * max(history.intervals)
    if regular or changes in (0, n):
        mean_interval = sum(history.intervals) / n
        return -math.log((n - changes + 0.5) / (n + 0.5)) / mean_interval
    unchanged_time = sum(t for t, c in zip(history.intervals, history.changed, strict=True) if not c)
    changed_times = [t for t, c in zip(history.intervals, history.changed, strict=True) if c]

    def balance(rate: float) -> float:
        return sum(t / math.expm1(rate * t) for t in changed_times) - unchanged_time

    low, high = 1e-9, 1.0
    while balance(high) > 0:  # balance falls from +∞ to −unchanged_time as λ grows
        high *= 2
    # here: scipy.optimize takes half a second to import, which `scrapy list` and the like need not pay
    from scipy.optimize import brentq

    return float(brentq(balance, low, high))
