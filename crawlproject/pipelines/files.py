"""Base for pipelines that write one output file for the length of a crawl."""

from __future__ import annotations

from typing import IO, TYPE_CHECKING, Any

from crawlproject.output import output_dir

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler


class OutputFilePipeline:
    #: File name inside the crawl's output folder.
    file_name: str
    binary = False

    def __init__(self, crawler: Crawler):
        self.crawler = crawler
        self.file: IO[Any] | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def open_spider(self, spider: Spider | None = None) -> None:
        spider = spider or self.crawler.spider
        assert spider is not None
        path = output_dir(spider, self.crawler.settings) / self.file_name
        if self.binary:
            self.file = open(path, "ab")  # noqa: SIM115 (closed in close_spider)
        else:
            self.file = open(path, "a", encoding="utf-8")  # noqa: SIM115

    def close_spider(self, spider: Spider | None = None) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None
