"""FocusedSpider: the base every crawlproject spider (and every user's topic
spider) derives from, and the one spider of every strategy (``focus``).

It reads the topic (a query, or a model and its good categories) and the
seeds from spider arguments or class attributes, has its strategy built by
the one factory (crawlproject.strategies.factory: ``-a strategy=…``, else
``FOCUS_STRATEGY``, else the class's ``strategy_class``), asks it to score
each fetched page's links, and yields one
:class:`~crawlproject.items.PageItem` per fetch plus one Request per outlink
carrying its score. Ordering is the frontier scheduler's job; see
crawlproject.frontier.

    scrapy crawl focus -a strategy=shark-search -a query="course syllabus" -a seeds=seeds.txt
    scrapy crawl bestfirst -a query="course syllabus" -a seeds=seeds.txt   # an alias

A topic spider is a subclass with its topic filled in, as a Scrapy user
writes any spider (README, "Your own topic spider")::

    class CourseSpider(BestFirstSpider):
        name = "courses"
        query = "course syllabus lecture homework"
        start_urls = ["http://www.cs.cornell.edu/"]

``-a query=…`` and ``-a seeds=…`` override the class attributes.
"""

from __future__ import annotations

from itertools import count
from typing import TYPE_CHECKING, Any, ClassVar

from scrapy import Request, Spider, signals
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.defer import maybe_deferred_to_future

from crawlproject import config
from crawlproject import signals as focus_signals
from crawlproject.config import SettingsError
from crawlproject.config_check import missing_addon
from crawlproject.corpus.collection import settle
from crawlproject.corpus.labels import parse_categories
from crawlproject.corpus.output import crawl_output, earlier_runs
from crawlproject.items import PageItem
from crawlproject.judges.answers import AnswerBook
from crawlproject.policy.near_duplicates import NearDuplicates
from crawlproject.policy.scope import CrawlScope
from crawlproject.scrapy_private import downloads_in_flight
from crawlproject.spiders.arguments import ArgumentsMixin
from crawlproject.spiders.batching import MicroBatcher
from crawlproject.spiders.seeds import RedisSeedsMixin
from crawlproject.spiders.sitemaps import SitemapsMixin
from crawlproject.strategies.base import CrawlStrategy, Topic
from crawlproject.strategies.factory import Focus, build_focus
from crawlproject.web import meta as keys
from crawlproject.web.page import Page, page_key

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator, Sequence
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.settings import BaseSettings
    from twisted.python.failure import Failure



#: Scrapy queue settings that make equal scores pop first-in first-out.
FOCUS_TIE_ORDER = {
    "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
    "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
    "SCHEDULER_START_MEMORY_QUEUE": None,
    "SCHEDULER_START_DISK_QUEUE": None,
}


