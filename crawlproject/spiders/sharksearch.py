"""Aliases of the ``focus`` spider: SharkSearch and Fish-Search (docs/methods.md §2)."""

from __future__ import annotations

from crawlproject.spiders.base import FocusedSpider


class SharkSearchSpider(FocusedSpider):
    """Links scored by inherited relevance, anchor text and link context."""

    name = "sharksearch"
    strategy_class = "shark-search"


class FishSearchSpider(FocusedSpider):
    """Binary relevance, depth-bounded: SharkSearch's ancestor."""

    name = "fishsearch"
    strategy_class = "fish-search"
