"""A Scrapy scheduler whose frontier owns the crawl order (SPEC §1).

Stock Scrapy orders by integer priorities, per download slot; a focused
crawl needs one global best-first order by float score. This scheduler
keeps Scrapy's ``BaseScheduler`` contract and hands every request to a
frontier backend, storing only what rebuilds the Request:

* the score comes from ``request.meta["focus_score"]`` (set by the spider's
  strategy), falling back to ``request.priority`` so plain spiders work too;
* the URL is the frontier key, canonicalized unless the canonicalization
  middleware already did it;
* a plain GET request is kept as (callback name, errback name, meta); any
  other request as Scrapy's own ``Request.to_dict()``.

With ``JOBDIR`` set the frontier is saved on close and restored on open, so a
stopped crawl resumes in the same order and fetches nothing twice. Popped
URLs whose download had not finished when the crawl stopped go back into
the frontier first (a lease, the in-memory form of what a shared backend
will do with expiring leases).
"""

from __future__ import annotations

import logging
import math
import pickle
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.core.scheduler import BaseScheduler
from scrapy.utils.job import job_dir
from scrapy.utils.request import request_from_dict

from crawlproject import config
from crawlproject import signals as focus_signals
from crawlproject.frontier.base import FrontierEntry, PushOutcome
from crawlproject.frontier.memory import MemoryFrontier
from crawlproject.urls import canonicalize

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.spiders import Spider
    from scrapy.statscollectors import StatsCollector

    from crawlproject.frontier.base import Frontier

logger = logging.getLogger(__name__)

#: Request meta keys this project reads and writes.
SCORE_KEY = "focus_score"
CANONICAL_KEY = "focus_canonical"
POPPED_KEY = "focus_popped_url"  # the frontier URL a request (or its redirect) came from

_STATE_FILE = "frontier.pickle"
_PLAIN, _FULL = 0, 1
_STAT_BY_OUTCOME = {
    PushOutcome.ADDED: "frontier/added",
    PushOutcome.ADDED_EVICTING: "frontier/added",
    PushOutcome.RAISED: "frontier/raised",
    PushOutcome.DUPLICATE: "frontier/duplicate",
    PushOutcome.ALREADY_FETCHED: "frontier/already_fetched",
    PushOutcome.REJECTED_FULL: "frontier/rejected_full",
}


