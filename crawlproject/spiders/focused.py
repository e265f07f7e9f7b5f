"""Alias of the ``focus`` spider whose strategy is the focused crawler
(docs/methods.md §2, Chakrabarti et al.): a taxonomy classifier decides which links to
follow first.

    scrapy train --labels labels.tsv --warc pages.warc.gz -o model.npz
    scrapy crawl focused -a model=model.npz -a good=course -a seeds=seeds.txt \\
        -s FOCUS_FOCUSED_MODE=hard -s FOCUS_DISTILL_EVERY=100

Pages are classified in micro-batches (crawlproject.spiders.batching, set up
by every spider whose strategy classifies in batches): a callback awaits its
page's verdict while the downloader keeps fetching.
"""

from __future__ import annotations

from crawlproject.spiders.base import FocusedSpider


class FocusedCrawlerSpider(FocusedSpider):
    name = "focused"
    strategy_class = "focused"
