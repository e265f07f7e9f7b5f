"""Which hosts the pages objective may feed from below its window
(``FOCUS_PAGES_WAIT``; docs/architecture.md, "The wait").

A fetch below the window spends a page of the budget on a URL the global
order would have fetched later, or never. It is worth its page only on a host
whose pages the crawl finds relevant as often as it finds its own: the
scheduler keeps, per download slot, the pages answered and those the judge
called relevant, and bars from below the window (Frontier.pop's *barred*) a
slot

* whose first request is out and unanswered (a slot gets one probe);
* whose last answer was not a 2xx (links out of the web the crawl reaches);
* once the crawl judges pages: whose pages were relevant less often than the
  crawl's, or never;
* never tried, while the probes so far (each slot's first request) were
  relevant less often than the crawl's pages, those still out counted as not
  relevant. One relevant probe is counted before any (add-one): the first
  probe goes, and more go only as they pay.

A topic bound to its sites ("the course pages of this university": the
crawl's one home, FOCUS_HOME or a site-bound model's, which the scheduler
sets from the spider's Focus when it opens) bars every slot away from its
home: a page there is worth
nothing to the topic, however relevant the judge finds it (on WebKB the
judge calls another university's course pages relevant as readily as the
topic's own, and the wait fed them).

A slot barred here is still crawled in the global order, through the window.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from crawlproject.policy.scope import HomeSites

__all__ = ["HostHarvest"]


@dataclass
class _Harvest:
    answered: int = 0
    relevant: int = 0

    def as_often_as(self, other: _Harvest) -> bool:
        """Whether these pages were relevant at least as often as *other*'s."""
        return self.relevant * other.answered >= other.relevant * self.answered


class HostHarvest:
    """The per-slot record behind the wait's rule (a Container of the slots barred).

    >>> hosts = HostHarvest()
    >>> hosts.handed("a"), "a" in hosts, "b" in hosts  # a probe of a is out; b would be the second
    (True, True, False)
    >>> hosts.answered("a", ok=True, probe="a"); hosts.judged("a", relevant=True, probe="a")
    >>> hosts.handed("b"); hosts.answered("b", ok=True, probe="b"); hosts.judged("b", relevant=False, probe="b")
    True
    >>> "a" in hosts, "b" in hosts, "c" in hosts  # probes paid 2 of 3 (add-one), the crawl 1 of 2
    (False, True, False)
    >>> hosts.answered("a", ok=False); "a" in hosts  # its last answer an error
    True
    >>> from crawlproject.policy.scope import HomeSites
    >>> bound = HostHarvest(HomeSites("domain", ["www.cs.utexas.edu"]))
    >>> "www.cs.wisc.edu" in bound, "www.utexas.edu" in bound  # away from home; at home, never tried
    (True, False)
    """

    def __init__(self, home: HomeSites | None = None) -> None:
        #: a topic bound to its sites: every slot away from its home is barred
        self.home = home
        self._away: dict[str, bool] = {}
        self._slots: dict[str, _Harvest] = {}
        self._live: set[str] = set()
        self._probing: set[str] = set()
        self.crawl = _Harvest()
        self.probes = _Harvest(answered=1, relevant=1)  # add-one: the first probe goes
        #: Whether any page was judged (a crawl without a judge: liveness alone).
        self.judging = False

    def handed(self, slot: str) -> bool:
        """A request to *slot* handed out: whether it probes a slot never tried."""
        if slot in self._slots or slot in self._probing:
            return False
        self._probing.add(slot)
        return True

    def answered(self, slot: str, ok: bool, probe: str | None = None) -> None:
        """A fetch of *slot* answered (*ok*: a 2xx) or failed; *probe*: the
        slot its request probed (a redirect may land on another)."""
        if probe is not None and probe in self._probing:
            self._probing.discard(probe)
            self.probes.answered += 1
        self._slots.setdefault(slot, _Harvest()).answered += 1
        self.crawl.answered += 1
        if ok:
            self._live.add(slot)
        else:
            self._live.discard(slot)

    def judged(self, slot: str, relevant: bool | None, probe: str | None = None) -> None:
        """The judge's call on a page of *slot* (None: the crawl has no judge)."""
        if relevant is None:
            return
        self.judging = True
        if relevant:
            self._slots.setdefault(slot, _Harvest()).relevant += 1
            self.crawl.relevant += 1
            if probe is not None:
                self.probes.relevant += 1

    def __contains__(self, slot: object) -> bool:
        """Whether *slot* is barred from below the window."""
        if self.home is not None and isinstance(slot, str):
            away = self._away.get(slot)
            if away is None:
                away = self.home.away(slot)
                if self.home.fixed:  # else asked again: a home of the seeds' sites grows
                    self._away[slot] = away
            if away:
                return True
        if slot in self._probing:
            return True
        harvest = self._slots.get(slot)  # type: ignore[call-overload]
        if harvest is None:
            if not self.judging:
                return False
            out = _Harvest(self.probes.answered + len(self._probing), self.probes.relevant)
            return not out.as_often_as(self.crawl)
        if slot not in self._live:
            return True
        return self.judging and not (harvest.relevant and harvest.as_often_as(self.crawl))
