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
* The progress line reads :func:`page_limits`.

The budget is part of the crawl's :class:`CloseSpider` extension (Scrapy's,
keeping its every other limit: time, items, errors, pages without an item);
the add-on installs it in place of Scrapy's, and :func:`page_budget` finds it
through the crawler (None when the crawl has no page limit, or a project
disabled the extension: then, as with Scrapy's, no page limit holds).
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.extensions.closespider import CloseSpider as ScrapyCloseSpider
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
    from scrapy.settings import BaseSettings

    from crawlproject.corpus.output import EarlierRuns


def page_limits(settings: BaseSettings) -> tuple[int, int]:
    """The crawl's page limits: CLOSESPIDER_PAGECOUNT (pages answered) and
    FOCUS_OK_PAGECOUNT (pages answered 2xx); 0: none."""
    return settings.getint("CLOSESPIDER_PAGECOUNT"), config.get_int(settings, "FOCUS_OK_PAGECOUNT")


def page_budget(crawler: Crawler) -> PageBudget | None:
    """The crawl's page budget, its CloseSpider extension's; None when it
    has none, or before the crawl's extensions are built (a scheduler alone)."""
    try:
        extension = crawler.get_extension(CloseSpider)
    except RuntimeError:
        return None
    return extension.budget if extension is not None else None


class PageBudget:
    def __init__(self, crawler: Crawler, pages: int = 0, ok_pages: int = 0):
        self.crawler = crawler
        self.pages, self.ok_pages = pages, ok_pages
        self.answered = 0  #: pages answered (any status), robots.txt aside
        self.answered_ok = 0  #: of them, answered 2xx
        self.unanswered = 0  #: fetches handed out whose response has not come
        self.earlier: EarlierRuns | None = None
        self._closing = False
        crawler.signals.connect(self._response_received, signals.response_received)

    @classmethod
    def from_settings(cls, crawler: Crawler) -> PageBudget | None:
        """The budget the crawl's settings set; None when neither limit is."""
        pages, ok_pages = page_limits(crawler.settings)
        return cls(crawler, pages, ok_pages) if pages > 0 or ok_pages > 0 else None

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

    def resume(self, earlier: EarlierRuns) -> None:
        """A resumed crawl: what its earlier runs answered counts."""
        self.earlier = earlier
        self.answered, self.answered_ok = earlier.answered, earlier.ok
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


class CloseSpider(ScrapyCloseSpider):
    """Scrapy's CloseSpider with the page budget in place of its page count
    (:class:`PageBudget`: robots.txt is not a page, a page fetched again after
    a kill counts once, the scheduler never hands out past it); every other
    limit is Scrapy's. A crawl resumed from its JOBDIR counts what its earlier
    runs answered and scraped: a budget is the crawl's, not the run's."""

    def __init__(self, crawler: Crawler):
        self.budget = PageBudget.from_settings(crawler)
        try:
            super().__init__(crawler)
        except NotConfigured:
            if self.budget is None:
                raise
            # FOCUS_OK_PAGECOUNT alone, none of Scrapy's limits: the budget is all there is
            self.crawler, self.task, self.task_no_item = crawler, None, None
            self.close_on, self.counter = {}, defaultdict(int)
        crawler.signals.connect(self.resume_counts, signal=signals.spider_opened)

    def resume_counts(self, spider: Spider) -> None:
        earlier = earlier_runs(spider)
        if earlier is None:
            return
        if self.budget is not None:
            self.budget.resume(earlier)
        self.counter["itemcount"] += earlier.pages
        if self.close_on.get("itemcount") and self.counter["itemcount"] >= self.close_on["itemcount"]:
            self._close_spider("closespider_itemcount")  # spent by the earlier runs

    def page_count(self, response: Response, request: Request, spider: Spider) -> None:
        """Scrapy's CLOSESPIDER_PAGECOUNT_NO_ITEM (pages in a row with no
        item); the page budget counts pages itself."""
        self.counter["pagecount_since_last_item"] += 1
        limit = self.close_on.get("pagecount_no_item")
        if limit and self.counter["pagecount_since_last_item"] >= limit:
            self._close_spider("closespider_pagecount_no_item")
