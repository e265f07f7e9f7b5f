"""Scrapy's CloseSpider, with CLOSESPIDER_PAGECOUNT counting pages only.

Scrapy counts every response, so the robots.txt files our robots middleware
fetches would eat into a page budget; here they do not count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.extensions.closespider import CloseSpider as ScrapyCloseSpider

from crawlproject import meta as keys

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.http import Response


class CloseSpider(ScrapyCloseSpider):
    def page_count(self, response: Response, request: Request, spider: Spider) -> None:
        if request.meta.get(keys.ROBOTSTXT):
            return
        super().page_count(response, request, spider)
