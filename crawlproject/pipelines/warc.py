"""Optionally, a WARC of what was crawled (``FOCUS_WARC_OUTPUT``), written
with warcio: one response record per fetched page, as received (after the
size cut), so a crawl can itself be replayed later."""

from __future__ import annotations

from io import BytesIO
from typing import IO, TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from crawlproject import config
from crawlproject.pipelines.files import OutputFilePipeline

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Self

    from scrapy.crawler import Crawler

    from crawlproject.items import PageItem

_FRAMING = frozenset({"content-length", "transfer-encoding", "content-encoding"})


class WarcWriterPipeline(OutputFilePipeline):
    file_name = "crawl.warc.gz"
    binary = True

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        if not config.get_bool(crawler.settings, "FOCUS_WARC_OUTPUT"):
            raise NotConfigured
        return cls(crawler)

    def opened(self, path: Path) -> None:
        assert self.file is not None
        self.writer = WARCWriter(self.file, gzip=True)

    def write(self, item: PageItem, file: IO[Any]) -> None:
        if item.get("status") is None:
            return
        body = item.get("body") or b""
        headers = [(k, v) for k, v in item.get("headers") or () if k.lower() not in _FRAMING]
        headers.append(("Content-Length", str(len(body))))
        http_headers = StatusAndHeaders(f"{item['status']} -", headers, protocol="HTTP/1.1")
        record = self.writer.create_warc_record(
            item["url"],
            "response",
            payload=BytesIO(body),
            length=len(body),
            http_headers=http_headers,
        )
        self.writer.write_record(record)
