"""The spiders named after strategies — ``bestfirst``, ``sharksearch``,
``focused``, … — generated from the strategy registry
(crawlproject.strategies.STRATEGIES): each is the ``focus`` spider
(crawlproject.spiders.any_strategy) with that strategy as its default, kept because
projects, Scrapyd jobs and the literature name them. A strategy added to the
registry has its spider here with no code to write.

Spider names are the strategy's without hyphens (``shark-search`` →
``sharksearch``), classes its words capitalised (``SharkSearchSpider``);
subclass one for a topic of your own::

    from crawlproject.spiders import BestFirstSpider

    class CornellCoursesSpider(BestFirstSpider):
        name = "cornell_courses"
        query = "course syllabus lecture homework"
        start_urls = ["http://www.cs.cornell.edu/"]
"""

from __future__ import annotations

from typing import Any

from crawlproject.spiders.base import FocusedSpider
from crawlproject.strategies import STRATEGIES

#: Class names that are not the strategy's words capitalised (``FocusedSpider``
#: is the base class of them all).
_CLASS_NAMES = {"focused": "FocusedCrawlerSpider", "infospiders": "InfoSpidersSpider"}
#: Settings a strategy's spider crawls with.
_SETTINGS: dict[str, dict[str, Any]] = {"breadth-first": {"FOCUS_FRONTIER_ORDER": "fifo"}}


def spider_name(strategy: str) -> str:
    """The spider's name: the strategy's without hyphens.

    >>> spider_name("shark-search")
    'sharksearch'
    """
    return strategy.replace("-", "")


def class_name(strategy: str) -> str:
    """The spider's class name: the strategy's words capitalised.

    >>> class_name("path-oracle")
    'PathOracleSpider'
    """
    return _CLASS_NAMES.get(strategy) or "".join(word.capitalize() for word in strategy.split("-")) + "Spider"


def _spider_class(strategy: str) -> type[FocusedSpider]:
    namespace: dict[str, Any] = {
        "__module__": __name__,
        "__doc__": f"The ``focus`` spider whose strategy is ``{strategy}`` (docs/strategies.md).",
        "name": spider_name(strategy),
        "strategy_class": strategy,
    }
    if strategy in _SETTINGS:
        namespace["custom_settings"] = dict(_SETTINGS[strategy])
    return type(class_name(strategy), (FocusedSpider,), namespace)


SPIDERS: dict[str, type[FocusedSpider]] = {strategy: _spider_class(strategy) for strategy in STRATEGIES}
globals().update({spider.__name__: spider for spider in SPIDERS.values()})
__all__ = sorted(spider.__name__ for spider in SPIDERS.values())
