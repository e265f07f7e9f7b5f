"""Spider middleware: every URL canonical and admissible before it is queued.

Requests from the spider (start requests and links) are rewritten to their
canonical URL (:func:`crawlproject.urls.canonicalize`) and refused, with a
counted stat, when the scheme is not http(s), the URL is malformed, or it is
longer than ``FOCUS_URL_MAX_LENGTH`` (the spider-trap guard of SPEC §1).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import Request

from crawlproject import config
from crawlproject.frontier.scheduler import CANONICAL_KEY
from crawlproject.urls import canonicalize, refusal_reason

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable, Iterator
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)


class CanonicalizeMiddleware:
    def __init__(self, stats: StatsCollector, max_length: int):
        self.stats = stats
        self.max_length = max_length
        self._logged: set[str] = set()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        max_length = config.get_int(crawler.settings, "FOCUS_URL_MAX_LENGTH", minimum=16)
        return cls(crawler.stats, max_length)  # type: ignore[arg-type]

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for item_or_request in start:
            result = self._admit(item_or_request)
            if result is not None:
                yield result

    def process_spider_output(
        self, response: Response, result: Iterable[Any]
    ) -> Iterator[Any]:
        for item_or_request in result:
            admitted = self._admit(item_or_request)
            if admitted is not None:
                yield admitted

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        async for item_or_request in result:
            admitted = self._admit(item_or_request)
            if admitted is not None:
                yield admitted

    def _admit(self, obj: Any) -> Any:
        if not isinstance(obj, Request) or obj.meta.get(CANONICAL_KEY) == obj.url:
            return obj
        url = canonicalize(obj.url)
        reason = refusal_reason(url, self.max_length)
        if reason is not None:
            self.stats.inc_value(f"focus/url_refused/{reason}")
            if reason not in self._logged:  # log once per reason, then count
                self._logged.add(reason)
                logger.info(
                    "Refused URL (%(reason)s): %(url)s; further refusals are counted "
                    "in stats focus/url_refused/%(reason)s",
                    {"reason": reason, "url": url[:200]},
                )
            return None
        request = obj if url == obj.url else obj.replace(url=url)
        request.meta[CANONICAL_KEY] = url
        return request
