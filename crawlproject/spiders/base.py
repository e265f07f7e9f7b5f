"""FocusedSpider: the base every crawlproject spider (and every user's topic
spider) derives from.

It reads the topic and the seeds from spider arguments or class attributes,
asks its strategy to score each fetched page's links, and yields one
:class:`PageItem` per fetch plus one Request per outlink carrying its score.
Ordering is the frontier scheduler's job; see crawlproject.frontier.

    scrapy crawl bestfirst -a query="course syllabus" -a seeds=seeds.txt

A topic spider is a subclass with its topic filled in, as a Scrapy user
writes any spider (README, "Your own topic spider")::

    class CourseSpider(BestFirstSpider):
        name = "courses"
        query = "course syllabus lecture homework"
        start_urls = ["http://www.cs.cornell.edu/"]

``-a query=…`` and ``-a seeds=…`` override the class attributes.
"""

from __future__ import annotations

import difflib
import inspect
import math
from datetime import UTC, datetime
from itertools import count
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from scrapy import Request, Spider, signals
from scrapy.exceptions import DontCloseSpider, IgnoreRequest
from scrapy.utils.misc import load_object

from crawlproject import config
from crawlproject import meta as keys
from crawlproject.config import SettingsError
from crawlproject.items import PageItem
from crawlproject.netsafety import NetworkPolicy
from crawlproject.output import crawl_output
from crawlproject.page import Page, page_key
from crawlproject.redis_seeds import RedisSeeds
from crawlproject.scope import CrawlScope
from crawlproject.strategies.base import CrawlStrategy, Topic
from crawlproject.strategies.breadth_first import BreadthFirstStrategy
from crawlproject.urls import refusal_reason, without_fragment

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable, Iterator
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from twisted.python.failure import Failure


