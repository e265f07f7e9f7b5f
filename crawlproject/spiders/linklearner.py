"""Alias of the ``focus`` spider whose strategy is the online link learner
(issue 28; docs/strategies.md): SharkSearch's score as the prior, corrected
by what the crawl learns from its own verdicts — the query's, or a model's:

    scrapy crawl linklearner -a query="course syllabus homework" -a seeds=seeds.txt
    scrapy crawl linklearner -a model=model.npz -a good=course -a seeds=seeds.txt
"""

from __future__ import annotations

from crawlproject.spiders.base import FocusedSpider


class LinkLearnerSpider(FocusedSpider):
    name = "linklearner"
    strategy_class = "link-learner"
