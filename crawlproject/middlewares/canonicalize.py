"""Spider middleware: every request admissible, and its key known, before it
is queued.

A request keeps the URL it was found with — only the fragment goes, as a
browser drops it — so that robots.txt and every later rule judge the URL
really requested. Its canonical key (:func:`crawlproject.web.urls.canonicalize`),
what the frontier deduplicates on, is put in meta once (our spiders have
already computed it with the link). Requests whose scheme is not http(s),
whose URL is malformed or carries credentials, or whose host is a private
address (crawlproject.policy.netsafety), or whose site is outside the crawl's
scope (crawlproject.policy.scope, ``FOCUS_SCOPE``) are refused and counted
(``focus/url_refused/…``); length is Scrapy's ``URLLENGTH_LIMIT`` (the
spider-trap guard of docs/methods.md §1).

Traps with no end (docs/methods.md §1) are cut where no user cap need be set: a path
that repeats a segment (``FOCUS_MAX_SEGMENT_REPEATS``), and a chain of
links each to a URL of its page's own shape — the same URL but for its
numbers and ids, as a calendar's next month or a counter's ``?d=N+1`` —
longer than ``FOCUS_MAX_COUNTER_HOPS`` (``focus/url_refused/counter_trap``).
A site's many pages of one shape (courses, versions) are links from one
index, a chain of one hop each, and stay.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import Request

from crawlproject import config
from crawlproject.policy.admission import refusal
from crawlproject.policy.netsafety import NETWORK_PROBLEMS, NetworkPolicy
from crawlproject.policy.scope import CrawlScope
from crawlproject.web import meta as keys
from crawlproject.web.urls import canonicalize, repeats_a_segment, url_shape, without_fragment

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable, Iterator
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)


class CanonicalizeMiddleware:
    def __init__(
        self,
        stats: StatsCollector,
        policy: NetworkPolicy | None = None,
        segment_repeats: int = 0,
        counter_hops: int = 0,
    ):
        self.stats = stats
        self.policy = policy or NetworkPolicy()
        self.segment_repeats = segment_repeats
        self.counter_hops = counter_hops
        self._logged: set[str] = set()
        self.crawler: Crawler | None = None  # its spider holds the crawl's scope

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        middleware = cls(
            crawler.stats,  # type: ignore[arg-type]
            NetworkPolicy.from_settings(settings),
            config.get_int(settings, "FOCUS_MAX_SEGMENT_REPEATS"),
            config.get_int(settings, "FOCUS_MAX_COUNTER_HOPS"),
        )
        middleware.crawler = crawler
        return middleware

    def _out_of_scope(self, url: str) -> bool:
        scope = getattr(self.crawler and self.crawler.spider, "crawl_scope", None)
        return isinstance(scope, CrawlScope) and not scope.allows(url)

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for item_or_request in start:
            result = self._admit(item_or_request)
            if result is not None:
                yield result

    def process_spider_output(
        self, response: Response, result: Iterable[Any]
    ) -> Iterator[Any]:
        page = self._page(response)
        for item_or_request in result:
            admitted = self._admit(item_or_request, page)
            if admitted is not None:
                yield admitted

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        page = self._page(response)
        async for item_or_request in result:
            admitted = self._admit(item_or_request, page)
            if admitted is not None:
                yield admitted

    def _page(self, response: Response) -> tuple[str, int] | None:
        """The shape of the page links are found on, and how many links of
        its shape in a row led to it; None when the trap guard is off."""
        if not self.counter_hops:
            return None
        meta = response.request.meta if response.request is not None else {}
        return url_shape(response.url), meta.get(keys.COUNTER_HOPS, 0)

    def _admit(self, obj: Any, page: tuple[str, int] | None = None) -> Any:
        if not isinstance(obj, Request):
            return obj
        url = without_fragment(obj.url)
        reason = refusal(url, self.policy)
        if reason is None and self.segment_repeats and repeats_a_segment(url, self.segment_repeats):
            reason = "repeated_segments"
        hops = page[1] + 1 if page is not None and url_shape(url) == page[0] else 0
        if reason is None and hops > self.counter_hops:
            reason = "counter_trap"
        if reason is None and self._out_of_scope(url):
            reason = "out_of_scope"
        if reason is not None:
            self._refuse(reason, url)
            return None
        request = obj if url == obj.url else obj.replace(url=url)
        if hops:
            request.meta[keys.COUNTER_HOPS] = hops
        known = request.meta.get(keys.KEY)
        if known is None or known[0] != request.url:  # our spiders key links when they find them
            request.meta[keys.KEY] = (request.url, canonicalize(request.url))
        return request

    def _refuse(self, reason: str, url: str) -> None:
        self.stats.inc_value(f"focus/url_refused/{reason}")
        if reason not in self._logged and reason in NETWORK_PROBLEMS:
            self._logged.add(reason)  # stock Scrapy would fetch it: say so where it shows, with the cure
            logger.warning(
                "Refused URL (%(reason)s address): %(url)s — a crawl reaches no private network or loopback "
                "unless FOCUS_ALLOWED_NETWORKS opens its range (e.g. FOCUS_ALLOWED_NETWORKS=127.0.0.0/8); "
                "further refusals are counted in stats focus/url_refused/%(reason)s",
                {"reason": reason, "url": url[:200]},
            )
        if reason not in self._logged:  # log once per reason, then count
            self._logged.add(reason)
            logger.info(
                "Refused URL (%(reason)s): %(url)s; further refusals are counted "
                "in stats focus/url_refused/%(reason)s",
                {"reason": reason, "url": url[:200]},
            )
