"""Exploration by rule (docs/methods.md §2, "Exploration by rule"): which
download slots a focused crawl explores before it commits to one site.

A best-first crawl ranks every queued link by the verdicts of the pages it
came from; two seeds' index pages judged 0.0023 and 0.0006 decide that
every link of the first site outranks every link of the second, and the
second site is never fetched beyond its index however much of the topic it
holds. Pant, Srinivasan & Menczer found the mix of exploration and
exploitation essential (BFS256 is not trapped where BFS1 is); the rule here
makes the mix a rule over *sites*, as bandits over what a crawl fetches next
do (Meusel, Mika & Blanco 2014; Gouriten, Maniu & Senellart 2014), in two
steps:

1. **Probe.** Every arm — the slot of each seed, and a slot where the crawl
   finds a page it calls relevant, judged at least as relevant as the best
   arm's pages are on average (evidence it may pay; up to *max_arms*, its
   probes within *share*) — gets its
   *probes* best URLs fetched before anything else the slot's turn could
   take: an arm's best goes first while the arm has had fewer requests than
   *probes* beyond its seeds.
2. **Successive elimination** (Even-Dar, Mannor & Mansour 2006). Once
   probed, an arm keeps exploring while its pages could still be the best
   arm's: the mean relevance the judge gave them, plus *z* standard errors,
   reaches the leader's less *z* of its own (the leader: the arm whose
   lower end is highest; it needs no exploring, the window feeds it). The
   standard error is the crawl's spread of relevance over √(the arm's pages):
   a few pages' own spread says too little. The judge's relevance, not its
   calls: a judge's threshold can call nearly every page relevant, or none,
   while its relevance still ranks one site's pages above another's.
   Those pops are at most *share* of the crawl's.

With one arm alone nothing explores: a crawl of one site goes as it did.

An arm's best "goes first" only when its slot can take a request now: under
politeness the probe of a second site takes the free slot while the first
site's host is busy, and costs no wall time. An arm away from the crawl's
home never explores; a slot whose last answer failed neither.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from pathlib import Path

    from crawlproject.policy.scope import HomeSites

__all__ = ["SiteExploration"]


@dataclass
class _Spread:
    """Relevance judged: how many, their mean and sum of squared deviations (Welford)."""

    count: int = 0
    mean: float = 0.0
    squares: float = 0.0

    def add(self, value: float) -> None:
        self.count += 1
        delta = value - self.mean
        self.mean += delta / self.count
        self.squares += delta * (value - self.mean)

    @property
    def deviation(self) -> float:
        return math.sqrt(self.squares / (self.count - 1)) if self.count > 1 else 0.0


@dataclass
class _Arm:
    seed: bool = True  #: a seed's site (else found paying: its probes count in the share)
    handed: int = 0  #: requests handed out beyond its seeds
    pages: _Spread = field(default_factory=_Spread)  #: the relevance of its pages judged
    live: bool = True  #: its last answer was a 2xx (or none came yet)


class SiteExploration:
    """The arms and the rule; the scheduler's objective feeds it and asks
    :meth:`exploring` before every pop.

    >>> explore = SiteExploration(probes=2, share=0.5, z=1.0)
    >>> explore.seed("a"); explore.seed("b")
    >>> explore.exploring()
    ['a', 'b']
    >>> for slot in "aabb": explore.handed(slot)
    >>> explore.exploring()  # probed, no verdict yet
    []
    >>> for slot, relevance in ("a", 0.9), ("a", 0.7), ("b", 0.6), ("b", 0.8):
    ...     explore.answered(slot, ok=True); explore.judged(slot, relevance, relevance > 0.5)
    >>> explore.exploring()  # b (0.7 ± 0.09) may still be as good as a (0.8 ± 0.09)
    ['b']
    >>> for relevance in 0.2, 0.1, 0.1:
    ...     explore.handed("b"); explore.answered("b", ok=True); explore.judged("b", relevance, False)
    >>> explore.exploring()  # b's 0.36 + 0.15 cannot reach a's 0.8 − 0.24: the window alone goes on
    []
    """

    def __init__(self, probes: int, share: float, z: float, max_arms: int = 50, home: HomeSites | None = None):
        self.probes, self.share, self.z, self.max_arms = probes, share, z, max_arms
        #: the crawl's one home (crawlproject.strategies.factory.home_of): arms away from it never explore
        self.home = home
        self._arms: dict[str, _Arm] = {}
        self._crawl = _Spread()  # every page judged
        self.pops = 0  #: requests handed out by the crawl
        self.explored = 0  #: of them, to an arm past its probes while it explored
        self._current: list[str] | None = None  # what exploring() says until something changes

    # -- what the crawl tells -------------------------------------------------

    def seed(self, slot: str) -> None:
        """A seed's slot: an arm."""
        self._arm(slot)

    def handed(self, slot: str, seed: bool = False) -> None:
        """A request to *slot* was handed out (*seed*: a start request)."""
        self.pops += 1
        arm = self._arms.get(slot)
        if arm is None or seed:
            return
        if (arm.handed >= self.probes or not arm.seed) and self._current is not None and slot in self._current:
            self.explored += 1
        arm.handed += 1
        self._current = None

    def answered(self, slot: str, ok: bool) -> None:
        arm = self._arms.get(slot)
        if arm is not None and arm.live != ok:
            arm.live = ok
            self._current = None

    def judged(self, slot: str, relevance: float | None, relevant: bool | None = None) -> None:
        """The judge's verdict on a page of *slot*: its *relevance* and its
        call (None: no verdict)."""
        if relevance is None:
            return
        arm = self._arms.get(slot)
        if arm is None and relevant and relevance >= self._leading_mean():
            arm = self._arm(slot, seed=False)
        self._crawl.add(relevance)
        if arm is not None:
            arm.pages.add(relevance)
            self._current = None

    def replay(self, history: Path) -> None:
        """What the earlier runs of a resumed crawl recorded (its
        history.jsonl): their requests and verdicts, as if this run had made
        them, so it goes on exploring where they stopped."""
        try:
            lines = history.read_text(encoding="utf-8").splitlines()
        except OSError:
            return
        for line in lines:
            try:
                record = json.loads(line)
                slot = urlsplit(record.get("requested_url") or record["url"]).hostname or ""
            except (ValueError, KeyError, TypeError, AttributeError):
                continue  # a line the output's repair left cannot be: counted as nothing
            self.handed(slot, seed=record.get("score") is None)
            status = record.get("status")
            self.answered(slot, status is not None and 200 <= status < 300)
            self.judged(slot, record.get("relevance"), record.get("relevant"))

    # -- what the pop asks ------------------------------------------------------

    def exploring(self) -> list[str]:
        """The slots whose best URL goes first now (when the slot is free)."""
        if self._current is None:
            self._current = self._decide()
        return self._current

    def describe(self) -> dict[str, int]:
        """For the stats: the arms, the pops, and those exploration took."""
        return {"arms": len(self._arms), "explored_pops": self.explored, "pops": self.pops}

    def _arm(self, slot: str, seed: bool = True) -> _Arm | None:
        arm = self._arms.get(slot)
        if arm is None and len(self._arms) < self.max_arms and not self._away(slot):
            arm = self._arms[slot] = _Arm(seed=seed)
            self._current = None
        return arm

    def _leading_mean(self) -> float:
        """The best arm's mean relevance (the crawl's, before any arm was judged)."""
        means = [arm.pages.mean for arm in self._arms.values() if arm.pages.count]
        return max(means) if means else self._crawl.mean

    def _away(self, slot: str) -> bool:
        return self.home is not None and self.home.away(slot)

    def _decide(self) -> list[str]:
        """The arms to explore, in the order they go: those probed least
        first (every site its first probe before any its second), then
        those that may still be the best, the highest upper end first. One
        site alone has nothing to be compared with: nothing explores."""
        live = {slot: arm for slot, arm in self._arms.items() if arm.live}
        if len(live) < 2:
            return []
        spent = self.explored >= self.share * max(self.pops, 1)
        probing = sorted((slot for slot, arm in live.items() if arm.handed < self.probes and (arm.seed or not spent)),
                         key=lambda slot: live[slot].handed)
        probed = {slot: arm.pages for slot, arm in live.items() if arm.handed >= self.probes and arm.pages.count}
        if len(probed) < 2 or spent:
            return probing
        deviation = self._crawl.deviation
        margin = {slot: self.z * deviation / math.sqrt(pages.count) for slot, pages in probed.items()}
        leader = max(probed, key=lambda slot: (probed[slot].mean - margin[slot], probed[slot].count))
        floor = probed[leader].mean - margin[leader]
        upper = {slot: pages.mean + margin[slot] for slot, pages in probed.items() if slot != leader}
        return probing + sorted((slot for slot in upper if upper[slot] >= floor), key=lambda slot: -upper[slot])
