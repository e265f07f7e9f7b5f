"""The link graph (SPEC §1): links.tsv, ``source<TAB>target<TAB>anchor`` per
outlink of every fetched page (targets canonical, fetched or not)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crawlproject.pipelines.files import OutputFilePipeline
from crawlproject.urls import canonicalize

if TYPE_CHECKING:
    from scrapy import Spider


def _clean(text: str) -> str:
    return " ".join(text.split())


class LinkGraphPipeline(OutputFilePipeline):
    file_name = "links.tsv"

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        assert self.file is not None
        source = item["canonical_url"]
        lines = [
            f"{source}\t{canonicalize(target)}\t{_clean(anchor)}\n"
            for target, anchor in item.get("outlinks") or ()
        ]
        self.file.writelines(lines)
        return item
