"""SharkSearch and its ancestor Fish-Search (docs/methods.md §2).

Every link of page p (with query q) scores γ·inherited(url) +
(1−γ)·neighborhood(url) — the formula in crawlproject.models.shark_score,
shared with the link learner's prior and the link model learnt across
topics — and carries a depth budget: D below a relevant page, one less below
an irrelevant one; a link whose budget reaches 0 is not followed. The budget
and inherited(url) ride in the request meta, so a page knows its own when it
is fetched; a URL found again from a better page gets both raised with its
score.

Fish-Search is the same machinery with a binary relevance (a page is
relevant when it shares any term with the query) and no neighborhood (γ = 1).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from crawlproject import config
from crawlproject.config import DEFAULTS
from crawlproject.judges.query import AnyTermJudge
from crawlproject.models.shark_score import SharkParameters
from crawlproject.strategies.base import CrawlStrategy
from crawlproject.web.text import TermAnalyzer

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Self

    from crawlproject.judges.base import PageJudge
    from crawlproject.strategies.base import BuildContext, Topic
    from crawlproject.strategies.ports import FrontierPort
    from crawlproject.web.page import Page


class SharkSearchStrategy(CrawlStrategy):
    name = "shark-search"
    needs_judge = True

    def __init__(
        self,
        topic: Topic,
        analyzer: TermAnalyzer,
        gamma: float = DEFAULTS["FOCUS_SHARK_GAMMA"],
        delta: float = DEFAULTS["FOCUS_SHARK_DELTA"],
        beta: float = DEFAULTS["FOCUS_SHARK_BETA"],
        depth: int = DEFAULTS["FOCUS_SHARK_DEPTH"],
        context_words: int = DEFAULTS["FOCUS_CONTEXT_WORDS"],
        frontier: FrontierPort | None = None,
    ):
        super().__init__(topic, analyzer, frontier)
        #: the query's terms, which a link's anchor and context are compared with (none for a model's topic)
        self.query_vector = analyzer.vector(topic.query)
        self.shark = SharkParameters(gamma, delta, beta, depth)
        self.context_words = context_words

    # γ, δ, β and the depth budget, as SharkSearch's papers name them
    gamma = property(lambda self: self.shark.gamma)
    delta = property(lambda self: self.shark.delta)
    beta = property(lambda self: self.shark.beta)
    depth = property(lambda self: self.shark.depth)

    @classmethod
    def from_settings(cls, context: BuildContext) -> Self:
        return cls(context.topic, context.analyzer(), **shark_settings(context.settings), frontier=context.frontier)

    def child_state(self, page: Page, relevance: float | None) -> dict[str, Any]:
        return self.shark.child_meta(relevance or 0.0, page.meta)

    def score_links(self, page: Page, relevance: float | None) -> Sequence[float | None]:
        inherited, depth = self.shark.inherit(relevance or 0.0, page.meta)
        if depth <= 0:
            return [None] * len(page.links)  # the irrelevant path ends here
        return [self.shark.score(inherited, self._neighborhood(page, link)) for link in page.links]

    def _neighborhood(self, page: Page, link: Any) -> float:
        if self.gamma == 1.0:
            return 0.0
        context = page.link_context(link, self.context_words)
        return self.shark.query_neighborhood(
            self.query_vector, self.analyzer.vector(context.anchor), self.analyzer.vector(context.context)
        )


def shark_settings(settings: Any) -> dict[str, Any]:
    """SharkSearch's four parameters and its context window, from settings
    (the link learner's prior reads them too)."""
    return {
        "gamma": config.get_float(settings, "FOCUS_SHARK_GAMMA"),
        "delta": config.get_float(settings, "FOCUS_SHARK_DELTA"),
        "beta": config.get_float(settings, "FOCUS_SHARK_BETA"),
        "depth": config.get_int(settings, "FOCUS_SHARK_DEPTH"),
        "context_words": config.get_int(settings, "FOCUS_CONTEXT_WORDS"),
    }


class FishSearchStrategy(SharkSearchStrategy):
    """SharkSearch's machinery as its ancestor set it: no neighborhood, and
    (with FOCUS_JUDGE=auto) a binary judge."""

    name = "fish-search"

    def __init__(self, topic: Topic, analyzer: TermAnalyzer, *args: Any, **kwargs: Any):
        super().__init__(topic, analyzer, *args, **kwargs)
        self.shark = replace(self.shark, gamma=1.0)  # no neighborhood: links inherit their page's worth only

    def own_judge(self) -> PageJudge:
        return AnyTermJudge(self.query_vector, self.analyzer)
