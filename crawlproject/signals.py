"""Signals of crawlproject (in addition to Scrapy's)."""

#: A strategy asks the frontier to re-score every queued URL. Arguments:
#: ``scorer(url: str, score: float) -> float``.
frontier_rescore = object()
