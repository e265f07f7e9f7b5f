"""Aliases of the ``focus`` spider for the strategies that look ahead (docs/methods.md §2;
docs/strategies.md):

    scrapy train --kind context-graph --labels L --warc W --good course -o cg.npz
    scrapy crawl contextgraph -a model=cg.npz -a seeds=seeds.txt

    scrapy train --kind link-value --labels L --warc W --good course -o lv.npz
    scrapy crawl linkvalue -a model=lv.npz -a seeds=seeds.txt

    scrapy crawl infospiders -a query="course syllabus homework" -a seeds=seeds.txt
"""

from __future__ import annotations

from crawlproject.spiders.base import FocusedSpider


class ContextGraphSpider(FocusedSpider):
    """Diligenti et al.'s context-focused crawler: a queue per layer."""

    name = "contextgraph"
    strategy_class = "context-graph"


class LinkValueSpider(FocusedSpider):
    """Rennie & McCallum's learned link value, learning on while it crawls."""

    name = "linkvalue"
    strategy_class = "link-value"


class InfoSpidersSpider(FocusedSpider):
    """Menczer's InfoSpiders: a population of learning agents."""

    name = "infospiders"
    strategy_class = "infospiders"
