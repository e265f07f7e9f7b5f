"""Breadth-first: the blind baseline (docs/methods.md §2). Every link scores the same,
so the frontier serves them first-in first-out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawlproject.strategies.base import CrawlStrategy

if TYPE_CHECKING:
    from collections.abc import Sequence

    from crawlproject.web.page import Page


class BreadthFirstStrategy(CrawlStrategy):
    name = "breadth-first"
    blind = True
    explores = False

    def score_links(self, page: Page, relevance: float | None) -> Sequence[float]:
        return [0.0] * len(page.links)
