"""Base for pipelines that write one output file of a crawl: opened (for
appending: a resumed crawl writes on) at the first page item, so a spider
that yields items of its own (dicts) gets no files from us."""

from __future__ import annotations

from typing import IO, TYPE_CHECKING, Any

from crawlproject.corpus.output import output_dir
from crawlproject.items import PageItem

if TYPE_CHECKING:
    from pathlib import Path
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

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        if isinstance(item, PageItem):  # not a page of ours (a dict of a plain spider): not our business
            file = self._file()
            self.write(item, file)
            # Out of our buffer before the page's lease is acknowledged: a
            # killed crawl has every page it counts as done on disk.
            file.flush()
        return item

    def write(self, item: PageItem, file: IO[Any]) -> None:
        raise NotImplementedError

    def opened(self, path: Path) -> None:
        """Called once the file is open (a subclass may prepare more)."""

    def _file(self) -> IO[Any]:
        if self.file is None:
            spider = self.crawler.spider
            assert spider is not None
            path = output_dir(spider, self.crawler.settings) / self.file_name
            mode = "ab" if self.binary else "a"
            self.file = open(path, mode, encoding=None if self.binary else "utf-8")  # noqa: SIM115 (closed in close_spider)
            self.opened(path)
        return self.file

    def close_spider(self, spider: Spider | None = None) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None
