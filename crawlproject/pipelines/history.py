"""The crawl history (docs/methods.md §1): history.jsonl, one line per fetch, in order,
with the page's score at fetch time. Evaluation reads this file."""

from __future__ import annotations

import json
from typing import IO, TYPE_CHECKING, Any

from crawlproject.items import CONTENT_FIELDS, RAW_FIELDS
from crawlproject.pipelines.files import OutputFilePipeline

if TYPE_CHECKING:
    from crawlproject.items import PageItem


class CrawlHistoryPipeline(OutputFilePipeline):
    file_name = "history.jsonl"

    def write(self, item: PageItem, file: IO[Any]) -> None:
        record = {k: v for k, v in item.items() if k not in RAW_FIELDS and k not in CONTENT_FIELDS}
        file.write(json.dumps(record, ensure_ascii=False) + "\n")
