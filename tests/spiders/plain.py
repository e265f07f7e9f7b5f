"""A spider as `scrapy genspider` would make it: yields dicts and follows links."""

from __future__ import annotations

from typing import Any

import scrapy


class PlainSpider(scrapy.Spider):
    name = "plain"
    allowed_domains = ["lease.test"]  # noqa: RUF012 (as genspider writes it)
    start_urls = ["http://lease.test/"]  # noqa: RUF012

    def parse(self, response: Any) -> Any:
        yield {"url": response.url, "title": response.css("title::text").get()}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, callback=self.parse)
