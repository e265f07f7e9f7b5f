"""The one spider of every strategy (docs/strategies.md):

    scrapy crawl focus -a strategy=shark-search -a query="course syllabus" -a seeds=seeds.txt
    scrapy crawl focus -a model=topic.npz -a seeds=seeds.txt            # the link learner, a model's judge
    scrapy crawl focus -s FOCUS_STRATEGY=focused -a model=taxonomy.npz -a good=course -a seeds=seeds.txt

The strategy is ``-a strategy=NAME`` (a name of crawlproject.strategies.STRATEGIES
or an import path), else ``FOCUS_STRATEGY``, else the link learner. The spiders
named after strategies (bestfirst, sharksearch, focused, …) are this spider
with another default: aliases, kept because projects and Scrapyd jobs name them.
"""

from __future__ import annotations

from crawlproject.spiders.base import FocusedSpider


class AnyStrategySpider(FocusedSpider):
    """Any strategy: ``-a strategy=…`` or FOCUS_STRATEGY (default: the link learner)."""

    name = "focus"
    strategy_class = "link-learner"
