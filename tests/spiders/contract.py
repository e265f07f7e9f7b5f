"""Plain spiders (no focus asked) that put the scheduler's Scrapy contract
to work: ``scrapy runspider tests/spiders/contract.py -a case=…``."""

from __future__ import annotations

from typing import Any

import scrapy
from scrapy.utils.request import fingerprint

SITE = "http://contract.test"
#: Hosts of one site, each a download slot of its own.
SLOT_HOSTS = ("a.contract.test", "b.contract.test", "c.contract.test")


class ContractSpider(scrapy.Spider):
    name = "contract"

    def __init__(self, case: str = "dont_filter", count: str = "3", **kwargs: Any):
        super().__init__(**kwargs)
        self.case, self.count = case, int(count)

    async def start(self) -> Any:
        for request in getattr(self, f"_{self.case}")():
            yield request

    def _dont_filter(self) -> Any:
        return [scrapy.Request(f"{SITE}/x", dont_filter=True) for _ in range(self.count)]

    def _post(self) -> Any:
        return [scrapy.FormRequest(f"{SITE}/form", formdata={"q": str(i)}) for i in range(self.count)]

    def _repeat(self) -> Any:
        return [scrapy.Request(f"{SITE}/x") for _ in range(self.count)]

    def _query(self) -> Any:
        return [scrapy.Request(f"{SITE}/page?a={i}") for i in range(self.count)]

    # The next two come from a page's callback, all at once: Scrapy reads
    # start requests only as the scheduler asks for them.

    def _slots(self) -> Any:
        return [scrapy.Request(f"{SITE}/hub", callback=self.slot_links)]

    def slot_links(self, response: Any) -> Any:
        # every request of host a first, then b's, then c's: equal priorities
        for host in SLOT_HOSTS:
            for i in range(self.count):
                yield scrapy.Request(f"http://{host}/p{i}")

    def _many(self) -> Any:
        return [scrapy.Request(f"{SITE}/hub", callback=self.many_links)]

    def many_links(self, response: Any) -> Any:
        for i in range(self.count):
            yield scrapy.Request(f"{SITE}/many/{i}")

    def parse(self, response: Any) -> Any:
        yield {"url": response.url}


class QueryBlindFingerprinter:
    """A project's own fingerprinter: two URLs that differ only in their
    query are one request."""

    def fingerprint(self, request: scrapy.Request) -> bytes:
        return fingerprint(request.replace(url=request.url.split("?")[0]))
