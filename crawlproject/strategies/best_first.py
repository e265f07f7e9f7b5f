"""Naive best-first (SPEC §2): every link of page p scores the relevance of
p — its judge's: sim(q, p), the cosine of the topic query and the page
(crawlproject.judges.query; with ``FOCUS_IDF_INDEX`` naming a search index,
weighted by the index's IDF, SPEC §4's proposed improvement), or a model's
verdict when the topic names one."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from crawlproject.judges.query import TfQueryJudge
from crawlproject.strategies.base import CrawlStrategy

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Self

    from crawlproject.judges.base import PageJudge
    from crawlproject.strategies.base import BuildContext, Topic
    from crawlproject.strategies.ports import FrontierPort
    from crawlproject.web.page import Page
    from crawlproject.web.text import TermAnalyzer


class BestFirstStrategy(CrawlStrategy):
    name = "best-first"
    needs_judge: ClassVar[bool] = True

    def __init__(
        self, topic: Topic, analyzer: TermAnalyzer, frontier: FrontierPort | None = None, judge: PageJudge | None = None,
    ):
        super().__init__(topic, analyzer, frontier)
        #: the query's terms (SharkSearch's anchor and context read them; empty for a model's topic)
        self.query_vector = analyzer.vector(topic.query)
        self.judge = judge if judge is not None else TfQueryJudge(self.query_vector, analyzer)

    @classmethod
    def from_settings(cls, context: BuildContext) -> Self:
        return cls(context.topic, context.analyzer(), context.frontier, context.judge)

    def page_relevance(self, page: Page) -> float:
        assert self.judge is not None
        return self.judge.relevance(page)

    def score_links(self, page: Page, relevance: float | None) -> Sequence[float | None]:
        score = relevance if relevance is not None else self.page_relevance(page)
        return [score] * len(page.links)