class FocusedSpider(ArgumentsMixin, RedisSeedsMixin, SitemapsMixin, Spider):
    """Abstract: it has no ``name``, so ``scrapy list`` and Scrapyd do not
    offer it; :class:`crawlproject.spiders.any_strategy.AnyStrategySpider` is it, named."""

    #: The strategy when neither ``-a strategy=`` nor FOCUS_STRATEGY names
    #: one: a strategy name (crawlproject.strategies.STRATEGIES) or a class.
    strategy_class: ClassVar[type[CrawlStrategy] | str] = "breadth-first"
    #: The topic's keywords; ``-a query=…`` overrides it.
    query: str = ""
    #: A model file whose judge judges pages (``-a model=…``, or FOCUS_MODEL):
    #: a taxonomy classifier (``scrapy train``) or a topic from examples.
    model: str = ""
    #: A taxonomy model's good categories (``-a good=…``, or FOCUS_GOOD).
    good: tuple[str, ...] | str = ()
    #: Which hosts the crawl may go to (crawlproject.policy.scope), from its seeds.
    crawl_scope: CrawlScope = CrawlScope()
    #: the crawl's scoring: its judge and its link scorer (crawlproject.strategies.factory)
    focus: Focus
    max_links_per_page = 0
    near_duplicates: NearDuplicates | None = None

    def __init__(
        self,
        query: str | None = None,
        seeds: str | None = None,
        follow_links: str | bool = True,
        scope: str | None = None,
        sitemaps: str | None = None,
        model: str | None = None,
        good: str | None = None,
        strategy: str | None = None,
        **kwargs: Any,
    ):
        self._check_arguments(kwargs)
        super().__init__(**kwargs)
        allowed = getattr(self, "allowed_domains", None)
        if isinstance(allowed, str):
            # -a allowed_domains=a.org,b.net: Scrapy's offsite filter wants a list
            self.allowed_domains = [d.strip() for d in allowed.split(",") if d.strip()]
        # follow_links=no fetches the seeds only (a URL list, as Nutch's inject).
        self.follow_links = str(follow_links).strip().lower() not in ("0", "no", "false", "off")
        self.query = query if query is not None else type(self).query
        self.seed_urls = self._read_seeds(seeds)
        self._scope_argument = scope  # -a scope=any|domain|host; FOCUS_SCOPE otherwise
        self._sitemaps_argument = sitemaps  # -a sitemaps=URL,…: read from the start (spiders.sitemaps)
        self._fetch_order = count(1)
        self.model_path = model or type(self).model
        chosen = good or type(self).good
        self.good_categories = parse_categories(chosen) if isinstance(chosen, str) else tuple(chosen)
        self._strategy_argument = strategy

    @classmethod
    def update_settings(cls, settings: BaseSettings) -> None:
        super().update_settings(settings)
        # Every status reaches the callback: a dead link is recorded (and
        # learnt from), not hidden. A plain spider keeps Scrapy's HttpError rule.
        settings.set("HTTPERROR_ALLOW_ALL", True, priority="spider")
        # A focused crawl asks for breadth-first among equal scores (Scrapy's
        # LIFO default is for plain spiders: crawlproject.frontier.ties), its
        # seeds in the same queue as the links it finds.
        # Its budget is pages: a ready download slot takes a URL only among
        # the best queued, never a poor one because its host is free
        # (crawlproject.frontier.scheduler; plain spiders keep filling slots).
        # Every seed's site, and every site that pays, is explored before the
        # crawl commits to one (crawlproject.frontier.exploration).
        # A crawl's log at INFO (Scrapy's DEBUG line per request buries the progress and the summary).
        for name, value in {**FOCUS_TIE_ORDER, "FOCUS_OBJECTIVE": "pages", "FOCUS_EXPLORE": True,
                            "LOG_LEVEL": "INFO"}.items():
            if settings.getpriority(name) in (None, 0):  # a project's or crawl's own choice wins
                settings.set(name, value, priority="spider")

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> Self:
        if (missing := missing_addon(crawler.settings, cls.name)) is not None:
            raise SettingsError(missing)  # none of our components would run: not a focused crawl
        spider = super().from_crawler(crawler, *args, **kwargs)
        settings = crawler.settings
        spider._open_redis_seeds(crawler)
        spider._open_sitemaps(crawler, spider._sitemaps_argument)
        spider.crawl_scope = CrawlScope.from_settings(settings, spider.seed_urls, spider._scope_argument)
        if not spider.seed_urls and spider.redis_seeds is None and not spider.start_sitemaps:
            raise SettingsError(
                f"spider {spider.name!r} has no seeds: pass -a seeds=URL[,URL…] or -a seeds=FILE "
                "(one URL per line), give the spider class seeds or start_urls, or a Redis list "
                "of seeds (-a redis_key=KEY or FOCUS_REDIS_SEEDS_KEY)"
            )
        spider.focus = build_focus(crawler, spider._topic(), cls.strategy_class, spider._strategy_argument)
        crawler.signals.connect(spider._fetching, signals.request_reached_downloader)
        spider._batch_classifications(crawler)
        # After the last batch is judged, before the summary (an extension's,
        # connected later) counts the verdicts.
        crawler.signals.connect(spider._settle_verdicts, signals.spider_closed)
        spider._check_seeds_reachable(crawler)
        # The output folder is settled now, before anything starts: a folder
        # of another crawl stops the crawl here; a resumed one numbers on.
        output = crawl_output(spider, settings)
        spider._fetch_order = count(output.next_order)
        spider.max_links_per_page = config.get_int(settings, "FOCUS_MAX_LINKS_PER_PAGE")
        spider.near_duplicates = NearDuplicates.from_settings(settings)
        return spider

    def _settle_verdicts(self) -> None:
        """The crawl is over: a judge calibrated on the crawl's own pages
        calls them all again, fitted on all of them, and the history and the
        collection take its final calls (crawlproject.corpus.collection);
        what they hold is the crawl's one count of relevant pages."""
        output, focus = getattr(self, "crawl_output", None), self.focus
        if focus.judge is None or output is None:
            return
        try:  # fitted on the history's pages (a resumed crawl's earlier runs too), else on those it remembers
            word = {**focus.word(), **AnswerBook(output.path).word()}  # the user's answers after a crawl too
            settled = settle(output.path, focus.settle, focus.calls, word)
        except OSError as exc:
            self.logger.warning("The crawl's final verdicts could not be written (%s): its files keep the calls "
                                "made as each page was fetched", exc)
            return
        if not settled.judged:
            return  # no history holds any verdict
        assert self.crawler is not None and self.crawler.stats is not None
        self.crawler.stats.set_value("focus/verdicts/relevant", settled.relevant)
        self.crawler.stats.set_value("focus/verdicts/changed", settled.changed)
        if focus.calibrated:
            self.logger.info(
                "Verdicts settled: the judge's calibration, fitted on all %d pages judged, calls %d relevant "
                "(%d calls changed since their page was fetched; history.jsonl and the collection say so)",
                settled.judged, settled.relevant, settled.changed,
            )

    def _fetching(self, request: Request, spider: Spider) -> None:
        """A request from the frontier reached the downloader: the strategy
        learns its link is in flight."""
        found = request.meta.get(keys.KEY)
        if found is not None and request.meta.get(keys.LEASE) is not None:
            self.focus.on_fetching(found[1])

    def _topic(self) -> Topic:
        return Topic(query=self.query, model=self.model_path, good=self.good_categories)

    #: Pages judged in micro-batches (a judge that judges several at once:
    #: a classifier): a callback awaits its page's verdict while the
    #: downloader keeps fetching.
    batcher: MicroBatcher[Page, Any] | None = None

    def _batch_classifications(self, crawler: Crawler) -> None:
        focus = self.focus
        if not focus.batches:
            return
        settings = crawler.settings

        def classify(pages: Sequence[Page]) -> list[None]:
            focus.prepare(pages)
            stats = crawler.stats  # set once the crawl runs
            assert stats is not None
            stats.inc_value("focus/classify/pages", len(pages))
            stats.inc_value("focus/classify/batches")
            return [None] * len(pages)

        self.batcher = MicroBatcher(
            classify,
            max_size=config.get_int(settings, "FOCUS_CLASSIFY_BATCH"),
            wait=config.get_float(settings, "FOCUS_CLASSIFY_WAIT"),
            nothing_in_flight=lambda: downloads_in_flight(crawler) == 0,
        )
        crawler.signals.connect(self._flush_batch, signals.spider_idle)
        crawler.signals.connect(self._flush_batch, signals.spider_closed)

    def _flush_batch(self) -> None:
        if self.batcher is not None:
            self.batcher.flush()

    async def start(self) -> AsyncIterator[Any]:
        for url in self.seed_urls:
            yield self._seed(url)
        for sitemap in self._sitemap_requests():
            self.crawl_scope.add_seed(sitemap.url)  # a sitemap given is a seed of its host
            yield sitemap
        async for request in self._redis_start():
            yield request

    def _seed(self, url: str) -> Request:
        self.crawl_scope.add_seed(url)  # a later seed (Redis) widens the scope
        return super()._seed(url)

    def _request(self, url: str, meta: dict[str, Any], key: str | None = None) -> Request:
        """A request for a page, parsed by this spider (errors recorded too);
        *key* is the URL's canonical form when the caller knows it."""
        if key is not None:
            meta[keys.KEY] = (url, key)
        callback = self.parse if self.batcher is None else self.parse_classified
        return Request(url, callback=callback, errback=self.on_error, meta=meta)

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Any]:
        yield from self._outputs(response, self._page_of(response))

    async def parse_classified(self, response: Response, **kwargs: Any) -> AsyncIterator[Any]:
        """:meth:`parse`, once the page's batch is classified."""
        page = self._page_of(response)
        if 200 <= response.status < 300 and self.batcher is not None:
            try:
                await maybe_deferred_to_future(self.batcher.submit(page))
            except Exception:
                # A classifier failure must not lose the page: it is recorded with
                # relevance 0 and its links followed at the lowest priority.
                assert self.crawler is not None and self.crawler.stats is not None
                stats = self.crawler.stats
                if not stats.get_value("focus/classify/errors"):
                    self.logger.exception(
                        "Classifying %s failed; further failures are counted in focus/classify/errors", page.url,
                    )
                stats.inc_value("focus/classify/errors")
                self.focus.prepare_failed(page)
        for output in self._outputs(response, page):
            yield output

    def _page_of(self, response: Response) -> Page:
        page = Page.from_response(
            response, response.meta.get("depth", 0), response.meta.get(keys.PARENT), response.meta,
            max_links=self.max_links_per_page,
        )
        if page.links_cut:
            assert self.crawler is not None and self.crawler.stats is not None
            self.crawler.stats.inc_value("focus/page/links_cut_pages")
            self.crawler.stats.inc_value("focus/page/links_cut", page.links_cut)
        return page

    def _outputs(self, response: Response, page: Page) -> Iterator[Any]:
        """The page's item, then a scored Request per link to follow."""
        ok = 200 <= response.status < 300
        copy_of = self._near_duplicate_of(page) if ok else None
        relevance = self.focus.on_page(page) if ok else None
        relevant = self.focus.relevant(relevance, page.key)
        if ok:
            assert self.crawler is not None
            self.crawler.signals.send_catch_log(
                focus_signals.page_judged, request=response.request, relevant=relevant, relevance=relevance,
                links=[link.key for link in page.links])
        else:
            self.focus.on_dead_end(page.key, page.meta, response.status)
        links = page.links if ok and copy_of is None else []  # a copy's links were followed on its original
        follow = links if self.follow_links else []
        scores = self.focus.score_links(page, relevance) if links else []
        if not self._recorded_before_a_kill(page.key):
            item = PageItem.of_response(response, page, relevance, links, next(self._fetch_order), relevant)
            if copy_of is not None:
                item["near_duplicate_of"] = copy_of
            yield item
        if follow:
            # What every child inherits: its parent, and the strategy's state.
            inherited = {keys.PARENT: response.url, **self.focus.child_state(page, relevance)}
            for link, score in zip(follow, scores):
                if score is None:
                    continue  # the strategy chose not to follow this link
                found_by = {keys.ANCHOR: link.anchor[:100]} if link.anchor else {}
                yield self._request(link.url, {keys.SCORE: score, **found_by, **inherited}, link.key)
        promotions = self.focus.after_page(page, relevance) if ok else ()
        for promotion in promotions if self.follow_links else ():
            yield self._request(
                promotion.url,
                {keys.SCORE: promotion.score, keys.PARENT: promotion.source, keys.PROMOTED_BY: promotion.source},
                promotion.key,
            )

    def _near_duplicate_of(self, page: Page) -> str | None:
        """The page fetched before that *page* nearly copies (FOCUS_NEAR_DUPLICATES)."""
        if self.near_duplicates is None:
            return None
        original = self.near_duplicates.check(page.key, page.text)
        if original is not None:
            assert self.crawler is not None and self.crawler.stats is not None
            self.crawler.stats.inc_value("focus/near_duplicates/pages")
        return original

    def on_error(self, failure: Failure) -> Iterator[Any]:
        """A fetch that failed (dead host, timeout): recorded, never raised."""
        request = failure.request  # type: ignore[attr-defined]
        if failure.check(IgnoreRequest) and request.meta.get(keys.REFUSED):
            return  # refused by policy (robots.txt, the network policy): counted, not a page
        canonical = page_key(request.url, request.meta)
        self.focus.on_dead_end(canonical, request.meta, None)
        if not self._recorded_before_a_kill(canonical):
            yield PageItem.of_failure(request, failure, next(self._fetch_order))

    def _recorded_before_a_kill(self, canonical_url: str) -> bool:
        """A page the run a kill stopped recorded, fetched again to queue its
        links (they were not saved): no second record (corpus.output.EarlierRuns)."""
        earlier = earlier_runs(self)
        if earlier is None or not earlier.fetched_again(canonical_url):
            return False
        assert self.crawler is not None and self.crawler.stats is not None
        self.crawler.stats.inc_value("focus/resume/fetched_again")
        return True


class ModelSpider(FocusedSpider):
    """Kept for projects whose topic spiders derive from it: every spider
    now reads ``-a model=`` and ``-a good=`` (FocusedSpider). Abstract."""
