"""Crawling strategies: how the links of a fetched page are scored (docs/methods.md §2).

A strategy is a thin adapter: it turns what a model (crawlproject.models)
or a formula says of a page into one score per link. ``FOCUS_STRATEGY``
takes a name of :data:`STRATEGIES` or the import path of any
:class:`~crawlproject.strategies.base.CrawlStrategy`.
"""

from __future__ import annotations

from typing import Any

#: Strategy names (as reports and ``FOCUS_STRATEGY`` say them) → classes.
STRATEGIES = {
    "breadth-first": "crawlproject.strategies.breadth_first.BreadthFirstStrategy",
    "best-first": "crawlproject.strategies.best_first.BestFirstStrategy",
    "shark-search": "crawlproject.strategies.shark_search.SharkSearchStrategy",
    "fish-search": "crawlproject.strategies.shark_search.FishSearchStrategy",
    "focused": "crawlproject.strategies.chakrabarti.ChakrabartiStrategy",
    "context-graph": "crawlproject.strategies.context_graph.ContextGraphStrategy",
    "link-value": "crawlproject.strategies.link_value.LinkValueStrategy",
    "link-learner": "crawlproject.strategies.link_learner.LinkLearnerStrategy",
    "infospiders": "crawlproject.strategies.infospiders.InfoSpidersStrategy",
    "random": "crawlproject.strategies.baselines.RandomStrategy",
    "oracle": "crawlproject.strategies.baselines.OneStepOracleStrategy",
    "path-oracle": "crawlproject.strategies.baselines.PathOracleStrategy",
}


def strategy_class(name: str) -> Any:
    """The strategy class a ``FOCUS_STRATEGY`` value names (``None`` when
    empty: the spider's own); one line when it names none.

    >>> strategy_class("shark-search").__name__
    'SharkSearchStrategy'
    >>> strategy_class("sharksearch")
    Traceback (most recent call last):
    ...
    crawlproject.config.SettingsError: FOCUS_STRATEGY='sharksearch' names no strategy: did you mean 'shark-search'? Give a strategy name (best-first, breadth-first, context-graph, fish-search, focused, infospiders, link-learner, link-value, oracle, path-oracle, random, shark-search) or the import path of a CrawlStrategy class
    """  # noqa: E501 (a doctest's output line)
    from crawlproject import config
    from crawlproject.strategies.base import CrawlStrategy

    if not name:
        return None
    return config.named_class("FOCUS_STRATEGY", name, STRATEGIES, CrawlStrategy, "strategy")
