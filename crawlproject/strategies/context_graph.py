"""The context-focused crawler (Diligenti et al. 2000; docs/methods.md §2).

A layer classifier (crawlproject.models.layer_classifier, trained by
``scrapy train --kind context-graph``) puts each fetched page in
layer i — "about i links before a target" — or "other"; the page's links
join queue i. The crawler always pops from the non-empty queue with the
smallest i. One best-first frontier serves all queues: a link of a layer-i
page scores −i + confidence (confidence in [0, 1), the page's posterior),
so every link of layer i outranks every link of layer i + 1, and within a
layer the pages placed with more confidence go first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawlproject.config import SettingsError
from crawlproject.judges.models import ContextGraphJudge
from crawlproject.models.layer_classifier import ContextGraphModel
from crawlproject.models.taxonomy_classifier import ModelError
from crawlproject.policy.scope import HomeSites
from crawlproject.strategies.base import CrawlStrategy, trained_model_path
from crawlproject.web.text import TermAnalyzer

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Self

    from crawlproject.judges.base import PageJudge
    from crawlproject.strategies.base import BuildContext, Topic
    from crawlproject.strategies.ports import FrontierPort
    from crawlproject.web.page import Page


class ContextGraphStrategy(CrawlStrategy):
    name = "context-graph"
    bound_by_home = True

    def __init__(
        self, topic: Topic, analyzer: TermAnalyzer, model: ContextGraphModel, frontier: FrontierPort | None = None,
    ):
        super().__init__(topic, analyzer, frontier)
        self.model = model
        #: places each page in its layer (its judge, whichever judge the crawl uses)
        self.placer = ContextGraphJudge(model)

    @classmethod
    def from_settings(cls, context: BuildContext) -> Self:
        path = trained_model_path(context.settings, context.topic, "context-graph", "context-graph")
        try:
            model = ContextGraphModel.load(path)
        except ModelError as exc:
            raise SettingsError(str(exc)) from None
        return cls(context.topic, TermAnalyzer(stem=True), model, context.frontier)

    def own_judge(self) -> PageJudge:
        """Pr(layer 0 | page): how much a page looks like the targets."""
        return self.placer

    def site_bound_model(self) -> ContextGraphModel:
        return self.model

    def bind_home(self, home: HomeSites) -> None:
        """A page away from home is placed in "other", whatever it says."""
        super().bind_home(home)
        self.placer.home = home

    def off_home_score(self) -> float:
        """A link off home is placed in "other" with no confidence: below every link at home."""
        return -float(self.model.other)

    def score_links(self, page: Page, relevance: float | None) -> Sequence[float]:
        placement = self.placer.placement(page)
        confidence = min(placement.confidence, 0.999999)  # stays below the next layer up
        return [-placement.layer + confidence] * len(page.links)
