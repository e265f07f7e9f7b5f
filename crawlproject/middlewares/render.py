"""Downloader middleware: pages whose links or text scripts build are
rendered in a browser (``FOCUS_RENDER``), through
scrapy-playwright driving the system's chromium (``FOCUS_BROWSER``; no
browser download).

* ``never`` (the default): no browser starts.
* ``always``: every page is fetched by the browser.
* ``auto``: a page is fetched as usual; one whose HTML shows that scripts
  build it — scripts, and fewer than ``RENDER_MIN_WORDS`` visible words or
  not one link — is fetched again by the browser, and every later page of its
  host goes to the browser straight away (one fetch, not two). A rendered
  fetch goes through the same downloader slot (the host's politeness holds)
  and counts against a page budget as any fetch.

A render waits for the page's scripts (:func:`settle`): the network idle,
then the page unchanged for :data:`QUIET_MS`, at most ``FOCUS_RENDER_WAIT``
seconds. The page's own HTML is fetched by us for the browser
(:func:`_serve_document`) so that it is decoded in its own charset, as Scrapy
decodes it (a browser left to guess reads undeclared UTF-8 as windows-1252),
and so that a render that fails leaves the page as fetched.

A render **fails** when the browser errs, when a loading placeholder is still
shown once the page settled, or when scripts that had to build the page
changed nothing. The page is then kept as not rendered (its plain HTML),
counted in ``focus/render/failed``, and the first failure is one WARNING.
Counted too: ``focus/render/pages`` (rendered), ``focus/render/auto`` (pages
auto found needing it), ``focus/render/hosts`` (hosts auto renders from then on).

Rendered requests reach the replay through the browser's own proxy setting
(a browser context per proxy), as plain ones do through Scrapy's.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from typing import TYPE_CHECKING, Any

from lxml import etree
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse
from scrapy.utils.httpobj import urlparse_cached
from w3lib.encoding import html_to_unicode

from crawlproject import config
from crawlproject.web import meta as keys
from crawlproject.web.text import join_text

if TYPE_CHECKING:
    from typing import Self

    from playwright.async_api import Page, Route
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

#: fewer visible words than this, beside scripts: the page is built by them
RENDER_MIN_WORDS = 50
#: a page settled: no change to its elements or text for this long
QUIET_MS = 300
#: a placeholder still shown after this long without a change: the render failed
PLACEHOLDER_QUIET_MS = 1500
#: the request meta key scrapy-playwright renders on
PLAYWRIGHT = "playwright"
#: our own meta keys for a render: the page's HTML as served (status, headers,
#: body), whether a placeholder was left, and "fetch this one plainly"
_AS_SERVED = "_focus_render_as_served"
_PLACEHOLDER_LEFT = "_focus_render_placeholder"
_PLAIN = "_focus_render_plain"
_SECOND = "_focus_render_second"  # auto's second fetch of a page fetched plainly first
_VISIBLE_TEXT = etree.XPath(
    "//body//text()[not(ancestor::script) and not(ancestor::style) and not(ancestor::noscript)]", smart_strings=False
)

#: Runs in the page: resolves once nothing in the document changed for
#: ``quiet`` ms (a shown loading placeholder needs ``placeholderQuiet``), or
#: after ``bound`` ms; answers whether a placeholder is still shown.
_SETTLE_JS = r"""
async ({bound, quiet, placeholderQuiet}) => {
  const loading = /^\s*(loading|please wait|one moment)\b[\s\S]{0,20}$/i;
  const placeholder = () => Array.from(document.body ? document.body.querySelectorAll('*') : []).some(
    (e) => e.children.length === 0 && e.getClientRects().length > 0 && loading.test(e.innerText || ''));
  let changed = performance.now();
  const watch = new MutationObserver(() => { changed = performance.now(); });
  watch.observe(document, {subtree: true, childList: true, characterData: true});
  const start = performance.now();
  try {
    while (performance.now() - start < bound) {
      const shown = placeholder();
      if (performance.now() - changed >= (shown ? placeholderQuiet : quiet)) return shown;
      await new Promise((next) => setTimeout(next, 50));
    }
    return placeholder();
  } finally { watch.disconnect(); }
}
"""


def visible_words(response: HtmlResponse) -> list[str]:
    return join_text(_VISIBLE_TEXT(response.selector.root)).split()


def needs_rendering(response: Response) -> bool:
    """Whether the fetched HTML shows that scripts build the page: it has
    scripts, and little text or no link."""
    if not isinstance(response, HtmlResponse) or not response.body:
        return False
    root = response.selector.root
    if not root.xpath("//script"):
        return False
    return len(visible_words(response)) < RENDER_MIN_WORDS or not root.xpath("//a[@href]")


class RenderMiddleware:
    def __init__(self, crawler: Crawler, mode: str):
        self.crawler, self.mode = crawler, mode
        self.wait = config.get_float(crawler.settings, "FOCUS_RENDER_WAIT")
        self.hosts: set[str] = set()  # auto: hosts whose pages scripts build
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
        if self._not_a_page(request) or request.meta.get(_PLAIN):
            return
        if self.mode == "always" or (self.mode == "auto" and urlparse_cached(request).hostname in self.hosts):
            request.meta[PLAYWRIGHT] = True
        if request.meta.get(PLAYWRIGHT):
            self._prepare(request.meta)

    def _prepare(self, meta: dict[str, Any]) -> None:
        browser_context(meta)
        meta["playwright_page_init_callback"] = _serve_document
        meta["playwright_page_methods"] = [_page_method(functools.partial(settle, meta=meta, seconds=self.wait))]

    async def process_response(self, request: Request, response: Response, spider: Spider | None = None) -> Response:
        stats = self.crawler.stats
        assert stats is not None
        if request.meta.get(PLAYWRIGHT):
            return self._checked(request, response)
        if self.mode != "auto" or self._not_a_page(request) or request.meta.get(_PLAIN) \
                or not needs_rendering(response):
            return response
        stats.inc_value("focus/render/auto")
        rendering = request.replace(meta={**request.meta, PLAYWRIGHT: True, _SECOND: True}, dont_filter=True)
        assert self.crawler.engine is not None
        try:
            rendered = await self.crawler.engine.download_async(rendering)
        except Exception as exc:  # a page the browser cannot render keeps its plain fetch
            self._failed(request, f"the browser failed: {exc}")
            return response
        if not rendering.meta.get(keys.RENDERED):
            return response  # the render failed (counted): the plain fetch stands
        host = urlparse_cached(request).hostname
        if host and host not in self.hosts:
            self.hosts.add(host)
            stats.inc_value("focus/render/hosts")
        request.meta[keys.RENDERED] = True
        return rendered

    def _checked(self, request: Request, response: Response) -> Response:
        """A rendered response, or the page as served when the render failed."""
        meta = request.meta
        as_served = meta.pop(_AS_SERVED, None)
        placeholder = meta.pop(_PLACEHOLDER_LEFT, False)
        plain = _response_as_served(request, as_served) if as_served else None
        if placeholder:
            reason = "a loading placeholder was still shown"
        elif plain is not None and isinstance(response, HtmlResponse) and needs_rendering(plain) \
                and visible_words(plain) == visible_words(response):
            reason = "its scripts changed nothing"
        else:
            meta[keys.RENDERED] = True
            self.crawler.stats.inc_value("focus/render/pages")  # type: ignore[union-attr]
            if plain is not None:  # the page's own Content-Type, not the charset we told the browser
                headers = response.headers.copy()
                headers["Content-Type"] = plain.headers.get("Content-Type", b"text/html")
                return response.replace(headers=headers)
            return response
        self._failed(request, reason)
        return plain if plain is not None else response

    def process_exception(
        self, request: Request, exception: BaseException, spider: Spider | None = None
    ) -> Request | None:
        """A page the browser could not fetch is fetched plainly (auto's
        second fetch keeps its first instead: process_response)."""
        if not request.meta.get(PLAYWRIGHT) or request.meta.get(_SECOND):
            return None
        self._failed(request, f"the browser failed: {exception}")
        meta = {key: value for key, value in request.meta.items() if not key.startswith("playwright")}
        return request.replace(meta={**meta, _PLAIN: True}, dont_filter=True)

    def _failed(self, request: Request, reason: str) -> None:
        self.crawler.stats.inc_value("focus/render/failed")  # type: ignore[union-attr]
        if not self._said_failure:
            self._said_failure = True
            logger.warning("Rendering %s failed (%s): the page is kept as fetched, not rendered; further failures "
                           "are counted in focus/render/failed", request.url, reason)


def _page_method(method: Any) -> Any:
    from scrapy_playwright.page import PageMethod

    return PageMethod(method)


async def settle(page: Page, *, meta: dict[str, Any], seconds: float) -> None:
    """Wait for the page's scripts: the network idle, then the document
    unchanged (:data:`_SETTLE_JS`), *seconds* at most in all; notes in *meta*
    whether a loading placeholder is still shown."""
    from playwright.async_api import Error as PlaywrightError

    deadline = time.monotonic() + seconds
    # a page that keeps the network busy (polling, streams) is read when it settles or at the deadline
    with contextlib.suppress(PlaywrightError):
        await page.wait_for_load_state("networkidle", timeout=seconds * 1000)
    bound = max(0.0, deadline - time.monotonic()) * 1000
    meta[_PLACEHOLDER_LEFT] = bool(await page.evaluate(
        _SETTLE_JS, {"bound": bound, "quiet": QUIET_MS, "placeholderQuiet": PLACEHOLDER_QUIET_MS}))


async def _serve_document(page: Page, request: Request) -> None:
    """scrapy-playwright's page init callback: the page's own HTML is fetched
    by us and handed to the browser (:func:`_fulfil_document`); everything
    else the page asks for goes on to scrapy-playwright's route."""
    await page.route("**/*", functools.partial(_fulfil_document, request=request))


