"""The frontier port a strategy is handed, and its two implementations.

A crawl's scoring is three pieces that meet only here (docs/architecture.md,
"Three ports"):

* :class:`~crawlproject.judges.base.PageJudge` — a fetched page → its
  relevance in [0, 1], with the judge's own threshold and precision estimate
  (crawlproject.judges);
* :class:`~crawlproject.strategies.base.CrawlStrategy` — a page's links →
  one score each, given the page's relevance;
* :class:`FrontierPort` — what a strategy may ask of the queue: re-score
  queued URLs, sample their scores, count stats, act at the end. Handed to
  the strategy when it is built, so a strategy never reaches the crawler,
  the scheduler or Scrapy's signals, and runs in a test against
  :class:`DetachedFrontier`. Like Scrapy's ``DownloaderInterface``, which
  is handed the downloader, :class:`CrawlerFrontier` is handed the
  scheduler the crawl opens and calls it: no signal between them, no reach
  into the engine.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, Protocol

from crawlproject.signals import frontier_scheduler_closed, frontier_scheduler_opened
from crawlproject.web.urls import host_of

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from scrapy.crawler import Crawler

    from crawlproject.frontier.scheduler import FrontierScheduler


class FrontierPort(Protocol):
    """What a strategy may ask of the frontier and the crawl."""

    def rescore(self, scorer: Callable[[str, float, dict[str, Any] | None], float],
                keys: Sequence[str] | None = None) -> None:
        """New scores for the queued URLs (only *keys*, when given):
        ``scorer(url, score, meta)`` → the URL's new score, where meta is
        the queued request's (read it, do not change it)."""

    def sample(self, count: int) -> list[tuple[float, str]]:
        """Up to *count* queued URLs drawn at random: (score, download slot)."""

    def in_flight(self) -> list[float]:
        """Scores of the URLs being fetched now (out of the queue)."""

    def inc(self, stat: str, count: int = 1) -> None: ...

    def set(self, stat: str, value: Any) -> None: ...

    def max(self, stat: str, value: Any) -> None: ...

    def on_close(self, callback: Callable[[], Any]) -> None:
        """Call *callback* when the crawl ends (to save what was learnt)."""


class CrawlerFrontier:
    """The frontier port of a running crawl: it asks the frontier scheduler
    the crawl opened (the scheduler announces itself with the
    ``frontier_scheduler_opened`` signal) — before that, after it closed, or
    under another scheduler (a plain Scrapy project's) there is no queue to
    re-score or sample: nothing happens, no score comes back. The stats go to
    Scrapy's stats collector."""

    def __init__(self, crawler: Crawler, scheduler: FrontierScheduler | None = None):
        self._crawler = crawler
        self._scheduler_open = scheduler  #: the scheduler to ask, given or announced
        if scheduler is None:
            crawler.signals.connect(self._opened, signal=frontier_scheduler_opened)
            crawler.signals.connect(self._closed, signal=frontier_scheduler_closed)

    def _opened(self, scheduler: FrontierScheduler) -> None:
        self._scheduler_open = scheduler

    def _closed(self, scheduler: FrontierScheduler) -> None:
        if self._scheduler_open is scheduler:
            self._scheduler_open = None

    def _scheduler(self) -> FrontierScheduler | None:
        return self._scheduler_open

    def rescore(self, scorer: Callable[[str, float, dict[str, Any] | None], float],
                keys: Sequence[str] | None = None) -> None:
        scheduler = self._scheduler()
        if scheduler is not None:
            scheduler.rescore(scorer, keys)

    def sample(self, count: int) -> list[tuple[float, str]]:
        scheduler = self._scheduler()
        return scheduler.sample(count) if scheduler is not None else []

    def in_flight(self) -> list[float]:
        scheduler = self._scheduler()
        return scheduler.in_flight_scores() if scheduler is not None else []

    def inc(self, stat: str, count: int = 1) -> None:
        if self._crawler.stats is not None:
            self._crawler.stats.inc_value(stat, count)

    def set(self, stat: str, value: Any) -> None:
        if self._crawler.stats is not None:
            self._crawler.stats.set_value(stat, value)

    def max(self, stat: str, value: Any) -> None:
        if self._crawler.stats is not None:
            self._crawler.stats.max_value(stat, value)

    def on_close(self, callback: Callable[[], Any]) -> None:
        from scrapy import signals

        self._crawler.signals.connect(lambda: callback(), signals.spider_closed, weak=False)


class DetachedFrontier:
    """A frontier port with no crawl behind it (a strategy used offline, or
    tested alone): re-scores apply to the URLs it was given (``queued``, a
    key → (score, meta) mapping), stats are kept here."""

    def __init__(self, queued: dict[str, tuple[float, dict[str, Any] | None]] | None = None):
        self.queued = queued if queued is not None else {}
        self.stats: Counter[str] = Counter()
        self.values: dict[str, Any] = {}
        self.rescores: list[Sequence[str] | None] = []
        self.closing: list[Callable[[], Any]] = []

    def rescore(self, scorer: Callable[[str, float, dict[str, Any] | None], float],
                keys: Sequence[str] | None = None) -> None:
        self.rescores.append(None if keys is None else list(keys))
        for key in list(self.queued) if keys is None else [k for k in keys if k in self.queued]:
            score, meta = self.queued[key]
            self.queued[key] = (scorer(key, score, meta), meta)

    def sample(self, count: int) -> list[tuple[float, str]]:
        return [(score, host_of(key)) for key, (score, _) in list(self.queued.items())[:count]]

    def in_flight(self) -> list[float]:
        return []  # nothing is fetched

    def inc(self, stat: str, count: int = 1) -> None:
        self.stats[stat] += count

    def set(self, stat: str, value: Any) -> None:
        self.values[stat] = value

    def max(self, stat: str, value: Any) -> None:
        self.values[stat] = max(self.values.get(stat, value), value)

    def on_close(self, callback: Callable[[], Any]) -> None:
        self.closing.append(callback)

    def close(self) -> None:
        for callback in self.closing:
            callback()
