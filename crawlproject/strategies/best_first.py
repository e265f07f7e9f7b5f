"""Naive best-first (docs/methods.md §2): every link of page p scores the relevance of
p — the crawl's judge's verdict: sim(q, p), the cosine of the topic query
and the page (crawlproject.judges.query), or a model's when the topic names
one (FOCUS_JUDGE)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from crawlproject.strategies.base import CrawlStrategy

if TYPE_CHECKING:
    from collections.abc import Sequence

    from crawlproject.web.page import Page


class BestFirstStrategy(CrawlStrategy):
    name = "best-first"
    needs_judge: ClassVar[bool] = True

    def score_links(self, page: Page, relevance: float | None) -> Sequence[float | None]:
        return [relevance or 0.0] * len(page.links)