class FocusedSpider(Spider):
    """Abstract: it has no ``name``, so ``scrapy list`` and Scrapyd do not offer it."""

    strategy_class: ClassVar[type[CrawlStrategy]] = BreadthFirstStrategy
    #: The topic's keywords; ``-a query=…`` overrides it.
    query: str = ""
    #: Seed URLs (a list, or a file name / comma list as ``-a seeds`` takes);
    #: ``start_urls`` work too.
    seeds: ClassVar[Iterable[str] | str] = ()
    #: Spider arguments besides those of ``__init__``, read by reports.
    extra_arguments: ClassVar[tuple[str, ...]] = ("topic_id", "task", "strategy_label")
    # Older names of ``query`` and ``seeds``, still honoured.
    default_query: ClassVar[str] = ""
    default_seeds: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        query: str | None = None,
        seeds: str | None = None,
        follow_links: str | bool = True,
        scope: str | None = None,
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
        self.query = query if query is not None else (type(self).query or self.default_query)
        self.seed_urls = self._seeds(seeds)
        self._scope_argument = scope  # -a scope=any|domain|host; FOCUS_SCOPE otherwise
        self._fetch_order = count(1)

    def _seeds(self, argument: str | None) -> list[str]:
        cls = type(self)
        found: Iterable[str] | str = (
            argument or cls.seeds or getattr(self, "start_urls", None) or self.default_seeds
        )
        urls = parse_seeds(found) if isinstance(found, str) else [str(url).strip() for url in found]
        for url in urls:
            reason = refusal_reason(without_fragment(url))
            if reason is not None:
                raise SettingsError(
                    f"seed {url!r} cannot be crawled ({reason.replace('_', ' ')}): "
                    "seeds must be http:// or https:// URLs with a host"
                )
        return urls

    @classmethod
    def _check_arguments(cls, given: dict[str, Any]) -> None:
        """An unknown ``-a`` name is a typo far more often than a wish."""
        known = cls.known_arguments()
        for name in given:
            if name.startswith("_") or name in known:
                continue  # _job and the like: Scrapyd's
            shown = sorted(cls.arguments())
            close = difflib.get_close_matches(name, shown, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise SettingsError(
                f"unknown spider argument -a {name}: {hint}{cls.name!r} takes "
                f"{', '.join(shown)} (a spider subclass declares its own as class attributes)"
            )

    @classmethod
    def arguments(cls) -> set[str]:
        """The spider arguments worth listing: ``__init__``'s and the documented extras."""
        names = set(cls.extra_arguments)
        for klass in cls.__mro__:
            init = klass.__dict__.get("__init__")
            if init is not None and issubclass(klass, FocusedSpider):
                names.update(
                    name for name, p in inspect.signature(init).parameters.items()
                    if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and name != "self"
                )
        return names

    @classmethod
    def known_arguments(cls) -> set[str]:
        """Every name ``-a`` may set: the arguments, and any attribute a
        subclass declares (a user's topic spider reads its own)."""
        known = cls.arguments()
        for klass in cls.__mro__:
            if klass is not Spider and issubclass(klass, Spider):
                known.update(name for name in vars(klass) if not name.startswith("_"))
        known.update(("name", "start_urls", "allowed_domains", "custom_settings"))
        return known

    #: A Redis list to read seeds from (crawlproject.redis_seeds), as
    #: scrapy-redis's RedisSpider: ``-a redis_key=…`` or FOCUS_REDIS_SEEDS_KEY.
    redis_key: ClassVar[str] = ""
    redis_seeds: RedisSeeds | None = None
    #: Which hosts the crawl may go to (crawlproject.scope), from its seeds.
    crawl_scope: CrawlScope = CrawlScope()

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> Self:
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.redis_seeds = RedisSeeds.for_spider(spider, crawler.settings)
        spider.crawl_scope = CrawlScope.from_settings(crawler.settings, spider.seed_urls, spider._scope_argument)
        if not spider.seed_urls and spider.redis_seeds is None:
            raise SettingsError(
                f"spider {spider.name!r} has no seeds: pass -a seeds=URL[,URL…] or -a seeds=FILE "
                "(one URL per line), give the spider class seeds or start_urls, or a Redis list "
                "of seeds (-a redis_key=KEY or FOCUS_REDIS_SEEDS_KEY)"
            )
        if spider.redis_seeds is not None:
            crawler.signals.connect(spider._more_redis_seeds, signals.spider_idle)
        strategy_path = config.get_str(crawler.settings, "FOCUS_STRATEGY")
        strategy_cls = load_object(strategy_path) if strategy_path else cls.strategy_class
        spider.strategy = strategy_cls.from_crawler(crawler, spider._topic())
        policy = NetworkPolicy.from_settings(crawler.settings)
        for url in spider.seed_urls:
            problem = policy.url_problem(without_fragment(url))
            if problem is not None:
                raise SettingsError(
                    f"seed {url!r} is refused ({problem.replace('_', ' ')} address): a crawl reaches no "
                    "private network unless FOCUS_ALLOWED_NETWORKS opens its range"
                )
        # The output folder is settled now, before anything starts: a folder
        # of another crawl stops the crawl here; a resumed one numbers on.
        output = crawl_output(spider, crawler.settings)
        spider._fetch_order = count(output.next_order)
        spider.max_links_per_page = config.get_int(crawler.settings, "FOCUS_MAX_LINKS_PER_PAGE", minimum=0)
        return spider

    def _topic(self) -> Topic:
        return Topic(query=self.query)

    strategy: CrawlStrategy

    async def start(self) -> AsyncIterator[Any]:
        for url in self.seed_urls:
            yield self._seed(url)
        if self.redis_seeds is not None:
            for url in self.redis_seeds.pop():
                yield self._seed(url)

    def _seed(self, url: str) -> Request:
        self.crawl_scope.add_seed(url)  # a later seed (Redis) widens the scope
        return self._request(url, {keys.SCORE: math.inf, keys.SEED: True})

    def _more_redis_seeds(self) -> None:
        """Idle: seeds pushed to the Redis list meanwhile keep the crawl going."""
        assert self.redis_seeds is not None and self.crawler is not None and self.crawler.engine is not None
        urls = self.redis_seeds.pop()
        for url in urls:
            if refusal_reason(without_fragment(url)) is None:
                self.crawler.engine.crawl(self._seed(url))
        if urls:
            raise DontCloseSpider

    def _request(self, url: str, meta: dict[str, Any], key: str | None = None) -> Request:
        """A request for a page, parsed by this spider (errors recorded too);
        *key* is the URL's canonical form when the caller knows it."""
        if key is not None:
            meta[keys.KEY] = (url, key)
        return Request(url, callback=self.parse, errback=self.on_error, meta=meta)

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Any]:
        yield from self._outputs(response, self._page_of(response))

    max_links_per_page = 0

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
        relevance = self.strategy.page_relevance(page) if ok else None
        links = page.links if ok else []
        follow = links if self.follow_links else []
        scores = self.strategy.score_links(page, relevance) if links else []
        yield self._page_item(response, page, relevance, links)
        if follow:
            # What every child inherits: its parent, and the strategy's state.
            inherited = {keys.PARENT: response.url, **self.strategy.child_state(page, relevance)}
            for link, score in zip(follow, scores):
                if score is None:
                    continue  # the strategy chose not to follow this link
                yield self._request(link.url, {keys.SCORE: score, **inherited}, link.key)
        promotions = self.strategy.after_page(page, relevance) if ok else ()
        for promotion in promotions if self.follow_links else ():
            yield self._request(
                promotion.url,
                {keys.SCORE: promotion.score, keys.PARENT: promotion.source, keys.PROMOTED_BY: promotion.source},
                promotion.key,
            )

    def on_error(self, failure: Failure) -> Iterator[Any]:
        """A fetch that failed (dead host, timeout): recorded, never raised."""
        request = failure.request  # type: ignore[attr-defined]
        if failure.check(IgnoreRequest) and request.meta.get(keys.REFUSED):
            return  # refused by policy (robots.txt, the network policy): counted, not a page
        yield PageItem(
            url=request.url,
            canonical_url=page_key(request.url, request.meta),
            requested_url=(request.meta.get("redirect_urls") or [request.url])[0],
            status=None,
            error=f"{getattr(failure.type, '__name__', 'Error')}: {failure.getErrorMessage()}"[:500],
            order=next(self._fetch_order),
            depth=request.meta.get("depth", 0),
            parent_url=request.meta.get(keys.PARENT),
            score=_finite(request.meta.get(keys.SCORE)),
            relevance=None,
            fetched_at=_now(),
            content_type=None,
            size=0,
            truncated=False,
            last_modified=None,
            outlink_count=0,
            body=b"",
            headers=[],
            outlinks=[],
        )

    def _page_item(
        self, response: Response, page: Page, relevance: float | None, links: list[Any]
    ) -> PageItem:
        meta = response.meta
        redirects = meta.get("redirect_urls") or []
        headers = response.headers
        return PageItem(
            url=response.url,
            canonical_url=page.key,
            requested_url=redirects[0] if redirects else response.request.url,  # type: ignore[union-attr]
            status=response.status,
            error=None,
            order=next(self._fetch_order),
            depth=meta.get("depth", 0),
            parent_url=meta.get(keys.PARENT),
            score=_finite(meta.get(keys.SCORE)),
            relevance=relevance,
            fetched_at=_now(),
            content_type=_header(headers, b"Content-Type"),
            size=len(response.body),
            truncated="truncated" in response.flags,
            last_modified=_header(headers, b"Last-Modified"),
            outlink_count=len(links),
            body=response.body,
            headers=[
                (name.decode("latin-1"), value.decode("latin-1"))
                for name, values in headers.items()
                for value in values
            ],
            outlinks=[(link.key, link.anchor) for link in links],
        )


