from __future__ import annotations

from crawlproject.spiders.base import FocusedSpider
from crawlproject.strategies.breadth_first import BreadthFirstStrategy


class BreadthFirstSpider(FocusedSpider):
    """Blind breadth-first crawl from the seeds: the baseline (SPEC §2)."""

    name = "breadthfirst"
    strategy_class = BreadthFirstStrategy
    custom_settings = {"FOCUS_FRONTIER_ORDER": "fifo"}  # noqa: RUF012
