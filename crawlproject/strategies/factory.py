"""The one factory of strategies: the class ``FOCUS_STRATEGY`` (or the
spider) names, its frontier port, its page judge, built from settings.

    strategy = build_strategy(crawler, Topic(query="jazz"), default=BestFirstStrategy)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawlproject import config
from crawlproject.strategies import strategy_class
from crawlproject.strategies.base import BuildContext, CrawlStrategy
from crawlproject.strategies.ports import CrawlerFrontier

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from crawlproject.strategies.base import Topic


def build_strategy(
    crawler: Crawler, topic: Topic, default: type[CrawlStrategy] | str | None = None, named: str | None = None,
) -> CrawlStrategy:
    """The strategy of this crawl: *named* (a spider's ``-a strategy=``)
    when given, else ``FOCUS_STRATEGY`` when set, else *default* (a class or
    a strategy name: the spider's), else breadth-first."""
    from crawlproject.judges import judge_from_settings

    settings = crawler.settings
    chosen = strategy_class(named or "") or strategy_class(config.get_str(settings, "FOCUS_STRATEGY"))
    if chosen is None:
        chosen = strategy_class(default) if isinstance(default, str) else default
    if chosen is None:
        chosen = strategy_class("breadth-first")
    frontier = CrawlerFrontier(crawler)
    judge = None
    if chosen.needs_judge:
        analyzer = BuildContext(settings, topic, frontier).analyzer()
        judge = judge_from_settings(settings, topic.query, topic.model, topic.good, analyzer, f"the {chosen.name} crawler")
    strategy: CrawlStrategy = chosen.from_settings(BuildContext(
        settings, topic, frontier, judge,
        seeds=lambda: getattr(crawler.spider, "seed_urls", None) if crawler.spider is not None else None,
        scope=lambda: getattr(crawler.spider, "crawl_scope", None),
    ))
    _share_experience(crawler, strategy)
    return strategy


def _share_experience(crawler: Crawler, strategy: CrawlStrategy) -> None:
    """With FOCUS_LEARNER_SHARED, the link learner (the strategy, or the one
    the focused crawler holds) learns every worker's verdicts through Redis."""
    from crawlproject.strategies.link_learner import LinkLearnerStrategy

    learner = strategy if isinstance(strategy, LinkLearnerStrategy) else getattr(strategy, "links", None)
    if not isinstance(learner, LinkLearnerStrategy) or not config.get_bool(crawler.settings, "FOCUS_LEARNER_SHARED"):
        return
    from scrapy import signals

    from crawlproject.distributed.experience import SharedExperience

    spider_name = str(getattr(crawler.spidercls, "name", "crawl"))
    learner.shared = SharedExperience.from_crawler(crawler, learner.learn_from_others, spider_name, learner.learn_forwarded)
    crawler.signals.connect(learner.shared.final_exchange, signals.spider_closed)