async def _fulfil_document(route: Route, *, request: Request) -> None:
    asked = route.request
    if asked.resource_type != "document" or not asked.is_navigation_request() or asked.frame.parent_frame is not None:
        await route.fallback()
        return
    headers: dict[str, str] = {
        **await asked.all_headers(),
        **{str(name): str(value) for name, value in request.headers.to_unicode_dict().items()},
    }
    headers.pop("accept-encoding", None)  # Playwright's fetch decodes what it negotiates
    fetched = await route.fetch(headers=headers, max_redirects=0)
    body = await fetched.body()
    served: dict[str, str] = dict(fetched.headers)
    content_type = served.get("content-type", "")
    if content_type.startswith("text/html") and "charset=" not in content_type.lower():
        # the charset Scrapy reads it in (BOM, <meta>, else detected), told to the browser
        encoding = html_to_unicode(content_type, body)[0]
        served["content-type"] = f"{content_type or 'text/html'}; charset={encoding}"
    if asked.url.rstrip("/") == request.url.rstrip("/") or _AS_SERVED not in request.meta:
        request.meta[_AS_SERVED] = (fetched.status, fetched.headers, body)
    await route.fulfill(status=fetched.status, headers=served, body=body)


def _response_as_served(request: Request, as_served: tuple[int, dict[str, str], bytes]) -> HtmlResponse:
    status, headers, body = as_served
    return HtmlResponse(url=request.url, status=status, headers=headers, body=body, request=request)


def browser_context(meta: dict[str, Any]) -> None:
    """The browser context a rendered request goes out in: through the same
    proxy as Scrapy's requests (the replay), one context per proxy."""
    proxy = meta.get("proxy")
    if proxy and "playwright_context" not in meta:
        meta["playwright_context"] = f"proxy {proxy}"
        # the replay signs https pages with a certificate of its own, as Scrapy accepts it
        meta["playwright_context_kwargs"] = {"proxy": {"server": proxy}, "ignore_https_errors": True}
