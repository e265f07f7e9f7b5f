"""The crawl history (SPEC §1): history.jsonl, one line per fetch, in order,
with the page's score at fetch time. Evaluation reads this file."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from crawlproject.items import RAW_FIELDS, PageItem
from crawlproject.pipelines.files import OutputFilePipeline

if TYPE_CHECKING:
    from scrapy import Spider


class CrawlHistoryPipeline(OutputFilePipeline):
    file_name = "history.jsonl"

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        if not isinstance(item, PageItem):
            return item  # not a page of ours (a plain spider's dict): not our business
        assert self.file is not None
        record = {k: v for k, v in item.items() if k not in RAW_FIELDS}
        self.file.write(json.dumps(record, ensure_ascii=False) + "\n")
        return item
