"""A Scrapy scheduler whose frontier owns the crawl order (docs/methods.md §1).

Stock Scrapy orders by integer priorities, per download slot; a focused
crawl needs one global best-first order by float score. This scheduler
keeps Scrapy's scheduler contract — what a spider that asks for no focus
sees is what Scrapy's own scheduler does, and Scrapy's own scheduler and
engine tests pass against it (make test runs them) — and joins small pieces:

* the dupefilter (``DUPEFILTER_CLASS``) and fingerprinter
  (``REQUEST_FINGERPRINTER_CLASS``) tell requests apart, as in Scrapy; with
  the add-on's pair the frontier filters repeats by canonical URL
  (crawlproject.frontier.dupefilter); ``dont_filter`` always schedules;
* the frontier backend (``FOCUS_FRONTIER_BACKEND``, crawlproject.frontier.base)
  holds queued URLs, pops the best one whose download slot can take a
  request now, breaks ties as Scrapy's queues do (crawlproject.frontier.ties)
  and spills what passes its bound to disk;
* the crawl's objective (``FOCUS_OBJECTIVE``, crawlproject.frontier.objective):
  which download slots may take a request now, and how far down the queue —
  every ready slot its best URL when the budget is *time*, only among the N
  best queued when it is *pages* (a free host never spends a page of the
  budget on a poor link while the good ones wait for theirs);
* the codec (crawlproject.frontier.codec) turns a Request into what a queued
  URL keeps, and back;
* Best-N-First batches (crawlproject.frontier.batches), with
  ``FOCUS_BATCH_SIZE`` > 1;
* the page budget (crawlproject.frontier.budget, the crawl's one): no request is handed out once the
  pages fetched and in flight reach ``CLOSESPIDER_PAGECOUNT`` (or
  ``FOCUS_OK_PAGECOUNT``), so a crawl never fetches more than its budget.

The scheduler itself follows each lease: a popped URL's request may come
back as a retry or a redirect (*continuations*: the same fetch, served
before anything else), and the lease is acknowledged when the engine is
done with the last request of that fetch — whatever the spider, whatever
ended it (a response processed, a failure, a request refused by a
middleware). What the crawl leaves in flight when it stops is given back to
the frontier.
"""

from __future__ import annotations

import logging
import math
import os
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.core.downloader import Downloader
from scrapy.core.scheduler import BaseScheduler
from scrapy.utils.job import job_dir
from scrapy.utils.misc import build_from_crawler, load_object

from crawlproject import config
from crawlproject.frontier.base import PushOutcome
from crawlproject.frontier.batches import BestNFirstBatches
from crawlproject.frontier.budget import PageBudget, page_budget
from crawlproject.frontier.codec import RequestCodec, meta_of
from crawlproject.frontier.dupefilter import frontier_filters
from crawlproject.frontier.objective import SlotObjective
from crawlproject.frontier.stats import StatsBuffer
from crawlproject.scrapy_private import engine_of, on_request_finished
from crawlproject.signals import frontier_scheduler_closed, frontier_scheduler_opened
from crawlproject.web import meta as keys
from crawlproject.web.meta import page_of_lease

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.dupefilters import BaseDupeFilter
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector
    from twisted.internet.defer import Deferred

    from crawlproject.frontier.base import Frontier

logger = logging.getLogger(__name__)

_STAT_BY_OUTCOME = {outcome: f"frontier/{outcome.value}" for outcome in PushOutcome}
_STAT_BY_OUTCOME[PushOutcome.ADDED_EVICTING] = "frontier/added"
_STAT_BY_OUTCOME[PushOutcome.ADDED_OVER_BOUND] = "frontier/added"
_FILTERED = frozenset({PushOutcome.DUPLICATE, PushOutcome.ALREADY_FETCHED})

KEY_SUFFIX = keys.KEY_SUFFIX  # canonical#… keys never meet a page's key


@dataclass(slots=True)
class _Fetch:
    """A leased URL being fetched: how many of its requests are in flight
    (a retry or redirect adds one before its original is done), and whether
    its response reached the spider (after that, a request carrying the
    lease in copied meta is a new link, not a continuation)."""

    in_flight: int = 1
    responded: bool = False