def parse_seeds(value: str) -> list[str]:
    """Seeds from a file (one URL per line, ``#`` comments) or a comma list.
    A value naming no URL is a file, whatever its name holds (commas too).

    >>> parse_seeds("http://a.test/, http://b.test/")
    ['http://a.test/', 'http://b.test/']
    >>> parse_seeds("x" * 5000)
    Traceback (most recent call last):
    ...
    crawlproject.config.SettingsError: seeds='xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…' is neither a file nor a comma-separated list of URLs (no such file)
    """
    if "://" in value:
        return [url.strip() for url in value.split(",") if url.strip()]
    path = Path(value)
    try:
        is_file = path.is_file()
    except OSError:  # a name too long to be a file's
        is_file = False
    if not is_file:
        shown = value if len(value) <= 80 else value[:30] + "…"
        raise SettingsError(f"seeds={shown!r} is neither a file nor a comma-separated list of URLs (no such file)")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"seeds file {value}: cannot be read ({exc})") from None
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def _finite(score: Any) -> float | None:
    if score is None:
        return None
    score = float(score)
    return score if math.isfinite(score) else None


def _header(headers: Any, name: bytes) -> str | None:
    value = headers.get(name)
    return value.decode("latin-1") if value else None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class ModelSpider(FocusedSpider):
    """A spider whose strategy reads a trained model: ``-a model=FILE``, the
    class attribute ``model``, or the FOCUS_MODEL setting. Abstract."""

    model: str = ""
    default_model: ClassVar[str] = ""  # the older name of ``model``, still honoured

    def __init__(self, model: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.model_path = model or type(self).model or self.default_model

    def _topic(self) -> Topic:
        return Topic(query=self.query, model=self.model_path)
