"""A Scrapy extension for benchmarks: the process CPU time at every page.

    -s 'EXTENSIONS={"bench.cpu_probe.CpuPerPage": 900}' -s CPU_PROBE_FILE=cpu.tsv

writes ``pages<TAB>cpu seconds<TAB>status`` after each page item, so a benchmark can
tell what the first thousand pages cost against the last thousand.
"""

from __future__ import annotations

import time
from typing import IO, TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler


class CpuPerPage:
    def __init__(self, path: str):
        self.path = path
        self.pages = 0
        self.file: IO[str] | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        path = crawler.settings.get("CPU_PROBE_FILE")
        if not path:
            raise NotConfigured
        probe = cls(path)
        crawler.signals.connect(probe.opened, signals.spider_opened)
        crawler.signals.connect(probe.scraped, signals.item_scraped)
        crawler.signals.connect(probe.closed, signals.spider_closed)
        return probe

    def opened(self, spider: Any) -> None:
        self.file = open(self.path, "w", encoding="utf-8")  # noqa: SIM115 (closed on spider_closed)

    def scraped(self, item: Any, spider: Any) -> None:
        if self.file is not None and "status" in item:
            self.pages += 1
            self.file.write(f"{self.pages}\t{time.process_time():.6f}\t{item.get('status')}\n")

    def closed(self, spider: Any) -> None:
        if self.file is not None:
            self.file.close()