class FrontierScheduler(BaseScheduler):
    def __init__(
        self,
        crawler: Crawler,
        frontier: Frontier,
        dupefilter: BaseDupeFilter,
        batches: BestNFirstBatches | None = None,
        persistent: bool = False,
        budget: PageBudget | None = None,
        objective: SlotObjective | None = None,
    ):
        self.crawler = crawler
        self.objective = objective or SlotObjective(crawler)
        self.frontier = frontier
        self.df = dupefilter
        self.frontier_filters = frontier_filters(dupefilter)
        self.batches = batches
        self.persistent = persistent
        self.budget = budget
        self.stats: StatsCollector = crawler.stats  # type: ignore[assignment]
        self.counts = StatsBuffer(self.stats, gauges=self._gauges, keep_max=frozenset({"frontier/queued"}))
        self._last_score: float | None = None
        self._popped = 0  #: requests popped from the frontier by this process
        self._unique = 0  #: requests queued under a key of their own (dont_filter, Scrapy's dupefilter)
        self._run = os.urandom(4).hex()  # unique keys of this run never meet a resumed run's
        self._warned_unserializable = False
        self.codec: RequestCodec | None = None
        self.spider: Spider | None = None
        self._continuations: deque[Request] = deque()
        self._fetches: dict[str, _Fetch] = {}
        crawler.signals.connect(self._response_received, signals.response_received)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        backend = load_object(config.get_str(settings, "FOCUS_FRONTIER_BACKEND"))
        frontier = build_from_crawler(backend, crawler)
        dupefilter = build_from_crawler(load_object(settings["DUPEFILTER_CLASS"]), crawler)
        batch_size = config.get_int(settings, "FOCUS_BATCH_SIZE")
        # Repeatable: one page at a time, the next chosen only once the last
        # was processed (its links queued, the strategy's learning done) —
        # with pages in flight together, the order they arrive in decides.
        repeatable = config.get_bool(settings, "FOCUS_REPEATABLE")
        batches = BestNFirstBatches(batch_size) if batch_size > 1 or repeatable else None
        return cls(crawler, frontier, dupefilter, batches, persistent=job_dir(settings) is not None,
                   budget=page_budget(crawler), objective=SlotObjective.from_crawler(crawler))

    # -- BaseScheduler contract --------------------------------------------

    def open(self, spider: Spider) -> Deferred[None] | None:
        self.spider = spider
        self.codec = RequestCodec(spider)
        self.objective.open(spider)
        self.crawler.signals.send_catch_log(frontier_scheduler_opened, scheduler=self)  # to the frontier ports
        self.frontier.open()
        if engine_of(self.crawler) is not None:  # None in unit tests
            on_request_finished(self.crawler, self.request_finished)
        return self.df.open()

    def close(self, reason: str) -> Deferred[None] | None:
        self.crawler.signals.send_catch_log(frontier_scheduler_closed, scheduler=self)
        self.objective.close()
        # Whatever is still leased (in flight, waiting as a continuation or
        # in an unreleased batch) goes back, so a resumed crawl fetches it.
        returned = self.frontier.leased()
        if returned:
            self.stats.set_value("scheduler/leases_returned", returned)
        self.counts.flush()
        self._continuations.clear()
        self._fetches.clear()
        closing = self.frontier.close()  # a shared frontier may give its leases back off the reactor
        if closing is None:
            return self.df.close(reason)
        return closing.addCallback(lambda _: self.df.close(reason))

    def has_pending_requests(self) -> bool:
        return bool(self._continuations) or len(self.frontier) > 0 or bool(
            self.batches is not None and self.batches.waiting()
        )

    def enqueue_request(self, request: Request) -> bool:
        lease = request.meta.get(keys.LEASE)
        if lease is not None:
            fetch = self._fetches.get(lease)
            if fetch is not None and not fetch.responded:
                return self._continue(request, lease, fetch)
        if self._seen(request):
            return False
        return self._push(request)

    def next_request(self) -> Request | None:
        busy: set[str] = set()
        if self._continuations:
            request = self._continuations.popleft()
        else:
            if self.budget is not None and self.budget.spent():
                return None  # the pages in flight may still fill the budget
            if self.batches is not None:
                entry = self.batches.next(self.frontier, self.objective.exploring)
            else:
                entry, busy = self.objective.pop(self.frontier)
            if entry is None:
                if (busy or self.objective.waiting_for_seeds()) and len(self.frontier):
                    # The URLs wait for their slots: not idle (a download's end
                    # or the wake-up asks again), so no flush — on a shared
                    # frontier that would be a round trip per download.
                    self.counts.inc("scheduler/held")
                    self.objective.held()
                    return None
                self.counts.flush()  # idle: a good moment to bring the stats up to date
                self.frontier.flush()
                return None
            assert self.codec is not None
            request = self.codec.decode(entry)
            request.meta[keys.KEY] = (request.url, page_of_lease(entry.key))
            self._fetches[entry.key] = _Fetch()
            if self.budget is not None:
                self.budget.handed()
            self._last_score = entry.score
            self._popped += 1
            request.meta[keys.POPPED] = self._popped
        self.counts.inc("scheduler/dequeued")
        self.counts.inc("scheduler/dequeued/memory")
        if self.objective.handed(request, busy):  # every slot with requests was busy: it waits in its slot
            self.counts.inc("scheduler/busy_slot")
        return request

    def __len__(self) -> int:
        return len(self.frontier) + len(self._continuations)

    # -- telling requests apart ------------------------------------------------

    def _seen(self, request: Request) -> bool:
        """Scrapy's rule: a request the dupefilter has seen is dropped, unless
        ``dont_filter``. (With the add-on's filter, the frontier decides.)"""
        if request.dont_filter or self.frontier_filters or not self.df.request_seen(request):
            return False
        assert self.spider is not None
        self.df.log(request, self.spider)
        return True

    def _key(self, request: Request, canonical: str) -> tuple[str, bool]:
        """The frontier key of *request*, and whether the frontier must skip
        its seen check: the canonical URL when the frontier tells repeats
        apart and the request is a plain GET; with the request's fingerprint
        when its method or body tell it apart too; a key of its own when it
        is never a repeat (``dont_filter``, or the dupefilter let it through)."""
        if request.dont_filter or not self.frontier_filters:
            self._unique += 1
            return f"{canonical}{KEY_SUFFIX}~{self._run}.{self._unique}", True
        if request.method != "GET" or request.body:
            fingerprint = self.crawler.request_fingerprinter.fingerprint(request)  # type: ignore[union-attr]
            return f"{canonical}{KEY_SUFFIX}{fingerprint.hex()}", False
        return canonical, False

    # -- new URLs and continuations --------------------------------------------

    def _push(self, request: Request) -> bool:
        assert self.codec is not None
        canonical, score, url, payload = self.codec.encode(request)
        key, unique = self._key(request, canonical)
        outcome = self.frontier.push(
            key,
            score,
            payload,
            force=unique,
            url=url,
            slot=request.meta.get(Downloader.DOWNLOAD_SLOT),  # None: the URL's host, as Scrapy's default slot
            start=bool(request.meta.get("is_start_request")),
        )
        self.counts.inc(_STAT_BY_OUTCOME[outcome])
        if outcome is PushOutcome.ADDED_EVICTING:
            self.counts.inc("frontier/evicted")
        if not outcome.queued:
            if outcome in _FILTERED:
                assert self.spider is not None
                self.df.log(request, self.spider)
            return False
        self.counts.inc("scheduler/enqueued")
        if self.persistent and not self.codec.saveable(payload):
            self._unserializable(request)
            self.counts.inc("scheduler/enqueued/memory")
        else:
            self.counts.inc("scheduler/enqueued/disk" if self.persistent else "scheduler/enqueued/memory")
        return True

    def _unserializable(self, request: Request) -> None:
        """As Scrapy's scheduler: counted, and logged once."""
        self.counts.inc("scheduler/unserializable")
        if not self._warned_unserializable:
            self._warned_unserializable = True
            logger.warning(
                "Unable to serialize request: %(request)s - reason: its callback, errback or meta "
                "cannot be pickled - it is kept in memory and lost if the crawl stops; no more "
                "unserializable requests will be logged (stats being collected)",
                {"request": request},
                extra={"spider": self.spider},
            )

    def _continue(self, request: Request, lease: str, fetch: _Fetch) -> bool:
        """A retry or a redirect of a fetch in progress: fetched next."""
        assert self.codec is not None
        encoded = self.codec.encode(request)
        if encoded.key == page_of_lease(lease):
            # A retry, or a redirect to another spelling of the same page.
            if request.url in request.meta.get("redirect_urls", ()):
                self.counts.inc("scheduler/redirect_loop")
                return False
            fetch.in_flight += 1
        else:
            # A redirect to another page: fetched now, unless it was or is being fetched.
            if self._seen(request):
                return False
            key, _ = self._key(request, encoded.key)
            slot = request.meta.get(Downloader.DOWNLOAD_SLOT)
            if not self.frontier.claim(key, encoded.score, encoded.payload, encoded.url, slot=slot):
                self.counts.inc("scheduler/redirect_already_seen")
                return False
            request.meta[keys.LEASE] = key
            request.meta[keys.KEY] = (request.url, encoded.key)
            self._fetches[key] = _Fetch()
            if self.budget is not None:
                self.budget.handed()
        self._continuations.append(request)
        self.counts.inc("scheduler/enqueued")
        return True

    # -- leases ----------------------------------------------------------------

    def _response_received(self, response: Response, request: Request, spider: Spider) -> None:
        fetch = self._fetches.get(request.meta.get(keys.LEASE, ""))
        if fetch is not None and not fetch.responded:
            fetch.responded = True
            if self.budget is not None:
                self.budget.settled()  # the budget counted the page itself
        if fetch is not None:  # not robots.txt
            self.objective.answered(request, response.status)

    def request_finished(self, request: Request) -> None:
        """The engine is done with *request* (called through
        crawlproject.scrapy_private); its lease ends with its last request."""
        self.objective.finished(request)  # dropped before the downloader
        lease = request.meta.get(keys.LEASE)
        fetch = self._fetches.get(lease) if lease is not None else None
        if lease is None or fetch is None:
            return
        fetch.in_flight -= 1
        if fetch.in_flight > 0:
            return
        del self._fetches[lease]
        self.objective.settled(lease)
        if self.budget is not None and not fetch.responded:
            self.budget.settled()  # failed: its place in the budget is free again
        if not fetch.responded:
            self.objective.answered(request, None)
        if request.meta.get(keys.REFUSED):
            self.frontier.refuse(lease, request.url)
        else:
            self.frontier.ack(lease)
        if self.batches is not None:
            self.batches.finished(lease)

    # -- what the frontier port asks (crawlproject.strategies.ports.CrawlerFrontier) ----------

    def rescore(self, scorer: Any, keys: Any = None) -> None:
        """Re-score every queued URL, or those of *keys* (a strategy learned
        something new): ``scorer(url, score, meta)`` with the queued request's meta."""
        self.frontier.rescore(lambda key, score, payload: scorer(page_of_lease(key), score, meta_of(payload)), keys)
        self.stats.inc_value("frontier/rescored" if keys is None else "frontier/rescored_some")

    def sample(self, count: int) -> list[tuple[float, str]]:
        """Up to *count* queued URLs drawn at random: (score, download slot)."""
        return self.frontier.sample(count)

    def in_flight_scores(self) -> list[float]:
        """Scores of the URLs being fetched now (out of the queue)."""
        return self.frontier.in_flight_scores()

    def _gauges(self) -> dict[str, float]:
        gauges: dict[str, float] = {"frontier/queued": len(self.frontier), "frontier/leased": self.frontier.leased()}
        if self.batches is not None:
            gauges["frontier/batches"] = self.batches.batches
        if self._last_score is not None and math.isfinite(self._last_score):
            gauges["frontier/last_score"] = round(self._last_score, 6)
        return gauges
