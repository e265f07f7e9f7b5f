"""Downloader middleware: read only HTML, and only its first bytes (docs/methods.md §1).

A page is cut at ``FOCUS_MAX_PAGE_BYTES`` (the download stops there) and the
cut page is still parsed and scored: chop, don't drop. A response whose
Content-Type says it is not HTML stops downloading as soon as its headers
arrive; it is still recorded, with an empty body.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import StopDownload

from crawlproject import config
from crawlproject.web import meta as keys
from crawlproject.web.content import is_html_content_type

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Headers, Response
    from scrapy.statscollectors import StatsCollector

_BYTES_KEY = "_focus_bytes_received"


class PageSizeMiddleware:
    def __init__(self, crawler: Crawler, max_bytes: int):
        self.max_bytes = max_bytes
        self.stats: StatsCollector = crawler.stats  # type: ignore[assignment]
        crawler.signals.connect(self._headers_received, signals.headers_received)
        crawler.signals.connect(self._bytes_received, signals.bytes_received)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        max_bytes = config.get_int(crawler.settings, "FOCUS_MAX_PAGE_BYTES")
        return cls(crawler, max_bytes)

    def _headers_received(
        self, headers: Headers, body_length: int, request: Request, spider: Spider
    ) -> None:
        request.meta[_BYTES_KEY] = 0  # a new download (a retry copies the meta of the last)
        if request.meta.get(keys.ANY_CONTENT_TYPE):
            return
        if not is_html_content_type(headers.get(b"Content-Type")):
            raise StopDownload(fail=False)

    def _bytes_received(self, data: bytes, request: Request, spider: Spider) -> None:
        received = request.meta.get(_BYTES_KEY, 0) + len(data)
        request.meta[_BYTES_KEY] = received
        if received >= request.meta.get(keys.MAX_BYTES, self.max_bytes):
            raise StopDownload(fail=False)

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        request.meta.pop(_BYTES_KEY, None)
        max_bytes = request.meta.get(keys.MAX_BYTES, self.max_bytes)
        if not request.meta.get(keys.ANY_CONTENT_TYPE) and not is_html_content_type(
            response.headers.get(b"Content-Type")
        ):
            self.stats.inc_value("focus/page/not_html")
            return response
        if len(response.body) > max_bytes or "download_stopped" in response.flags:
            self.stats.inc_value("focus/page/truncated")
            return response.replace(body=response.body[:max_bytes], flags=[*response.flags, "truncated"])
        return response
