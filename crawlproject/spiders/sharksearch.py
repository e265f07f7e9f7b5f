"""SharkSearch and Fish-Search spiders (SPEC §2)."""

from __future__ import annotations

from crawlproject.spiders.base import FocusedSpider
from crawlproject.strategies.shark_search import FishSearchStrategy, SharkSearchStrategy


class SharkSearchSpider(FocusedSpider):
    """Links scored by inherited relevance, anchor text and link context."""

    name = "sharksearch"
    strategy_class = SharkSearchStrategy


class FishSearchSpider(FocusedSpider):
    """Binary relevance, depth-bounded: SharkSearch's ancestor."""

    name = "fishsearch"
    strategy_class = FishSearchStrategy
