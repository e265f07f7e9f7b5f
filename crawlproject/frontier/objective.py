"""The crawl's objective, in the scheduler: which download slots may take a
request now, and how far down the queue (docs/architecture.md, "The crawl's
objective").

* **time** (``FOCUS_OBJECTIVE=time``, plain spiders): every slot that can
  take a request takes the best URL it has, as Scrapy's
  ``DownloaderAwarePriorityQueue`` fills slots; when every slot with URLs is
  busy, none is handed out and the engine is woken when the first slot's
  delay ends (or, without delays, a download's end asks again);
* **pages** (focused spiders): a free slot takes a URL only among the N best
  queued (the window) — with a wait (``FOCUS_PAGES_WAIT``) also below them,
  on a slot whose pages pay (crawlproject.frontier.host_harvest);
* slots ignored (``FOCUS_SLOT_AWARE=False``): the global best, whatever its slot.

A request handed to the engine but not yet in the downloader (its
middlewares run first) counts as busy in its slot.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy import signals

from crawlproject import config
from crawlproject import signals as focus_signals
from crawlproject.corpus.output import CrawlOutput
from crawlproject.frontier.exploration import SiteExploration
from crawlproject.frontier.host_harvest import HostHarvest
from crawlproject.frontier.pop_rule import PopRule
from crawlproject.scrapy_private import SlotWatch, default_slot_key, wake_engine
from crawlproject.web import meta as keys

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

    from crawlproject.frontier.base import Frontier, FrontierEntry

__all__ = ["SlotObjective", "pages_window"]


def pages_window(settings: Any) -> int:
    """N of the pages objective (``FOCUS_PAGES_WINDOW``, else
    ``CONCURRENT_REQUESTS``), or 0 when the crawl's budget is time."""
    if config.get_choice(settings, "FOCUS_OBJECTIVE") != "pages":
        return 0
    return config.get_int(settings, "FOCUS_PAGES_WINDOW") or max(1, settings.getint("CONCURRENT_REQUESTS"))


