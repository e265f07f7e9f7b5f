"""SharkSearch and its ancestor Fish-Search (SPEC §2).

Every link of page p (with query q) scores γ·inherited(url) +
(1−γ)·neighborhood(url) — the formula in crawlproject.models.shark_search,
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
from functools import partial
from typing import TYPE_CHECKING, Any

from crawlproject import config
from crawlproject.config import DEFAULTS
from crawlproject.judges.base import PageJudge
from crawlproject.models.shark_search import SharkParameters
from crawlproject.strategies.best_first import BestFirstStrategy
from crawlproject.web import meta as keys
from crawlproject.web.text import TermAnalyzer, cosine

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Self

    from crawlproject.strategies.base import BuildContext, Topic
    from crawlproject.strategies.ports import FrontierPort
    from crawlproject.web.page import Page


class SharkSearchStrategy(BestFirstStrategy):
    name = "shark-search"

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
        judge: PageJudge | None = None,
    ):
        super().__init__(topic, analyzer, frontier, judge)
        self.shark = SharkParameters(gamma, delta, beta, depth)
        self.context_words = context_words

    # γ, δ, β and the depth budget, as SharkSearch's papers name them
    gamma = property(lambda self: self.shark.gamma)
    delta = property(lambda self: self.shark.delta)
    beta = property(lambda self: self.shark.beta)
    depth = property(lambda self: self.shark.depth)

    @classmethod
    def from_settings(cls, context: BuildContext) -> Self:
        return cls(context.topic, context.analyzer(), **cls.parameters(context.settings),
                   frontier=context.frontier, judge=context.judge)

    @staticmethod
    def parameters(settings: Any) -> dict[str, Any]:
        """SharkSearch's four parameters and its context window, from settings."""
        return {
            "gamma": config.get_float(settings, "FOCUS_SHARK_GAMMA"),
            "delta": config.get_float(settings, "FOCUS_SHARK_DELTA"),
            "beta": config.get_float(settings, "FOCUS_SHARK_BETA"),
            "depth": config.get_int(settings, "FOCUS_SHARK_DEPTH"),
            "context_words": config.get_int(settings, "FOCUS_CONTEXT_WORDS"),
        }

    def child_state(self, page: Page, relevance: float | None) -> dict[str, Any]:
        inherited, depth = self._inheritance(page, relevance or 0.0)
        return {keys.INHERITED: inherited, keys.DEPTH_BUDGET: depth}

    def _inheritance(self, page: Page, sim: float) -> tuple[float, int]:
        """inherited(url) and the depth budget of every link of *page*."""
        return self.shark.inheritance(
            sim, float(page.meta.get(keys.INHERITED, 0.0)), int(page.meta.get(keys.DEPTH_BUDGET, self.depth))
        )

    def score_links(self, page: Page, relevance: float | None) -> Sequence[float | None]:
        sim = relevance if relevance is not None else self.page_relevance(page)
        inherited, depth = self._inheritance(page, sim)
        if depth <= 0:
            return [None] * len(page.links)  # the irrelevant path ends here
        return [self.shark.score(inherited, self._neighborhood(page, link)) for link in page.links]

    def _neighborhood(self, page: Page, link: Any) -> float:
        if self.gamma == 1.0:
            return 0.0
        context = page.link_context(link, self.context_words)
        return self.neighborhood(self.analyzer.vector(context.anchor), self.analyzer.vector(context.context))

    def neighborhood(self, anchor: Mapping[str, float], context: Mapping[str, float]) -> float:
        """β·anchor(url) + (1−β)·context(url) from the link's anchor and
        context term vectors (0 without a query)."""
        if not self.query_vector:
            return 0.0
        return self.shark.neighborhood(cosine(self.query_vector, anchor), partial(cosine, self.query_vector, context))


class AnyTermJudge(PageJudge):
    """Fish-Search's binary relevance: 1 if the page shares any term with
    the query, else 0."""

    name = "any-term"

    def __init__(self, query: Mapping[str, float], analyzer: TermAnalyzer):
        super().__init__()
        self.query, self.analyzer = query, analyzer

    def score(self, page: Page) -> float:
        terms = page.vector(self.analyzer)
        return 1.0 if any(term in terms for term in self.query) else 0.0


class FishSearchStrategy(SharkSearchStrategy):
    name = "fish-search"
    needs_judge = False  # its own: binary (AnyTermJudge)

    def __init__(self, topic: Topic, analyzer: TermAnalyzer, *args: Any, **kwargs: Any):
        super().__init__(topic, analyzer, *args, **kwargs)
        self.shark = replace(self.shark, gamma=1.0)  # no neighborhood: links inherit their page's worth only
        self.judge = AnyTermJudge(self.query_vector, analyzer)
