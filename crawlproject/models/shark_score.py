"""SharkSearch's link score (docs/methods.md §2), one formula for the SharkSearch and
Fish-Search strategies, the link learner's prior and the link model's
features (models.link_prior):

    score(url)        = γ·inherited(url) + (1−γ)·neighborhood(url)   (0 once the depth budget is spent)
    inherited(url)    = δ·sim(q,p) if sim(q,p) > 0, else δ·inherited(p)
    neighborhood(url) = β·anchor(url) + (1−β)·context(url)
    context(url)      = 1 if anchor(url) > 0, else sim(q, the words around the link)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from crawlproject.config import DEFAULTS
from crawlproject.web import meta as keys
from crawlproject.web.text import cosine


@dataclass(frozen=True)
class SharkParameters:
    """SharkSearch's γ, δ, β and depth budget (FOCUS_SHARK_*)."""

    gamma: float = DEFAULTS["FOCUS_SHARK_GAMMA"]
    delta: float = DEFAULTS["FOCUS_SHARK_DELTA"]
    beta: float = DEFAULTS["FOCUS_SHARK_BETA"]
    depth: int = DEFAULTS["FOCUS_SHARK_DEPTH"]

    def inheritance(self, relevance: float, parent_inherited: float, parent_budget: int) -> tuple[float, int]:
        """inherited(url) and the depth budget of the links of a page of
        *relevance*, whose own link carried *parent_inherited* and *parent_budget*.

        >>> SharkParameters(delta=0.5, depth=3).inheritance(0.4, 0.9, 1)
        (0.2, 3)
        >>> SharkParameters(delta=0.5, depth=3).inheritance(0.0, 0.2, 3)
        (0.1, 2)
        """
        if relevance > 0:
            return self.delta * relevance, self.depth
        return self.delta * parent_inherited, parent_budget - 1

    def inherit(self, relevance: float, meta: Mapping[str, Any]) -> tuple[float, int]:
        """:meth:`inheritance` of a fetched page of *relevance*, its own
        link's inherited(url) and budget read from its request *meta*."""
        return self.inheritance(
            relevance, float(meta.get(keys.INHERITED, 0.0)), int(meta.get(keys.DEPTH_BUDGET, self.depth))
        )

    def child_meta(self, relevance: float, meta: Mapping[str, Any]) -> dict[str, Any]:
        """What every link of such a page carries to its own page: its
        inherited(url) and depth budget."""
        inherited, depth = self.inherit(relevance, meta)
        return {keys.INHERITED: inherited, keys.DEPTH_BUDGET: depth}

    def query_neighborhood(
        self, query: Mapping[str, float], anchor: Mapping[str, float], context: Mapping[str, float],
    ) -> float:
        """neighborhood(url) from the query's and the link's anchor and
        context term vectors (0 without a query: a model's topic)."""
        if not query:
            return 0.0
        return self.neighborhood(cosine(query, anchor), partial(cosine, query, context))

    def neighborhood(self, anchor_sim: float, context_sim: Callable[[], float]) -> float:
        """β·anchor(url) + (1−β)·context(url); *context_sim* is asked only
        when the anchor says nothing of the topic."""
        around = 1.0 if anchor_sim > 0 else context_sim()
        return self.beta * anchor_sim + (1 - self.beta) * around

    def score(self, inherited: float, neighborhood: float) -> float:
        """γ·inherited(url) + (1−γ)·neighborhood(url)."""
        return self.gamma * inherited + (1 - self.gamma) * neighborhood
