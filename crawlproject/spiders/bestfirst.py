"""Alias of the ``focus`` spider whose strategy is naive best-first (docs/methods.md §2)."""

from __future__ import annotations

from crawlproject.spiders.base import FocusedSpider


class BestFirstSpider(FocusedSpider):
    """Naive best-first: links scored by the relevance of their page (docs/methods.md §2)."""

    name = "bestfirst"
    strategy_class = "best-first"
