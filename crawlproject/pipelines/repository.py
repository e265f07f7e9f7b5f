"""The page repository (docs/methods.md §1): pages/<md5 of canonical URL>.html, plus
pages.jsonl mapping each file to its URL and metadata."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured

from crawlproject import config
from crawlproject.pipelines.files import OutputFilePipeline

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

    from crawlproject.items import PageItem


def page_file_name(canonical_url: str) -> str:
    """The repository file of a page: 32-hex MD5 of its canonical URL.

    >>> page_file_name("http://www.cs.cornell.edu/")
    'fa3e5db206313f1bac862d950da915bf.html'
    """
    return hashlib.md5(canonical_url.encode("utf-8")).hexdigest() + ".html"  # noqa: S324


class PageRepositoryPipeline(OutputFilePipeline):
    file_name = "pages.jsonl"

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        if not config.get_bool(crawler.settings, "FOCUS_STORE_PAGES"):
            raise NotConfigured
        return cls(crawler)

    def opened(self, path: Path) -> None:
        self.pages_dir = path.parent / "pages"
        self.pages_dir.mkdir(exist_ok=True)

    def write(self, item: PageItem, file: IO[Any]) -> None:
        body = item.get("body")
        status = item.get("status")
        if status is None or not 200 <= status < 300 or not body:
            return  # the repository keeps pages, not error pages
        name = page_file_name(item["canonical_url"])
        (self.pages_dir / name).write_bytes(body)
        record = {
            "file": f"pages/{name}",
            "url": item["canonical_url"],
            "fetched_url": item["url"],
            "status": item["status"],
            "content_type": item["content_type"],
            "size": item["size"],
            "last_modified": item["last_modified"],
            "fetched_at": item["fetched_at"],
        }
        file.write(json.dumps(record, ensure_ascii=False) + "\n")
