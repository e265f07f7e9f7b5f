from __future__ import annotations

from crawlproject.spiders.base import FocusedSpider
from crawlproject.strategies.best_first import BestFirstStrategy


class BestFirstSpider(FocusedSpider):
    """Naive best-first: links scored by the cosine of query and parent page (SPEC §2)."""

    name = "bestfirst"
    strategy_class = BestFirstStrategy