class SlotObjective:
    def __init__(self, crawler: Crawler, slot_aware: bool = True, window: int = 0, wait: float = 0.0,
                 exploration: SiteExploration | None = None, seed_wait: float = 0.0):
        self.crawler = crawler
        self.slot_aware = slot_aware
        #: The pages objective's N (0: the time objective). A slot with a delay
        #: and nothing outstanding then takes its request at once, to wait out
        #: the delay in the slot: the downloader's timer sends it, and the
        #: download's end asks the engine for the next (no poll, no stall).
        self.window = window if slot_aware else 0
        #: How many of their delays a free slot's best below the window waits
        #: for the busy slots holding the URLs above it (Frontier.pop; 0: as
        #: long as they take); only on a slot whose pages pay (HostHarvest).
        self.wait = wait if self.window else 0.0
        self.harvest = HostHarvest()
        #: Exploration by rule (FOCUS_EXPLORE): the slots whose best goes first;
        #: on only once the spider's Focus judges pages (open).
        self.exploration = exploration if slot_aware else None
        #: With exploration, the crawl's first choice of a link waits for its
        #: seeds' answers (at most this long): which seed answered first then
        #: decides nothing.
        self.seed_wait = seed_wait
        self._seeds_out: set[str] = set()  # the leases of seeds handed out and not answered
        self._seeds_until: float | None = None
        #: The time objective's wake-up: when every slot with URLs is busy, a
        #: request would wait in its slot holding a place among those in
        #: flight, so none is handed out and the engine is asked again when
        #: the first slot's delay ends (or, without delays, when a download ends).
        self._wake: Any = None
        self._handed_out: dict[Request, str] = {}
        self._handed_per_slot: Counter[str] = Counter()
        self._slots = SlotWatch(crawler)
        if slot_aware:
            crawler.signals.connect(self._reached_downloader, signals.request_reached_downloader)
        if self.wait or self.exploration is not None:
            crawler.signals.connect(self._page_judged, focus_signals.page_judged)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        exploration = SiteExploration(
            config.get_int(settings, "FOCUS_EXPLORE_PROBES"), config.get_float(settings, "FOCUS_EXPLORE_SHARE"),
            config.get_float(settings, "FOCUS_EXPLORE_CONFIDENCE"), config.get_int(settings, "FOCUS_EXPLORE_MAX_ARMS"),
        ) if config.get_bool(settings, "FOCUS_EXPLORE") else None
        return cls(crawler, config.get_bool(settings, "FOCUS_SLOT_AWARE"), pages_window(settings),
                   config.get_float(settings, "FOCUS_PAGES_WAIT"), exploration,
                   config.get_float(settings, "FOCUS_EXPLORE_SEED_WAIT"))

    def open(self, spider: Spider) -> None:
        """The wait and the exploration stay at the crawl's home, the one its
        Focus keeps (crawlproject.strategies.factory.home_of: a site-bound
        model's, else FOCUS_HOME's); a spider without a Focus has none. A
        crawl whose Focus does not explore (it judges nothing, or its
        strategy is a baseline) explores nothing; one that does starts with
        an arm per seed's slot, and a resumed crawl with what its earlier
        runs' history says of them."""
        focus = getattr(spider, "focus", None)
        self.harvest.home = getattr(focus, "home", None)
        if self.exploration is not None and not getattr(focus, "explores", False):
            self.exploration = None
        if self.exploration is not None:
            self.exploration.home = self.harvest.home
            for url in getattr(spider, "seed_urls", ()):
                self.exploration.seed(urlsplit(url).hostname or "")
            output = getattr(spider, "crawl_output", None)
            if isinstance(output, CrawlOutput) and output.resumed:
                self.exploration.replay(output.path / "history.jsonl")

    def exploring(self) -> list[str]:
        """The slots whose best URL goes first now (crawlproject.frontier.exploration)."""
        return self.exploration.exploring() if self.exploration is not None else []

    def waiting_for_seeds(self) -> bool:
        """Whether seeds handed out are still unanswered, and the crawl
        chooses no link before they are (FOCUS_EXPLORE_SEED_WAIT)."""
        if not self._seeds_out or self._seeds_until is None:
            return False
        if time.monotonic() < self._seeds_until:
            return True
        self._seeds_out.clear()  # waited long enough: the crawl goes on without them
        return False

    def pop(self, frontier: Frontier) -> tuple[FrontierEntry | None, set[str]]:
        """The entry the objective allows now, and the slots that were busy."""
        if not self.slot_aware:
            return frontier.pop(), set()
        busy = self._slots.busy(self._handed_per_slot, wait_in_slot=self.window > 0)
        if self.waiting_for_seeds():  # more seeds only
            return frontier.pop(PopRule(busy, hold=True, floor=math.inf)), busy
        explore = self.exploring()
        entry = frontier.pop(PopRule(busy, only=explore)) if explore else None
        if entry is None:
            entry = frontier.pop(PopRule(busy, self.window, hold=True, wait=self.wait, barred=self.harvest))
        if entry is None and busy and not self.window and self._slots.next_ready is None:
            # Every slot busy with downloads, none waiting on a delay alone:
            # the best anyway, to wait in its slot (Scrapy's contract: a
            # scheduler with requests hands one out).
            entry = frontier.pop(PopRule(busy))
        return entry, busy

    def held(self) -> None:
        """The URLs wait for their slots: the engine is asked again when the
        first slot's delay ends (with the pages objective no slot waits on a
        delay alone: a download's end asks) — or, while the crawl waits for
        its seeds, when that wait ends (a seed's answer asks sooner)."""
        ready = self._seeds_until if self.waiting_for_seeds() else self._slots.next_ready
        if ready is None:
            return
        delay = max(0.0, ready - time.monotonic())
        if self._wake is not None and self._wake.active():
            if self._wake.getTime() <= self._wake.seconds() + delay:
                return
            self._wake.cancel()
        from twisted.internet import reactor

        self._wake = reactor.callLater(delay, wake_engine, self.crawler)  # type: ignore[attr-defined,arg-type]

    def handed(self, request: Request, busy: set[str]) -> bool:
        """*request* handed to the engine: whether its slot was busy (it waits there)."""
        if not self.slot_aware:
            return False
        slot = default_slot_key(request)
        self._handed_out[request] = slot
        self._handed_per_slot[slot] += 1
        if self.exploration is not None:
            seed = bool(request.meta.get(keys.SEED))
            if seed:
                self.exploration.seed(slot)  # a seed no seed list named (Redis)
                self._seeds_out.add(request.meta[keys.LEASE])
                if self._seeds_until is None:
                    self._seeds_until = time.monotonic() + self.seed_wait
            self.exploration.handed(slot, seed)
        if self.wait and self.harvest.handed(slot):
            request.meta[keys.PROBE] = slot
        return slot in busy

    def answered(self, request: Request, status: int | None) -> None:
        """A fetch of the crawl's answered with *status*, or failed (None)."""
        ok = status is not None and 200 <= status < 300
        if self.wait:
            self.harvest.answered(default_slot_key(request), ok, request.meta.get(keys.PROBE))
        if self.exploration is not None:
            self.exploration.answered(default_slot_key(request), ok)

    def settled(self, lease: str) -> None:
        """The fetch of *lease* is over: its page was processed (its links
        queued), or it failed."""
        self._seeds_out.discard(lease)

    def finished(self, request: Request) -> None:
        """The engine is done with *request*: dropped before the downloader, if it never reached it."""
        slot = self._handed_out.pop(request, None)
        if slot is not None:
            self._handed_per_slot[slot] -= 1
            if not self._handed_per_slot[slot]:
                del self._handed_per_slot[slot]

    def close(self) -> None:
        if self._wake is not None and self._wake.active():
            self._wake.cancel()
        if self.exploration is not None and self.crawler.stats is not None:
            for name, value in self.exploration.describe().items():
                self.crawler.stats.set_value(f"focus/explore/{name}", value)
        self._handed_out.clear()

    def _reached_downloader(self, request: Request, spider: Spider) -> None:
        self._slots.reached(request)
        self.finished(request)

    def _page_judged(self, request: Request, relevant: bool | None, relevance: float | None = None) -> None:
        slot = default_slot_key(request)
        if self.wait:
            self.harvest.judged(slot, relevant, request.meta.get(keys.PROBE))
        if self.exploration is not None:
            self.exploration.judged(slot, relevance, relevant)
