"""The record a crawl leaves for every page it fetched (or failed to fetch)."""

from __future__ import annotations

import scrapy

#: Fields that carry raw content for the pipelines that store it; they are
#: removed before the item is exported (see pipelines.raw).
RAW_FIELDS = ("body", "headers", "outlinks")


class PageItem(scrapy.Item):
    url = scrapy.Field()  # the URL fetched (after redirects)
    canonical_url = scrapy.Field()
    requested_url = scrapy.Field()  # the URL popped from the frontier
    status = scrapy.Field()  # HTTP status, None when the fetch failed
    error = scrapy.Field()  # why the fetch failed, else None
    order = scrapy.Field()  # 1 for the first page fetched, 2 for the next, …
    depth = scrapy.Field()  # link distance from a seed
    parent_url = scrapy.Field()  # page the link was found on (None for seeds)
    score = scrapy.Field()  # frontier score when popped (None for seeds)
    relevance = scrapy.Field()  # the strategy's estimate for this page, if any
    fetched_at = scrapy.Field()  # ISO 8601, UTC
    content_type = scrapy.Field()
    size = scrapy.Field()  # bytes of body kept (after the size cut)
    truncated = scrapy.Field()  # body cut at FOCUS_MAX_PAGE_BYTES
    last_modified = scrapy.Field()
    outlink_count = scrapy.Field()
    # Raw content, stripped before export:
    body = scrapy.Field()
    headers = scrapy.Field()  # list of (name, value) pairs, as received
    outlinks = scrapy.Field()  # list of (canonical URL, anchor text)
