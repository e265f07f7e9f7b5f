"""Aliases of the ``focus`` spider for the evaluation's floor and ceilings
(see strategies.baselines)."""

from __future__ import annotations

from crawlproject.spiders.base import FocusedSpider


class RandomSpider(FocusedSpider):
    """Links in random order: a floor."""

    name = "random"
    strategy_class = "random"


class OracleSpider(FocusedSpider):
    """One-step oracle: knows whether each link's target is relevant."""

    name = "oracle"
    strategy_class = "oracle"


class PathOracleSpider(FocusedSpider):
    """Path oracle: knows the corpus graph and the labels (an upper bound)."""

    name = "pathoracle"
    strategy_class = "path-oracle"
