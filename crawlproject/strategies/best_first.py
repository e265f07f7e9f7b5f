"""Naive best-first (SPEC §2): every link of page p scores sim(q, p), the
cosine between the TF vectors of the topic query q and of p — or, with
``FOCUS_IDF_INDEX`` naming a search index, between their TF-IDF vectors with
the index's IDF (SPEC §4: the symbiosis paper's proposed improvement)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from crawlproject import config
from crawlproject.config import SettingsError
from crawlproject.strategies.base import CrawlStrategy
from crawlproject.web.text import TermAnalyzer, cosine

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Self

    from scrapy.crawler import Crawler

    from crawlproject.search.engine import IndexIdf
    from crawlproject.strategies.base import Topic
    from crawlproject.web.page import Page


class BestFirstStrategy(CrawlStrategy):
    name = "best-first"
    #: Whether the topic must be a query (a strategy with another source of
    #: page relevance, such as a classifier, can do without one).
    needs_query: ClassVar[bool] = True

    def __init__(self, topic: Topic, analyzer: TermAnalyzer, idf: IndexIdf | None = None):
        super().__init__(topic, analyzer)
        self.idf = idf
        self.query_vector: Mapping[str, float] = analyzer.vector(topic.query)
        if not self.query_vector and self.needs_query:
            raise SettingsError(
                f"best-first needs a topic query with at least one non-stopword "
                f"term; got query={topic.query!r} (pass -a query=\"…\")"
            )
        if idf is not None:
            self.query_vector = idf.weigh(self.query_vector)

    @classmethod
    def from_crawler(cls, crawler: Crawler, topic: Topic) -> Self:
        from crawlproject.search.engine import IndexIdf

        analyzer = TermAnalyzer(stem=config.get_bool(crawler.settings, "FOCUS_STEMMING"))
        folder = config.get_str(crawler.settings, "FOCUS_IDF_INDEX")
        return cls(topic, analyzer, IndexIdf(folder) if folder else None)

    def page_relevance(self, page: Page) -> float:
        vector = page.vector(self.analyzer)
        return cosine(self.query_vector, self.idf.weigh(vector) if self.idf is not None else vector)

    def score_links(self, page: Page, relevance: float | None) -> Sequence[float | None]:
        score = relevance if relevance is not None else self.page_relevance(page)
        return [score] * len(page.links)
