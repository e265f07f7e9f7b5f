"""The link graph (SPEC §1): links.tsv, ``source<TAB>target<TAB>anchor`` per
outlink of every fetched page (both canonical keys; targets fetched or not)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crawlproject.items import PageItem
from crawlproject.pipelines.files import OutputFilePipeline

if TYPE_CHECKING:
    from scrapy import Spider


def _clean(text: str) -> str:
    return " ".join(text.split())


class LinkGraphPipeline(OutputFilePipeline):
    file_name = "links.tsv"

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        if not isinstance(item, PageItem):
            return item  # not a page of ours (a plain spider's dict): not our business
        assert self.file is not None
        source = item["canonical_url"]
        lines = [
            f"{source}\t{target}\t{_clean(anchor)}\n"
            for target, anchor in item.get("outlinks") or ()
        ]
        self.file.writelines(lines)
        return item
