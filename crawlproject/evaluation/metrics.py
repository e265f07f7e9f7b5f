"""Crawl metrics (docs/methods.md §3), as trajectories over pages fetched.

A crawl is its history: the canonical URLs fetched, in order, with their
HTTP status. Position n of a trajectory describes the first n fetches.
Harvest rate is over pages fetched with status 200 (as in the literature;
dead links are counted apart).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence


@dataclass(frozen=True)
class Fetch:
    url: str  # canonical
    ok: bool  # status 200


def harvest_rate(fetches: Sequence[Fetch], relevant: set[str]) -> list[float]:
    """Relevant ÷ ok pages among the first n fetches, for every n.

    >>> f = [Fetch("a", True), Fetch("x", False), Fetch("b", True), Fetch("c", True)]
    >>> harvest_rate(f, {"a", "c"})
    [1.0, 1.0, 0.5, 0.6666666666666666]
    """
    trajectory, ok, hits = [], 0, 0
    for fetch in fetches:
        if fetch.ok:
            ok += 1
            hits += fetch.url in relevant
        trajectory.append(hits / ok if ok else 0.0)
    return trajectory


def target_recall(fetches: Sequence[Fetch], targets: set[str]) -> list[float]:
    """|targets ∩ fetched| ÷ |targets| after each fetch."""
    if not targets:
        return [0.0] * len(fetches)
    found: set[str] = set()
    trajectory = []
    for fetch in fetches:
        if fetch.ok and fetch.url in targets:
            found.add(fetch.url)
        trajectory.append(len(found) / len(targets))
    return trajectory


def average_relevance(
    fetches: Sequence[Fetch], relevance: Callable[[str], float]
) -> list[float]:
    """Mean relevance score of the ok pages among the first n fetches."""
    trajectory, total, ok = [], 0.0, 0
    for fetch in fetches:
        if fetch.ok:
            ok += 1
            total += relevance(fetch.url)
        trajectory.append(total / ok if ok else 0.0)
    return trajectory


def search_length(fetches: Sequence[Fetch], targets: set[str], fraction: float) -> int | None:
    """Pages fetched until *fraction* of the targets were found; None if never.

    >>> search_length([Fetch("x", True), Fetch("t1", True), Fetch("t2", True)], {"t1", "t2"}, 0.5)
    2
    """
    needed = math.ceil(fraction * len(targets)) if targets else 0
    if needed == 0:
        return 0
    found: set[str] = set()
    for n, fetch in enumerate(fetches, 1):
        if fetch.ok and fetch.url in targets:
            found.add(fetch.url)
            if len(found) >= needed:
                return n
    return None


def static_coverage(fetches: Sequence[Fetch], top: set[str]) -> float:
    """Fraction of the pool's top-n pages this crawl fetched."""
    if not top:
        return 0.0
    return len({f.url for f in fetches if f.ok} & top) / len(top)


def dynamic_mean_rank(fetches: Sequence[Fetch], rank: dict[str, int]) -> list[float]:
    """Mean pool rank (1 = best) of the ok pages fetched so far; lower is better."""
    trajectory, total, ranked = [], 0, 0
    for fetch in fetches:
        if fetch.ok and fetch.url in rank:
            ranked += 1
            total += rank[fetch.url]
        trajectory.append(total / ranked if ranked else math.nan)
    return trajectory


def at(trajectory: Sequence[float], budget: int) -> float:
    """A trajectory's value after *budget* fetches (its last if shorter)."""
    if not trajectory:
        return 0.0
    return trajectory[min(budget, len(trajectory)) - 1]


def gap_closed(value: float, floor: float, ceiling: float) -> float:
    """Fraction of the floor→ceiling gap closed: (H − H_bfs) / (H_path − H_bfs).

    >>> gap_closed(0.25, 0.0, 0.5)
    0.5
    """
    if ceiling == floor:
        return math.nan
    return (value - floor) / (ceiling - floor)
