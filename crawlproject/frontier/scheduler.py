"""A Scrapy scheduler whose frontier owns the crawl order (SPEC §1).

Stock Scrapy orders by integer priorities, per download slot; a focused
crawl needs one global best-first order by float score. This scheduler
keeps Scrapy's ``BaseScheduler`` contract and joins small pieces:

* the frontier backend (``FOCUS_FRONTIER_BACKEND``, crawlproject.frontier.base)
  holds queued URLs under their canonical key, and leases popped ones;
* the codec (crawlproject.frontier.codec) turns a Request into what a queued
  URL keeps, and back;
* Best-N-First batches (crawlproject.frontier.batches), with
  ``FOCUS_BATCH_SIZE`` > 1.

The scheduler itself follows each lease: a popped URL's request may come
back as a retry or a redirect (*continuations*: the same fetch, served
before anything else, never refused by a full frontier), and the lease is
acknowledged when the engine is done with the last request of that fetch —
whatever the spider, whatever ended it (a response processed, a failure, a
request refused by a middleware). What the crawl leaves in flight when it
stops is given back to the frontier.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.core.scheduler import BaseScheduler
from scrapy.utils.job import job_dir
from scrapy.utils.misc import build_from_crawler, load_object

from crawlproject import config
from crawlproject import signals as focus_signals
from crawlproject.frontier.base import PushOutcome
from crawlproject.frontier.batches import BestNFirstBatches
from crawlproject.frontier.codec import RequestCodec, meta_of
from crawlproject.frontier.stats import StatsBuffer
from crawlproject.scrapy_private import engine_of, on_request_finished
from crawlproject.web import meta as keys

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

    from crawlproject.frontier.base import Frontier

logger = logging.getLogger(__name__)

_STAT_BY_OUTCOME = {outcome: f"frontier/{outcome.value}" for outcome in PushOutcome}
_STAT_BY_OUTCOME[PushOutcome.ADDED_EVICTING] = "frontier/added"
_STAT_BY_OUTCOME[PushOutcome.ADDED_OVER_BOUND] = "frontier/added"


class _Fetch:
    """A leased URL being fetched: how many of its requests are in flight
    (a retry or redirect adds one before its original is done), and whether
    its response reached the spider (after that, a request carrying the
    lease in copied meta is a new link, not a continuation)."""

    __slots__ = ("in_flight", "responded")

    def __init__(self) -> None:
        self.in_flight = 1
        self.responded = False


class FrontierScheduler(BaseScheduler):
    def __init__(
        self,
        crawler: Crawler,
        frontier: Frontier,
        batches: BestNFirstBatches | None = None,
        persistent: bool = False,
    ):
        self.crawler = crawler
        self.frontier = frontier
        self.batches = batches
        self.persistent = persistent
        self.stats: StatsCollector = crawler.stats  # type: ignore[assignment]
        self.counts = StatsBuffer(self.stats, gauges=self._gauges, keep_max=frozenset({"frontier/queued"}))
        self._last_score: float | None = None
        self._popped = 0  #: requests popped from the frontier by this process
        self.codec: RequestCodec | None = None
        self._continuations: deque[Request] = deque()
        self._fetches: dict[str, _Fetch] = {}
        crawler.signals.connect(self._response_received, signals.response_received)
        crawler.signals.connect(self._rescore, focus_signals.frontier_rescore)
        crawler.signals.connect(self._sample, focus_signals.frontier_sample)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        backend = load_object(config.get_str(settings, "FOCUS_FRONTIER_BACKEND"))
        frontier = build_from_crawler(backend, crawler)
        batch_size = config.get_int(settings, "FOCUS_BATCH_SIZE")
        # Repeatable: one page at a time, the next chosen only once the last
        # was processed (its links queued, the strategy's learning done) —
        # with pages in flight together, the order they arrive in decides.
        repeatable = config.get_bool(settings, "FOCUS_REPEATABLE")
        batches = BestNFirstBatches(batch_size) if batch_size > 1 or repeatable else None
        return cls(crawler, frontier, batches, persistent=job_dir(settings) is not None)

    # -- BaseScheduler contract --------------------------------------------

    def open(self, spider: Spider) -> None:
        self.codec = RequestCodec(spider, self.persistent, self.stats)
        self.frontier.open()
        if engine_of(self.crawler) is not None:  # None in unit tests
            on_request_finished(self.crawler, self.request_finished)

    def close(self, reason: str) -> None:
        # Whatever is still leased (in flight, waiting as a continuation or
        # in an unreleased batch) goes back, so a resumed crawl fetches it.
        returned = self.frontier.leased()
        if returned:
            self.stats.set_value("scheduler/leases_returned", returned)
        self.counts.flush()
        self._continuations.clear()
        self._fetches.clear()
        self.frontier.close()

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
        return self._push(request)

    def next_request(self) -> Request | None:
        if self._continuations:
            request = self._continuations.popleft()
        else:
            entry = self.batches.next(self.frontier) if self.batches is not None else self.frontier.pop()
            if entry is None:
                self.counts.flush()  # idle: a good moment to bring the stats up to date
                self.frontier.flush()
                return None
            assert self.codec is not None
            request = self.codec.decode(entry)
            self._fetches[entry.key] = _Fetch()
            self._last_score = entry.score
            self._popped += 1
            request.meta[keys.POPPED] = self._popped
        self.counts.inc("scheduler/dequeued")
        return request

    def __len__(self) -> int:
        return len(self.frontier) + len(self._continuations)

    # -- new URLs and continuations --------------------------------------------

    def _push(self, request: Request) -> bool:
        assert self.codec is not None
        key, score, url, payload = self.codec.encode(request)
        outcome = self.frontier.push(key, score, payload, force=request.dont_filter, url=url)
        self.counts.inc(_STAT_BY_OUTCOME[outcome])
        if outcome is PushOutcome.ADDED_EVICTING:
            self.counts.inc("frontier/evicted")
        if outcome.queued:
            self.counts.inc("scheduler/enqueued")
        return outcome.queued

    def _continue(self, request: Request, lease: str, fetch: _Fetch) -> bool:
        """A retry or a redirect of a fetch in progress: fetched next."""
        assert self.codec is not None
        encoded = self.codec.encode(request)
        if encoded.key == lease:
            # A retry, or a redirect to another spelling of the same page.
            if request.url in request.meta.get("redirect_urls", ()):
                self.counts.inc("scheduler/redirect_loop")
                return False
            fetch.in_flight += 1
        else:
            # A redirect to another page: fetched now, unless it was or is being fetched.
            if not self.frontier.claim(encoded.key, encoded.score, encoded.payload, encoded.url):
                self.counts.inc("scheduler/redirect_already_seen")
                return False
            request.meta[keys.LEASE] = encoded.key
            request.meta[keys.KEY] = (request.url, encoded.key)
            self._fetches[encoded.key] = _Fetch()
        self._continuations.append(request)
        self.counts.inc("scheduler/enqueued")
        return True

    # -- leases ----------------------------------------------------------------

    def _response_received(self, response: Response, request: Request, spider: Spider) -> None:
        fetch = self._fetches.get(request.meta.get(keys.LEASE, ""))
        if fetch is not None:
            fetch.responded = True

    def request_finished(self, request: Request) -> None:
        """The engine is done with *request* (called through
        crawlproject.scrapy_private); its lease ends with its last request."""
        lease = request.meta.get(keys.LEASE)
        fetch = self._fetches.get(lease) if lease is not None else None
        if lease is None or fetch is None:
            return
        fetch.in_flight -= 1
        if fetch.in_flight > 0:
            return
        del self._fetches[lease]
        if request.meta.get(keys.REFUSED):
            self.frontier.refuse(lease, request.url)
        else:
            self.frontier.ack(lease)
        if self.batches is not None:
            self.batches.finished(lease)

    # -- re-scoring and stats ------------------------------------------------------

    def _rescore(self, scorer: Any, keys: Any = None) -> None:
        """Re-score every queued URL, or those of *keys* (a strategy learned
        something new): ``scorer(url, score, meta)`` with the queued request's meta."""
        self.frontier.rescore(lambda key, score, payload: scorer(key, score, meta_of(payload)), keys)
        self.stats.inc_value("frontier/rescored" if keys is None else "frontier/rescored_some")

    def _sample(self, count: int) -> list[float]:
        return self.frontier.sample_scores(count)

    def _gauges(self) -> dict[str, float]:
        gauges: dict[str, float] = {"frontier/queued": len(self.frontier), "frontier/leased": self.frontier.leased()}
        if self.batches is not None:
            gauges["frontier/batches"] = self.batches.batches
        if self._last_score is not None and math.isfinite(self._last_score):
            gauges["frontier/last_score"] = round(self._last_score, 6)
        return gauges
