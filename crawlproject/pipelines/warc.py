"""Optionally, a WARC of what was crawled (``FOCUS_WARC_OUTPUT``), written
with warcio: one response record per fetched page, as received (after the
size cut), so a crawl can itself be replayed later; beside it a ``metadata``
record (``WARC-Concurrent-To`` the response, ``application/warc-fields`` as
Heritrix writes its own) with what the crawl knew of the page: the judge's
verdict, the link that led to it, its title and language."""

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
        fields = verdict_fields(item)
        if fields:
            metadata = self.writer.create_warc_record(
                item["url"], "metadata", payload=BytesIO(fields), length=len(fields),
                warc_content_type="application/warc-fields",
                warc_headers_dict={"WARC-Concurrent-To": record.rec_headers.get_header("WARC-Record-ID")},
            )
            self.writer.write_record(metadata)


#: item field → warc-fields name, for the metadata record (None values left out)
METADATA_FIELDS = {"relevance": "relevance", "relevant": "relevant", "score": "score", "depth": "hops-from-seed",
                   "parent_url": "via", "found_via": "anchor", "title": "title", "language": "language"}


def verdict_fields(item: PageItem) -> bytes:
    """The page's metadata as ``name: value`` lines (one line each: newlines folded)."""
    lines = []
    for field, name in METADATA_FIELDS.items():
        value = item.get(field)
        if value is None:
            continue
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        lines.append(f"{name}: {' '.join(text.split())}\r\n")
    return "".join(lines).encode("utf-8")
