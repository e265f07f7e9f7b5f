"""Judges of the models a strategy is trained with (docs/architecture.md,
"Three ports"): what the context graph, the link-value model and the
labels' oracles say of a page, as page judges. A strategy built on such a
model offers its judge (``CrawlStrategy.own_judge``); ``FOCUS_JUDGE=auto``
takes it, any other FOCUS_JUDGE puts the query's in its place, and the
strategy scores links the same way either way.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, ClassVar

from crawlproject.judges.base import PageJudge
from crawlproject.models.layer_classifier import Placement

if TYPE_CHECKING:
    from collections.abc import Set

    from crawlproject.models.layer_classifier import ContextGraphModel
    from crawlproject.models.link_value_model import LinkValueModel
    from crawlproject.policy.scope import HomeSites
    from crawlproject.web.page import Page
    from crawlproject.web.text import TermAnalyzer


class ContextGraphJudge(PageJudge):
    """Pr(layer 0 | page) of a context graph (Diligenti et al. 2000): how
    much the page looks like the targets; 0 away from a site-bound topic's home."""

    name: ClassVar[str] = "context-graph"

    #: placements kept for pages whose links are not scored yet
    KEPT = 10_000

    def __init__(self, model: ContextGraphModel, home: HomeSites | None = None):
        super().__init__()
        self.model = model
        #: a site-bound topic's home (the crawl's, bound by the context-graph crawler); None: no home
        self.home = home
        self._placed: OrderedDict[str, Placement] = OrderedDict()

    def placement(self, page: Page) -> Placement:
        """The page's layer, placed once whoever asks first (this judge, or
        the context-graph strategy for the page's links) and kept until its
        links are scored; "other" away from a site-bound topic's home."""
        placed = self._placed.get(page.key)
        if placed is None:
            if self.home is not None and self.home.away(page.key):
                placed = Placement(self.model.other, 0.0, 0.0)
            else:
                placed = self.model.place([page.text])[0]
            self._placed[page.key] = placed
            if len(self._placed) > self.KEPT:
                self._placed.popitem(last=False)
        return placed

    def score(self, page: Page) -> float:
        return self.placement(page).target


class LinkValueJudge(PageJudge):
    """Pr(target | page) of a link-value model's page classifier (Rennie &
    McCallum 1999): the reward its links learn."""

    name: ClassVar[str] = "link-value"

    def __init__(self, model: LinkValueModel, analyzer: TermAnalyzer):
        super().__init__()
        self.model, self.analyzer = model, analyzer

    def score(self, page: Page) -> float:
        if self.analyzer.stem:  # the terms the model's classifier reads: analysed once for the page
            return self.model.terms_probability(page.vector(self.analyzer))
        return self.model.page_probability(page.text)


class OracleJudge(PageJudge):
    """The labels themselves (docs/methods.md §3's oracles): 1 for a page labelled
    relevant, else 0. A ceiling to measure other judges against."""

    name: ClassVar[str] = "oracle"

    def __init__(self, relevant_urls: Set[str]):
        super().__init__()
        self.relevant_urls = relevant_urls

    def score(self, page: Page) -> float:
        return 1.0 if page.key in self.relevant_urls else 0.0
