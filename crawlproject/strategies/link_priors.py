"""What a link is worth to the link learner before it learns anything (its
prior, crawlproject.strategies.link_learner): SharkSearch's score of the link
with the page's verdict as its relevance (docs/methods.md §2), or a link model
learnt across topics (FOCUS_LEARNER_PRIOR: the package's shipped one, or a
file of ``scrapy train --kind link-prior``)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from crawlproject.config import SettingsError
from crawlproject.models.link_prior import LinkPrior, PageSide, link_features, shipped_prior
from crawlproject.models.modelfile import ModelError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from crawlproject.models.shark_score import SharkParameters
    from crawlproject.strategies.base import Topic
    from crawlproject.web.page import Link, Page
    from crawlproject.web.text import TermAnalyzer

#: How much the prior adds to a learnt link score: it orders links the learner
#: scores alike (those it expects nothing of), and nothing else.
PRIOR_TIE = 1e-6
#: A link of a page with its anchor's and its context's terms.
Described = tuple["Link", list[str], list[str]]


def prior_from_setting(value: str) -> LinkPrior | None:
    """FOCUS_LEARNER_PRIOR: ``shark-search`` (None), ``shipped`` (the
    package's link model learnt across topics) or a model file's path."""
    if value in ("", "shark-search"):
        return None
    try:
        return shipped_prior() if value == "shipped" else LinkPrior.load(value)
    except ModelError as exc:
        raise SettingsError(f"FOCUS_LEARNER_PRIOR: {exc}") from None


class LinkPriors:
    """The priors of a page's links: SharkSearch's score, or *model*'s."""

    def __init__(
        self, topic: Topic, analyzer: TermAnalyzer, shark: SharkParameters, context_words: int,
        model: LinkPrior | None = None,
    ):
        self.analyzer, self.shark, self.context_words = analyzer, shark, context_words
        # SharkSearch's anchor and context terms, when there is a query: a
        # classifier topic without one has no neighbourhood, only inheritance.
        self.query_vector = analyzer.vector(topic.query)
        #: the link model learnt across topics (FOCUS_LEARNER_PRIOR); None: SharkSearch's score
        self.model = model

    def terms(self, page: Page) -> list[Described]:
        """Each link of *page* with the terms of its anchor and of its context."""
        described = []
        for link in page.links:
            context = page.link_context(link, self.context_words)
            described.append((link, self.analyzer.terms(context.anchor), self.analyzer.terms(context.context)))
        return described

    def of(self, page: Page, sim: float, described: Sequence[Described]) -> list[float]:
        """The prior of each link (*described*: :meth:`terms`) of *page*, whose verdict is *sim*."""
        inherited, depth = self.shark.inherit(sim, page.meta)
        if self.model is not None:
            side = PageSide(page.url, sim, inherited, depth, page.depth + 1)
            rows = link_features(self.query_vector, self.analyzer, side,
                                 [(link.key, Counter(a), Counter(c)) for link, a, c in described], self.shark)
            priors: list[float] = self.model.predict(rows).tolist()
            return priors
        # SharkSearch's score; 0 past its depth budget (queued last, followed when learning raises it)
        return [
            self.shark.score(inherited, self.shark.query_neighborhood(self.query_vector, Counter(a), Counter(c)))
            if depth > 0 else 0.0
            for _, a, c in described
        ]
