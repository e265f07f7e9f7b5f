"""The one factory of a crawl's scoring (docs/architecture.md, "Three
ports"): the link scorer ``FOCUS_STRATEGY`` (or the spider) names, its
frontier port, and the page judge ``FOCUS_JUDGE`` names — any judge with any
strategy — built from settings, and held together as a :class:`Focus`.

    focus = build_focus(crawler, Topic(query="jazz"), default=BestFirstStrategy)
    relevance = focus.arrive(page)
    scores = focus.strategy.score_links(page, relevance)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from crawlproject import config
from crawlproject.strategies import strategy_class
from crawlproject.strategies.base import BuildContext
from crawlproject.strategies.ports import CrawlerFrontier

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

    from crawlproject.judges.base import PageJudge
    from crawlproject.strategies.base import CrawlStrategy, Topic
    from crawlproject.web.page import Page


@dataclass
class Focus:
    """A crawl's scoring: its judge (a fetched page → a verdict; None: the
    crawl judges nothing, as breadth-first without a topic) and its link
    scorer (the strategy: a page's links → scores, given the verdict)."""

    judge: PageJudge | None
    strategy: CrawlStrategy

    def arrive(self, page: Page) -> float | None:
        """A fetched page: the judge's verdict, which the strategy learns
        from (its learning hook) before it scores the page's links."""
        relevance = self.judge.relevance(page) if self.judge is not None else None
        self.strategy.page_arrived(page, relevance)
        return relevance

    def relevant(self, relevance: float | None) -> bool | None:
        """Whether the judge calls a page of this verdict relevant (None: no verdict)."""
        return self.judge.calls(relevance) if self.judge is not None and relevance is not None else None


def build_focus(
    crawler: Crawler, topic: Topic, default: type[CrawlStrategy] | str | None = None, named: str | None = None,
) -> Focus:
    """The judge and link scorer of this crawl: the strategy *named* (a
    spider's ``-a strategy=``) when given, else ``FOCUS_STRATEGY`` when set,
    else *default* (a class or a strategy name: the spider's), else
    breadth-first; the judge by ``FOCUS_JUDGE`` (crawlproject.judges)."""
    settings = crawler.settings
    chosen = strategy_class(named or "") or strategy_class(config.get_str(settings, "FOCUS_STRATEGY"))
    if chosen is None:
        chosen = strategy_class(default) if isinstance(default, str) else default
    if chosen is None:
        chosen = strategy_class("breadth-first")
    strategy: CrawlStrategy = chosen.from_settings(BuildContext(
        settings, topic, CrawlerFrontier(crawler),
        seeds=lambda: getattr(crawler.spider, "seed_urls", None) if crawler.spider is not None else None,
        scope=lambda: getattr(crawler.spider, "crawl_scope", None),
    ))
    _share_experience(crawler, strategy)
    return Focus(judge_for(settings, topic, strategy), strategy)


def judge_for(settings: BaseSettings, topic: Topic, strategy: CrawlStrategy) -> PageJudge | None:
    """The judge of a crawl with *strategy* (see crawlproject.judges)."""
    from crawlproject.judges import judge_from_settings
    from crawlproject.web.text import TermAnalyzer

    analyzer = TermAnalyzer(stem=config.get_bool(settings, "FOCUS_STEMMING"))
    return judge_from_settings(
        settings, topic.query, topic.model, topic.good, analyzer, f"the {strategy.name} crawler",
        own=strategy.own_judge(), required=strategy.needs_judge,
    )


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
