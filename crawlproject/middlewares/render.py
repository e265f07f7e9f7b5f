"""Downloader middleware: pages whose links or text scripts build are
rendered in a browser (``FOCUS_RENDER``, issue 52), through scrapy-playwright
driving the system's chromium (``FOCUS_BROWSER``; no browser download).

* ``never`` (the default): no browser starts.
* ``always``: every page is fetched by the browser.
* ``auto``: a page is fetched as usual; one whose HTML shows that scripts
  build it — scripts, and fewer than ``RENDER_MIN_WORDS`` visible words or
  not one link — is fetched again by the browser, and the rendered page
  replaces it. Its second fetch goes through the same downloader slot (the
  host's politeness holds) and counts against a page budget as any fetch.

Rendered requests reach the replay through the browser's own proxy setting
(a browser context per proxy), as plain ones do through Scrapy's. Counted:
``focus/render/pages`` (rendered), ``focus/render/auto`` (chosen by auto),
``focus/render/failed`` (the browser failed: the plain fetch is kept).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from lxml import etree
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse

from crawlproject import config
from crawlproject.web import meta as keys
from crawlproject.web.text import join_text

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

#: fewer visible words than this, beside scripts: the page is built by them
RENDER_MIN_WORDS = 50
#: the request meta key scrapy-playwright renders on
PLAYWRIGHT = "playwright"
_VISIBLE_TEXT = etree.XPath("//body//text()[not(ancestor::script) and not(ancestor::style) and not(ancestor::noscript)]",
                            smart_strings=False)


def needs_rendering(response: Response) -> bool:
    """Whether the fetched HTML shows that scripts build the page: it has
    scripts, and little text or no link."""
    if not isinstance(response, HtmlResponse) or not response.body:
        return False
    root = response.selector.root
    if not root.xpath("//script"):
        return False
    words = len(join_text(_VISIBLE_TEXT(root)).split())
    return words < RENDER_MIN_WORDS or not root.xpath("//a[@href]")


class RenderMiddleware:
    def __init__(self, crawler: Crawler, mode: str):
        self.crawler, self.mode = crawler, mode
        self._said_failure = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        mode = config.get_choice(crawler.settings, "FOCUS_RENDER")
        if mode == "never":
            raise NotConfigured
        return cls(crawler, mode)

    @staticmethod
    def _not_a_page(request: Request) -> bool:
        return bool(request.meta.get(keys.ROBOTSTXT) or request.meta.get(keys.SITEMAP))

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        if self._not_a_page(request):
            return
        if self.mode == "always":
            request.meta[PLAYWRIGHT] = True
        if request.meta.get(PLAYWRIGHT):
            browser_context(request.meta)

    async def process_response(self, request: Request, response: Response, spider: Spider | None = None) -> Response:
        stats = self.crawler.stats
        assert stats is not None
        if request.meta.get(PLAYWRIGHT):
            stats.inc_value("focus/render/pages")
            return response
        if self.mode != "auto" or self._not_a_page(request) or not needs_rendering(response):
            return response
        stats.inc_value("focus/render/auto")
        rendering = request.replace(meta={**request.meta, PLAYWRIGHT: True}, dont_filter=True)
        assert self.crawler.engine is not None
        try:
            return await self.crawler.engine.download_async(rendering)
        except Exception as exc:  # a page the browser cannot render keeps its plain fetch
            stats.inc_value("focus/render/failed")
            if not self._said_failure:
                self._said_failure = True
                logger.warning("Rendering %s failed (%s); its plain fetch is kept, further failures are counted "
                               "in focus/render/failed", request.url, exc)
            return response


def browser_context(meta: dict[str, Any]) -> None:
    """The browser context a rendered request goes out in: through the same
    proxy as Scrapy's requests (the replay), one context per proxy."""
    proxy = meta.get("proxy")
    if proxy and "playwright_context" not in meta:
        meta["playwright_context"] = f"proxy {proxy}"
        # the replay signs https pages with a certificate of its own, as Scrapy accepts it
        meta["playwright_context_kwargs"] = {"proxy": {"server": proxy}, "ignore_https_errors": True}
