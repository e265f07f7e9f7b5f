"""Alias of the ``focus`` spider whose strategy is breadth-first (docs/methods.md §2)."""

from __future__ import annotations

from crawlproject.spiders.base import FocusedSpider


class BreadthFirstSpider(FocusedSpider):
    """Blind breadth-first crawl from the seeds: the baseline (docs/methods.md §2)."""

    name = "breadthfirst"
    strategy_class = "breadth-first"
    custom_settings = {"FOCUS_FRONTIER_ORDER": "fifo"}  # noqa: RUF012
