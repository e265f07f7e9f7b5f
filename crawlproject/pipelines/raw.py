"""Last pipeline: drop the raw page content once the writers have it, so
feed exports (``-o items.jsonl``) carry metadata only."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crawlproject.items import RAW_FIELDS, PageItem

if TYPE_CHECKING:
    from scrapy import Spider


class StripRawContentPipeline:
    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        if not isinstance(item, PageItem):
            return item
        for field in RAW_FIELDS:
            item.pop(field, None)
        return item
