"""Sitemaps feed the frontier: the pages a site lists, scored like links.

A site's robots.txt may name its sitemaps (``Sitemap:`` lines); a spider may
name more (``-a sitemaps=URL,…`` or the class attribute ``sitemap_urls``, as
Scrapy's SitemapSpider). Each sitemap is fetched — through the frontier, at
the score of the request that led to the host (a seed's host: at once) —
and read with Scrapy's sitemap parser: a sitemap index names more sitemaps
(up to ``FOCUS_SITEMAP_MAX_DEPTH`` levels), a urlset names pages. The pages
are handed to the strategy as the links of a page without text: each is
scored by its URL and by what the strategy has learnt (a link learner
knows its directory; best-first, which scores by the parent's text, puts
them last), then queued like any link — robots.txt, the scope, the
canonical form and the seen set apply.

Limits of the sitemap protocol: ``FOCUS_SITEMAP_MAX_BYTES`` (after gunzip)
and ``FOCUS_SITEMAP_MAX_URLS`` per file; a page of another host is ignored
(a sitemap speaks for its own host). A sitemap that is too big, not XML, or
not a sitemap is counted (``focus/sitemap/…``), never fatal; the URLs read
before an XML error are kept.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

import lxml.etree
from scrapy import Request, signals
from scrapy.utils._compression import _DecompressionMaxSizeExceeded
from scrapy.utils.gz import gunzip, gzip_magic_number
from scrapy.utils.sitemap import Sitemap

from crawlproject import config
from crawlproject.web import meta as keys
from crawlproject.web.page import Link, Page

if TYPE_CHECKING:
    from collections.abc import Iterator

    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from twisted.python.failure import Failure

    from crawlproject.strategies.factory import Focus

logger = logging.getLogger(__name__)


class SitemapsMixin:
    """Sitemaps of robots.txt and of the spider, read into the frontier."""

    #: Sitemaps to read from the start, besides those robots.txt names.
    sitemap_urls: ClassVar[tuple[str, ...]] = ()
    crawler: Crawler
    focus: Focus

    def _open_sitemaps(self, crawler: Crawler, given: str | None) -> None:
        settings = crawler.settings
        self.read_sitemaps = config.get_bool(settings, "FOCUS_SITEMAPS")
        self.sitemap_max_bytes = config.get_int(settings, "FOCUS_SITEMAP_MAX_BYTES")
        self.sitemap_max_urls = config.get_int(settings, "FOCUS_SITEMAP_MAX_URLS")
        self.sitemap_max_depth = config.get_int(settings, "FOCUS_SITEMAP_MAX_DEPTH")
        self.start_sitemaps = [u.strip() for u in (given or "").split(",") if u.strip()] or list(self.sitemap_urls)
        self._sitemaps_asked: set[str] = set()
        self.sitemap_lastmods: dict[str, str] = {}  #: page → its sitemap's lastmod, where one was given
        if self.read_sitemaps:
            crawler.signals.connect(self._robots_parsed, signal=signals.robots_parsed)

    def _sitemap_requests(self) -> Iterator[Request]:
        """The spider's own sitemaps, first of all."""
        for url in self.start_sitemaps:
            request = self._sitemap_request(url, float("inf"), 0)
            if request is not None:
                yield request

    def _robots_parsed(self, robotparser: Any, request: Request, **_: Any) -> None:
        """robots.txt of a host was read: its sitemaps join the frontier, at
        the score of the request that brought the crawl to the host."""
        listed = getattr(robotparser, "sitemaps", None)
        if not callable(listed) or self.crawler.engine is None:
            return
        score = request.meta.get(keys.SCORE, 0.0)
        for url in listed():
            sitemap = self._sitemap_request(url, score, 0)
            if sitemap is not None:
                self._sitemap_stat("focus/sitemap/from_robots")
                self.crawler.engine.crawl(sitemap)

    def _sitemap_request(self, url: str, score: float, depth: int) -> Request | None:
        if url in self._sitemaps_asked or not url.startswith(("http://", "https://")):
            return None
        self._sitemaps_asked.add(url)
        meta = {
            keys.SITEMAP: depth, keys.SCORE: score, keys.ANY_CONTENT_TYPE: True,
            keys.MAX_BYTES: self.sitemap_max_bytes + 1,  # one more: a cut file is seen as too big
        }
        return Request(url, callback=self.parse_sitemap, errback=self.on_sitemap_error, meta=meta)

    def parse_sitemap(self, response: Response, **_: Any) -> Iterator[Any]:
        """A sitemap fetched: its sitemaps or its pages, to the frontier."""
        self._sitemap_stat("focus/sitemap/fetched")
        if not 200 <= response.status < 300:
            self._sitemap_stat("focus/sitemap/failed")
            return
        body = self._sitemap_body(response)
        if body is None:
            return
        kind, locations = self._read(body)
        if kind is None:
            return
        depth = int(response.meta.get(keys.SITEMAP, 0))
        if kind == "sitemapindex":
            if depth + 1 > self.sitemap_max_depth:
                self._sitemap_stat("focus/sitemap/too_deep")
                return
            for url in locations:
                request = self._sitemap_request(url, response.meta.get(keys.SCORE, 0.0), depth + 1)
                if request is not None:
                    yield request
            return
        yield from self._sitemap_pages(response, locations)

    def _sitemap_body(self, response: Response) -> bytes | None:
        body = response.body
        if "truncated" in response.flags or len(body) > self.sitemap_max_bytes:
            self._sitemap_stat("focus/sitemap/too_big")
            return None
        if gzip_magic_number(response):
            try:
                body = gunzip(body, max_size=self.sitemap_max_bytes)
            except _DecompressionMaxSizeExceeded:
                self._sitemap_stat("focus/sitemap/too_big")
                return None
            except (OSError, EOFError, ValueError):
                self._sitemap_stat("focus/sitemap/bad")
                return None
        return body

    def _read(self, body: bytes) -> tuple[str | None, list[str]]:
        """The sitemap's kind and locations; what precedes an XML error is kept."""
        locations: list[str] = []
        try:
            sitemap = Sitemap(body)
            if sitemap.type not in ("urlset", "sitemapindex"):
                self._sitemap_stat("focus/sitemap/bad")
                return None, []
            for entry in sitemap:
                if len(locations) >= self.sitemap_max_urls:
                    self._sitemap_stat("focus/sitemap/urls_cut")
                    break
                location = entry.get("loc", "")
                if location:
                    locations.append(location)
                    if entry.get("lastmod"):
                        self.sitemap_lastmods[location] = entry["lastmod"]
            else:
                # The parser recovers from broken XML (a file cut short, a stray tag):
                # what it read is kept, and the sitemap is counted as bad.
                if any(error.level_name == "FATAL" for error in sitemap.xmliter.error_log):
                    self._sitemap_stat("focus/sitemap/bad")
        except (lxml.etree.LxmlError, StopIteration, ValueError, AttributeError):
            self._sitemap_stat("focus/sitemap/bad")
            if not locations:
                return None, []
            return "urlset" if "sitemapindex" not in body[:500].decode(
                "utf-8", "replace"
            ) else "sitemapindex", locations
        return sitemap.type, locations

    def _sitemap_pages(self, response: Response, locations: list[str]) -> Iterator[Request]:
        """The pages a urlset lists, scored by the strategy as the links of
        a page without text, whose relevance is nothing yet."""
        host = urlsplit(response.url).hostname
        links = []
        for location in locations:
            if urlsplit(location).hostname != host:
                self._sitemap_stat("focus/sitemap/other_host")
                continue
            links.append(Link(location, ""))
        if not links:
            return
        self._sitemap_stat("focus/sitemap/urls", len(links))
        page = Page(response.url, "", links, response.meta.get("depth", 0), None, response.meta)
        scores = self.focus.score_links(page, 0.0)
        inherited = {keys.PARENT: response.url, **self.focus.child_state(page, 0.0)}
        for link, score in zip(links, scores, strict=True):
            if score is not None:
                yield self._request(link.url, {keys.SCORE: score, **inherited}, link.key)

    def on_sitemap_error(self, failure: Failure) -> None:
        """A sitemap that could not be fetched (or robots.txt forbids): counted."""
        self._sitemap_stat("focus/sitemap/failed")

    def _request(self, url: str, meta: dict[str, Any], key: str | None = None) -> Request:
        raise NotImplementedError

    def _sitemap_stat(self, stat: str, count: int = 1) -> None:
        if self.crawler.stats is not None:
            self.crawler.stats.inc_value(stat, count)
