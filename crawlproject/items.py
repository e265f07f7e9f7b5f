"""The record a crawl leaves for every page it fetched (or failed to fetch)."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import scrapy

from crawlproject.web import meta as keys
from crawlproject.web.extract import language_of, title_of
from crawlproject.web.page import page_key

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.http import Response
    from twisted.python.failure import Failure

    from crawlproject.web.page import Link, Page

#: Fields that carry raw content for the pipelines that store it; they are
#: removed before the item is exported (see pipelines.raw).
RAW_FIELDS = ("body", "headers", "outlinks")
#: Fields of a page's content, in items and the collection but not in the
#: history (which stays one short line per fetch).
CONTENT_FIELDS = ("text", "markdown")


class PageItem(scrapy.Item):
    url = scrapy.Field()  # the URL fetched (after redirects)
    canonical_url = scrapy.Field()
    requested_url = scrapy.Field()  # the URL popped from the frontier
    status = scrapy.Field()  # HTTP status, None when the fetch failed
    error = scrapy.Field()  # why the fetch failed, else None
    order = scrapy.Field()  # 1 for the first page fetched, 2 for the next, …
    popped = (
        scrapy.Field()
    )  # the frontier's order: 1 for the first request this crawl process popped (None: not popped)
    depth = scrapy.Field()  # link distance from a seed
    parent_url = scrapy.Field()  # page the link was found on (None for seeds)
    score = scrapy.Field()  # frontier score when popped (None for seeds)
    relevance = scrapy.Field()  # the judge's verdict on this page, if the strategy has one
    relevant = scrapy.Field()  # the judge calls it relevant (relevance ≥ its threshold); None without a judge
    title = scrapy.Field()  # <title>, whitespace folded
    language = scrapy.Field()  # as the page declares it (<html lang>, Content-Language); in a collection, else detected
    found_via = scrapy.Field()  # the anchor text of the link the page was found by (None for seeds)
    rendered = scrapy.Field()  # fetched by the browser (FOCUS_RENDER; crawlproject.middlewares.render)
    # The main text (FOCUS_COLLECTION; crawlproject.web.extract), not in the history:
    text = scrapy.Field()
    markdown = scrapy.Field()
    fetched_at = scrapy.Field()  # ISO 8601, UTC
    content_type = scrapy.Field()
    size = scrapy.Field()  # bytes of body kept (after the size cut)
    truncated = scrapy.Field()  # body cut at FOCUS_MAX_PAGE_BYTES
    last_modified = scrapy.Field()
    outlink_count = scrapy.Field()
    near_duplicate_of = (
        scrapy.Field()
    )  # the page fetched before that this one nearly copies (its links are not followed)
    # Raw content, stripped before export:
    body = scrapy.Field()
    headers = scrapy.Field()  # list of (name, value) pairs, as received
    outlinks = scrapy.Field()  # list of (canonical URL, anchor text)

    def __repr__(self) -> str:
        """One short line: Scrapy logs every item at DEBUG (its template's
        level), and a page's body, text and links made 130 lines a page;
        the exported item (the feed, the history) has every field."""
        shown = {name: self[name] for name in ("url", "status", "relevance", "relevant", "title", "error")
                 if self.get(name) is not None}
        return f"PageItem({shown})"

    @classmethod
    def of_response(
        cls, response: Response, page: Page, relevance: float | None, links: list[Link], order: int,
        relevant: bool | None = None,
    ) -> PageItem:
        """The record of a page fetched (any status)."""
        meta = response.meta
        redirects = meta.get("redirect_urls") or []
        headers = response.headers
        return cls(
            url=response.url,
            canonical_url=page.key,
            requested_url=redirects[0] if redirects else response.request.url,  # type: ignore[union-attr]
            status=response.status,
            error=None,
            order=order,
            popped=meta.get(keys.POPPED),
            depth=meta.get("depth", 0),
            parent_url=meta.get(keys.PARENT),
            score=finite(meta.get(keys.SCORE)),
            relevance=relevance,
            relevant=relevant,
            title=title_of(response),
            language=language_of(response),
            found_via=meta.get(keys.ANCHOR),
            rendered=bool(meta.get(keys.RENDERED)),
            fetched_at=now(),
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

    @classmethod
    def of_failure(cls, request: Request, failure: Failure, order: int) -> PageItem:
        """The record of a fetch that failed (dead host, timeout)."""
        return cls(
            url=request.url,
            canonical_url=page_key(request.url, request.meta),
            requested_url=(request.meta.get("redirect_urls") or [request.url])[0],
            status=None,
            error=f"{getattr(failure.type, '__name__', 'Error')}: {failure.getErrorMessage()}"[:500],
            order=order,
            popped=request.meta.get(keys.POPPED),
            depth=request.meta.get("depth", 0),
            parent_url=request.meta.get(keys.PARENT),
            score=finite(request.meta.get(keys.SCORE)),
            relevance=None,
            relevant=None,
            title=None,
            language=None,
            found_via=request.meta.get(keys.ANCHOR),
            rendered=False,
            fetched_at=now(),
            content_type=None,
            size=0,
            truncated=False,
            last_modified=None,
            outlink_count=0,
            body=b"",
            headers=[],
            outlinks=[],
        )


def finite(score: Any) -> float | None:
    """A score as recorded: ``None`` for none, and for a seed's +∞.

    >>> finite(float("inf")), finite("0.5"), finite(None)
    (None, 0.5, None)
    """
    if score is None:
        return None
    score = float(score)
    return score if math.isfinite(score) else None


def _header(headers: Any, name: bytes) -> str | None:
    value = headers.get(name)
    return value.decode("latin-1") if value else None


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")
