"""Refresh policies: which B pages of the repository to fetch again now.

Every policy ranks the repository's pages by a priority and refreshes the B
highest (ties: the page refreshed longest ago first). What they know of a
page is what its past refreshes saw (:class:`PageState`), never the live web.

* ``uniform`` — round robin: the page refreshed longest ago;
* ``staleness`` (SBR) — keep as few pages stale as possible: change rates
  λ(p) from the refreshes (crawlproject.refresh.estimate; a change = more
  than τ of the shingles), refresh frequencies f(p) that maximise the
  time-averaged freshness Σ F(λ, f), F = (f/λ)(1 − e^{−λ/f}), under the budget
  (Cho & Garcia-Molina's optimum: ∂F/∂f equal for every refreshed page, so
  pages that change much faster than the budget allows are left alone);
  priority = how overdue a page is, (t − LR)·f;
* ``embarrassment`` (EBR) — Wolf et al.'s optimum (WWW 2002): the
  frequencies that minimise the time-averaged embarrassment, the chance a
  user is shown a stale copy, Σ w(p)(1 − F(λ, f)) under the budget, with
  w(p) = how often p is shown in results × d(p), the fraction of p's
  observed updates that changed ≥ τ of its shingles (the same optimum as
  SBR's, weighted: ∂F/∂f ∝ 1/w; a page never shown is never refreshed);
  priority = how overdue it is, (t − LR)·f;
* ``user-centric`` (docs/methods.md §5) — δQ(p) = the mean over p's past refreshes of
  ΔQ / (t − LR) (crawlproject.refresh.quality.GainMeter); priority
  P(p, t) = δQ(p) · (t − LR).
What a page's own refreshes taught (λ, d, δQ) is shrunk toward the
repository's mean by one pseudo-observation: (n·own + mean) / (n + 1). A
page with no refresh yet gets the mean (before anything is learnt, the same
for all), and one visit that found no change does not mark a page as never
changing — with the raw estimate (λ̂ = 0, δQ = 0) such a page would never
be refreshed again, and most pages do not change in any given week.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from crawlproject import config
from crawlproject.refresh.estimate import ChangeHistory, estimate_rate

DEFAULT_TAU = 0.1


@dataclass
class PageState:
    """What the refreshes of one page observed."""

    last_refresh: float  #: LR(p)
    history: ChangeHistory = field(default_factory=ChangeHistory)  #: intervals, and whether each saw a change > τ
    updates: int = 0  #: refreshes that found the page changed at all
    big_updates: int = 0  #: … by ≥ τ of its shingles
    gains: list[float] = field(default_factory=list)  #: ΔQ / (t − LR) at each refresh
    exposure: float = 0.0  #: how often the page is shown in results (Σ f_q · I(rank)), for EBR
    #: the paper's protocol: what the page is (λ, d, δQ) was fitted on the whole trace; a refresh
    #: only moves LR(p)
    fitted: bool = False

    def observe(self, now: float, fraction: float, tau: float, gain: float = 0.0) -> None:
        """Record a refresh at *now* that found *fraction* of the shingles changed."""
        if self.fitted:
            self.last_refresh = now
            return
        interval = now - self.last_refresh
        self.history.add(interval, fraction > tau)
        if fraction > 0:
            self.updates += 1
            self.big_updates += fraction >= tau
        if interval > 0:
            self.gains.append(gain / interval)
        self.last_refresh = now


class RefreshPolicy:
    name: ClassVar[str] = ""

    def __init__(self, tau: float = DEFAULT_TAU):
        if not 0 <= tau < 1:
            raise ValueError(f"τ must be in [0, 1), got {tau}")
        self.tau = tau

    def priorities(self, pages: list[PageState], now: float, rate: float) -> np.ndarray:
        """One priority per page (higher: refresh sooner); *rate* = refreshes per unit of time."""
        raise NotImplementedError

    def choose(self, pages: list[PageState], now: float, budget: int, period: float = 1.0,
               count: int | None = None) -> list[int]:
        """Indices of the *budget* pages to refresh at *now* (*budget* per
        *period*); *count*: that many of the ranking instead (the rate is still the budget's)."""
        if budget <= 0 or not pages:
            return []
        priority = self.priorities(pages, now, budget / period)
        waited = np.array([now - page.last_refresh for page in pages])
        order = np.lexsort((np.arange(len(pages)), -waited, -priority))  # last key sorts first
        return [int(i) for i in order[: budget if count is None else count]]


class UniformPolicy(RefreshPolicy):
    name = "uniform"

    def priorities(self, pages: list[PageState], now: float, rate: float) -> np.ndarray:
        return np.array([now - page.last_refresh for page in pages])


def _shrunk(values: list[float | None], observations: list[int], default: float) -> np.ndarray:
    """(n·value + mean) / (n + 1) per page, the mean over pages with a value."""
    known = [v for v in values if v is not None]
    prior = float(np.mean(known)) if known else default
    return np.array(
        [prior if v is None else (n * v + prior) / (n + 1) for v, n in zip(values, observations, strict=True)],
        dtype=float,
    )


def change_rates(pages: list[PageState]) -> np.ndarray:
    """λ per page: its own λ̂ shrunk toward the repository's mean."""
    return _shrunk([estimate_rate(page.history) for page in pages], [len(page.history) for page in pages], 1.0)


def optimal_frequencies(rates: np.ndarray, budget_rate: float, weights: np.ndarray | None = None) -> np.ndarray:
    """Refresh frequencies maximising Σ w·F(λ, f) with Σ f = *budget_rate*
    (*weights* w: 1 for every page unless given).

    With x = λ/f, ∂(wF)/∂f = w·g(x)/λ, g(x) = 1 − (1 + x)e^{−x} (increasing
    from 0 to 1): every refreshed page has g(x) = μλ/w; pages with μλ/w ≥ 1
    (and every page of weight 0) get f = 0. μ is found by bisection so that
    the frequencies spend the budget.
    """
    rates = np.maximum(rates, 1e-12)
    scaled = rates if weights is None else np.where(weights > 0, rates / np.maximum(weights, 1e-300), np.inf)
    if not np.isfinite(scaled).any():
        return np.zeros_like(rates)

    def frequencies(mu: float) -> np.ndarray:
        target = mu * scaled
        low, high = np.full_like(rates, 1e-9), np.full_like(rates, 60.0)
        for _ in range(60):  # solve g(x) = target for x, every page at once
            middle = (low + high) / 2
            below = 1 - (1 + middle) * np.exp(-middle) < target
            low, high = np.where(below, middle, low), np.where(below, high, middle)
        return np.where(target < 1, rates / ((low + high) / 2), 0.0)

    low, high = 0.0, float(1 / scaled.min())
    for _ in range(80):
        middle = (low + high) / 2
        if frequencies(middle).sum() > budget_rate:
            low = middle
        else:
            high = middle
    return frequencies(high)


class StalenessPolicy(RefreshPolicy):
    name = "staleness"

    def priorities(self, pages: list[PageState], now: float, rate: float) -> np.ndarray:
        frequency = optimal_frequencies(change_rates(pages), rate)
        return np.asarray(np.array([now - page.last_refresh for page in pages]) * frequency)


class EmbarrassmentPolicy(RefreshPolicy):
    name = "embarrassment"

    def priorities(self, pages: list[PageState], now: float, rate: float) -> np.ndarray:
        share = _shrunk([page.big_updates / page.updates if page.updates else None for page in pages],
                        [page.updates for page in pages], 1.0)
        weights = np.array([page.exposure for page in pages]) * share
        frequency = optimal_frequencies(change_rates(pages), rate, weights)
        return np.asarray(np.array([now - page.last_refresh for page in pages]) * frequency)


class UserCentricPolicy(RefreshPolicy):
    name = "user-centric"

    def priorities(self, pages: list[PageState], now: float, rate: float) -> np.ndarray:
        gain_rate = _shrunk([float(np.mean(page.gains)) if page.gains else None for page in pages],
                            [len(page.gains) for page in pages], 1.0)
        return np.asarray(gain_rate * np.array([now - page.last_refresh for page in pages]))


POLICIES: dict[str, type[RefreshPolicy]] = {
    policy.name: policy for policy in (UniformPolicy, StalenessPolicy, EmbarrassmentPolicy, UserCentricPolicy)
}


def policy_named(name: str, tau: float = DEFAULT_TAU, setting: str = "policy") -> RefreshPolicy:
    """One of :data:`POLICIES` by name, or a subclass of :class:`RefreshPolicy`
    of your own by its import path (``mypackage.policies.MyPolicy``), read as
    strategies and judges are (:func:`crawlproject.config.named_class`)."""
    registry = {named: f"{policy.__module__}.{policy.__qualname__}" for named, policy in POLICIES.items()}
    chosen: type[RefreshPolicy] = config.named_class(setting, name, registry, RefreshPolicy, "refresh policy")
    return chosen(tau)


def freshness(rate: float, frequency: float) -> float:
    """F(λ, f): the time-averaged chance a page refreshed every 1/f is fresh."""
    if frequency <= 0:
        return 0.0
    return frequency / rate * (1 - math.exp(-rate / frequency)) if rate > 0 else 1.0