class FrontierScheduler(BaseScheduler):
    def __init__(
        self,
        crawler: Crawler,
        frontier: Frontier,
        jobdir: str | None = None,
        batch_size: int = 1,
    ):
        self.crawler = crawler
        self.frontier = frontier
        # Best-N-First (SPEC §2): release the N best URLs as one batch and
        # choose the next N only once every page of the batch was processed.
        self.batch_size = batch_size
        self._batch: deque[FrontierEntry] = deque()
        self._batch_outstanding: set[str] = set()
        self.jobdir = Path(jobdir) if jobdir else None
        self.stats: StatsCollector = crawler.stats  # type: ignore[assignment]
        self.spider: Spider | None = None
        # url -> (score, payload) of popped requests still being downloaded.
        self._leases: dict[str, tuple[float, Any]] = {}
        crawler.signals.connect(self._settle_lease, signals.request_left_downloader)
        crawler.signals.connect(self._rescore, focus_signals.frontier_rescore)
        crawler.signals.connect(self._page_processed, focus_signals.page_processed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        frontier = MemoryFrontier(
            max_size=config.get_int(settings, "FOCUS_FRONTIER_MAX", minimum=1),
            host_batch=config.get_int(settings, "FOCUS_FRONTIER_HOST_BATCH", minimum=1),
            fifo=config.get_choice(settings, "FOCUS_FRONTIER_ORDER", {"score", "fifo"})
            == "fifo",
        )
        batch_size = config.get_int(settings, "FOCUS_BATCH_SIZE", minimum=1)
        return cls(crawler, frontier, jobdir=job_dir(settings), batch_size=batch_size)

    # -- BaseScheduler contract --------------------------------------------

    def open(self, spider: Spider) -> None:
        self.spider = spider
        state = self._load_state()
        if state is not None:
            self.frontier.restore(state)
            logger.info(
                "Resuming crawl from %(path)s: %(queued)d URLs queued",
                {"path": self.jobdir, "queued": len(self.frontier)},
            )

    def close(self, reason: str) -> None:
        # Requests popped but never downloaded go back, best first, so a
        # resumed crawl fetches them (and nothing twice).
        for url, (score, payload) in self._leases.items():
            self.frontier.push(url, score, payload, force=True)
        self._leases.clear()
        for url, score, payload in self._batch:
            self.frontier.push(url, score, payload, force=True)
        self._batch.clear()
        self._save_state()

    def has_pending_requests(self) -> bool:
        return len(self.frontier) > 0 or bool(self._batch)

    def enqueue_request(self, request: Request) -> bool:
        meta = request.meta
        # The flag holds the URL it vouches for: a redirect copies the meta
        # of its original but not its URL, so it is canonicalized here.
        url = request.url if meta.get(CANONICAL_KEY) == request.url else canonicalize(request.url)
        score = _score_of(request)
        popped = meta.get(POPPED_KEY)
        if popped is not None and popped in self._batch_outstanding:
            if url == popped:  # a retry: it stays in its batch
                self._batch.appendleft(FrontierEntry(url, score, self._encode(request)))
                self.stats.inc_value("scheduler/enqueued")
                return True
            # A redirect: its target is queued like any found URL, and the
            # batch page that redirected counts as processed.
            self._page_processed(popped)
        return self._push(url, score, request)

    def _push(self, url: str, score: float, request: Request) -> bool:
        outcome = self.frontier.push(
            url, score, self._encode(request), force=request.dont_filter
        )
        stats = self.stats
        stats.inc_value(_STAT_BY_OUTCOME[outcome])
        if outcome is PushOutcome.ADDED_EVICTING:
            stats.inc_value("frontier/evicted")
        queued = len(self.frontier)
        stats.set_value("frontier/queued", queued)
        stats.max_value("frontier/queued_max", queued)
        accepted = outcome in (
            PushOutcome.ADDED,
            PushOutcome.ADDED_EVICTING,
            PushOutcome.RAISED,
        )
        if accepted:
            stats.inc_value("scheduler/enqueued")
        return accepted

    def next_request(self) -> Request | None:
        entry = self._next_batched() if self.batch_size > 1 else self.frontier.pop()
        if entry is None:
            return None
        url, score, payload = entry
        request = self._decode(url, payload)
        request.meta[SCORE_KEY] = score
        request.meta[CANONICAL_KEY] = url
        request.meta[POPPED_KEY] = url
        self._leases[url] = (score, payload)
        self.stats.inc_value("scheduler/dequeued")
        self.stats.set_value("frontier/queued", len(self.frontier))
        return request

    def __len__(self) -> int:
        return len(self.frontier) + len(self._batch)

    # -- Best-N-First batches ------------------------------------------------

    def _next_batched(self) -> FrontierEntry | None:
        if not self._batch:
            if self._batch_outstanding and not self._engine_idle():
                return None  # the batch's pages are still being fetched or parsed
            if self._batch_outstanding:
                # Nothing is in flight, yet pages were never reported back
                # (dropped by some middleware): do not wait for them forever.
                self.stats.inc_value("frontier/batch_pages_lost", len(self._batch_outstanding))
                self._batch_outstanding = set()
            while len(self._batch) < self.batch_size:
                entry = self.frontier.pop()
                if entry is None:
                    break
                self._batch.append(entry)
            self._batch_outstanding = {entry.url for entry in self._batch}
            if self._batch:
                self.stats.inc_value("frontier/batches")
        return self._batch.popleft() if self._batch else None

    def _page_processed(self, url: str | None) -> None:
        if url is None:
            return
        # Its lease is over even if it never reached the downloader (refused
        # by robots.txt) or left it under another URL (a redirect).
        self._leases.pop(url, None)
        if url not in self._batch_outstanding:
            return
        self._batch_outstanding.discard(url)
        if not self._batch_outstanding and not self._batch:
            self._wake_engine()

    def _engine_idle(self) -> bool:
        engine = self.crawler.engine
        if engine is None:
            return True
        scraper_slot = getattr(engine.scraper, "slot", None)
        return not engine.downloader.active and (scraper_slot is None or scraper_slot.is_idle())

    def _wake_engine(self) -> None:
        """Ask the engine for the next request now rather than at its next
        heartbeat (Scrapy has no public call for this)."""
        engine = self.crawler.engine
        slot = getattr(engine, "_slot", None)
        if slot is not None:
            slot.nextcall.schedule()

    # -- Request <-> payload -------------------------------------------------

    def _encode(self, request: Request) -> tuple[Any, ...]:
        if _is_plain(request, self.spider):
            meta = request.meta or None
            return (_PLAIN, _method_name(request.callback), _method_name(request.errback), meta)
        return (_FULL, request.to_dict(spider=self.spider))

    def _decode(self, url: str, payload: Any) -> Request:
        if payload is None:  # pushed by a caller that stores no payload
            return Request(url)
        if payload[0] == _PLAIN:
            _, callback, errback, meta = payload
            spider = self.spider
            return Request(
                url,
                callback=getattr(spider, callback) if callback else None,
                errback=getattr(spider, errback) if errback else None,
                meta=dict(meta) if meta else None,
            )
        fields = dict(payload[1], url=url)
        return request_from_dict(fields, spider=self.spider)

    def _rescore(self, scorer: Any) -> None:
        """Re-score every queued URL (a strategy learned something new)."""
        self.frontier.rescore(lambda url, score, payload: scorer(url, score, _meta_of(payload)))
        self.stats.inc_value("frontier/rescored")

    def _settle_lease(self, request: Request, spider: Spider | None = None) -> None:
        self._leases.pop(request.url, None)

    # -- Persistence -----------------------------------------------------------

    def _state_path(self) -> Path | None:
        return self.jobdir / _STATE_FILE if self.jobdir else None

    def _load_state(self) -> dict[str, Any] | None:
        path = self._state_path()
        if path is None or not path.exists():
            return None
        with path.open("rb") as f:
            state: dict[str, Any] = pickle.load(f)
        return state

    def _save_state(self) -> None:
        path = self._state_path()
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        snapshot = self.frontier.snapshot()
        try:
            data = pickle.dumps(snapshot, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError):
            data = pickle.dumps(
                _picklable_only(snapshot, self.stats), protocol=pickle.HIGHEST_PROTOCOL
            )
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(data)
        tmp.replace(path)  # atomic: a crash mid-write keeps the old state
        logger.info(
            "Saved frontier to %(path)s: %(queued)d URLs queued",
            {"path": path, "queued": len(self.frontier)},
        )


def _meta_of(payload: Any) -> dict[str, Any] | None:
    """The request meta inside a payload, without rebuilding the Request."""
    if payload is None:
        return None
    meta: dict[str, Any] | None = payload[3] if payload[0] == _PLAIN else payload[1].get("meta")
    return meta


def _score_of(request: Request) -> float:
    score = request.meta.get(SCORE_KEY)
    if score is None:
        return float(request.priority)
    score = float(score)
    return score if not math.isnan(score) else 0.0


def _method_name(method: Any) -> str | None:
    return method.__name__ if method is not None else None


def _is_plain(request: Request, spider: Spider | None) -> bool:
    """A GET with nothing but URL, callbacks on the spider, and meta."""
    if type(request) is not Request or request.method != "GET" or request.body:
        return False
    if request.headers or request.cookies or request.cb_kwargs or request.flags:
        return False
    for method in (request.callback, request.errback):
        if method is not None and getattr(method, "__self__", None) is not spider:
            return False
    return True


def _picklable_only(snapshot: dict[str, Any], stats: StatsCollector) -> dict[str, Any]:
    """Drop the entries whose payload cannot be pickled, counting them."""
    kept = {}
    for url, entry in snapshot["entries"].items():
        try:
            pickle.dumps(entry)
        except (pickle.PicklingError, TypeError, AttributeError):
            stats.inc_value("frontier/unserializable")
            continue
        kept[url] = entry
    return dict(snapshot, entries=kept)
