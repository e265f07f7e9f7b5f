"""The link graph (docs/methods.md §1): links.tsv, ``source<TAB>target<TAB>anchor`` per
outlink of every fetched page (both canonical keys; targets fetched or not)."""

from __future__ import annotations

from typing import IO, TYPE_CHECKING, Any

from crawlproject.pipelines.files import OutputFilePipeline

if TYPE_CHECKING:
    from crawlproject.items import PageItem


def _clean(text: str) -> str:
    return " ".join(text.split())


class LinkGraphPipeline(OutputFilePipeline):
    file_name = "links.tsv"

    def write(self, item: PageItem, file: IO[Any]) -> None:
        source = item["canonical_url"]
        file.writelines(
            f"{source}\t{target}\t{_clean(anchor)}\n" for target, anchor in item.get("outlinks") or ()
        )
