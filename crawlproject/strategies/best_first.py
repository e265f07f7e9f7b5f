"""Naive best-first (SPEC §2): every link of page p scores sim(q, p), the
cosine between the TF vectors of the topic query q and of p."""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawlproject.config import SettingsError
from crawlproject.strategies.base import CrawlStrategy
from crawlproject.text import cosine

if TYPE_CHECKING:
    from collections.abc import Sequence

    from crawlproject.page import Page
    from crawlproject.strategies.base import Topic
    from crawlproject.text import TermAnalyzer


class BestFirstStrategy(CrawlStrategy):
    name = "best-first"

    def __init__(self, topic: Topic, analyzer: TermAnalyzer):
        super().__init__(topic, analyzer)
        self.query_vector = analyzer.vector(topic.query)
        if not self.query_vector:
            raise SettingsError(
                f"best-first needs a topic query with at least one non-stopword "
                f"term; got query={topic.query!r} (pass -a query=\"…\")"
            )

    def page_relevance(self, page: Page) -> float:
        return cosine(self.query_vector, page.vector(self.analyzer))

    def score_links(self, page: Page, relevance: float | None) -> Sequence[float | None]:
        score = relevance if relevance is not None else self.page_relevance(page)
        return [score] * len(page.links)
