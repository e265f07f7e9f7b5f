"""The crawl's page budget: one object per crawl, built once from the
settings, that every part asks.

* ``CLOSESPIDER_PAGECOUNT`` counts pages answered, ``FOCUS_OK_PAGECOUNT``
  pages answered 2xx. robots.txt is never a page, and a page an earlier run
  of a resumed crawl counted (fetched again after a kill) counts once: the
  budget is the crawl's, not the run's. Those rules are written here only.
* The scheduler asks :meth:`PageBudget.spent` before it hands a request out
  (pages answered + fetches in flight: the crawl never fetches past its
  budget), and tells it what it handed out and what ended without an answer
  (:meth:`handed`, :meth:`settled`): a failed fetch gives its place back.
* The budget counts answers itself (Scrapy's ``response_received``) and
  closes the crawl when a limit is reached — ``closespider_pagecount`` or
  ``closespider_okpagecount``, Scrapy's own reasons — also at once when the
  earlier runs already spent it.
* The progress line reads :attr:`PageBudget.limit`.

:meth:`PageBudget.of` gives the crawl's budget (None when it has none): the
first caller builds it, the others get the same one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from scrapy import signals
from scrapy.utils.defer import deferred_from_coro

from crawlproject import config
from crawlproject.corpus.output import earlier_runs
from crawlproject.scrapy_private import engine_of
from crawlproject.web import meta as keys
from crawlproject.web.page import page_key

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from crawlproject.corpus.output import EarlierRuns

_BUDGETS: WeakKeyDictionary[Crawler, PageBudget | None] = WeakKeyDictionary()


class PageBudget:
    def __init__(self, crawler: Crawler, pages: int = 0, ok_pages: int = 0):
        self.crawler = crawler
        self.pages, self.ok_pages = pages, ok_pages
        self.answered = 0  #: pages answered (any status), robots.txt aside
        self.answered_ok = 0  #: of them, answered 2xx
        self.unanswered = 0  #: fetches handed out whose response has not come
        self.earlier: EarlierRuns | None = None
        self._closing = False
        crawler.signals.connect(self._spider_opened, signals.spider_opened)
        crawler.signals.connect(self._response_received, signals.response_received)

    @classmethod
    def of(cls, crawler: Crawler) -> PageBudget | None:
        """The crawl's budget, built from its settings on first use; None
        when neither limit is set."""
        if crawler not in _BUDGETS:
            settings = crawler.settings
            pages = settings.getint("CLOSESPIDER_PAGECOUNT")
            ok_pages = config.get_int(settings, "FOCUS_OK_PAGECOUNT")
            _BUDGETS[crawler] = cls(crawler, pages, ok_pages) if pages > 0 or ok_pages > 0 else None
        return _BUDGETS[crawler]

    @property
    def limit(self) -> int:
        """The budget a progress line counts against."""
        return max(self.pages, self.ok_pages)

    # -- the scheduler's questions and news ------------------------------------

    def spent(self) -> bool:
        """Whether the pages answered and the fetches in flight reach a limit."""
        if self.pages and self.answered + self.unanswered >= self.pages:
            return True
        return bool(self.ok_pages) and self.answered_ok + self.unanswered >= self.ok_pages

    def handed(self) -> None:
        """A fetch was handed out: its page may fill the budget."""
        self.unanswered += 1

    def settled(self) -> None:
        """A fetch handed out was answered, or ended without an answer (its
        place in the budget is free again)."""
        self.unanswered -= 1

    # -- what the budget counts itself -----------------------------------------

    def counts(self, request: Request) -> bool:
        """Whether an answer to *request* is a page of the budget: not
        robots.txt, and not a page an earlier run of the crawl counted."""
        if request.meta.get(keys.ROBOTSTXT):
            return False
        return self.earlier is None or not self.earlier.recorded_before(page_key(request.url, request.meta))

    def _spider_opened(self, spider: Spider) -> None:
        self.earlier = earlier_runs(spider)
        if self.earlier is not None:
            self.answered, self.answered_ok = self.earlier.answered, self.earlier.ok
            self._close_when_reached()  # spent by the earlier runs

    def _response_received(self, response: Response, request: Request, spider: Spider) -> None:
        if not self.counts(request):
            return
        self.answered += 1
        self.answered_ok += 200 <= response.status < 300
        self._close_when_reached()

    def _close_when_reached(self) -> None:
        if self.pages and self.answered >= self.pages:
            reason = "closespider_pagecount"
        elif self.ok_pages and self.answered_ok >= self.ok_pages:
            reason = "closespider_okpagecount"
        else:
            return
        engine = engine_of(self.crawler)
        if engine is not None and not self._closing:
            self._closing = True  # the requests in flight still finish
            deferred_from_coro(engine.close_spider_async(reason=reason))
