"""The online link learner (issue 28; docs/strategies.md): SharkSearch's
score as the prior, corrected by what the crawl learns from its own
verdicts — the query's, or a classifier's:

    scrapy crawl linklearner -a query="course syllabus homework" -a seeds=seeds.txt
    scrapy crawl linklearner -a model=model.npz -a good=course -a seeds=seeds.txt
"""

from __future__ import annotations

from typing import Any

from crawlproject.corpus.labels import parse_categories
from crawlproject.spiders.base import ModelSpider
from crawlproject.strategies.base import Topic
from crawlproject.strategies.link_learner import LinkLearnerStrategy


class LinkLearnerSpider(ModelSpider):
    name = "linklearner"
    strategy_class = LinkLearnerStrategy
    #: With a model: the good categories (``-a good=…``, or FOCUS_GOOD).
    good: tuple[str, ...] | str = ()

    def __init__(self, good: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        chosen = good or type(self).good
        self.good_categories = parse_categories(chosen) if isinstance(chosen, str) else tuple(chosen)

    def _topic(self) -> Topic:
        return Topic(query=self.query, model=self.model_path, good=self.good_categories)
