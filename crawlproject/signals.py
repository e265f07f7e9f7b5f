"""Signals of crawlproject (in addition to Scrapy's)."""

#: A strategy asks the frontier to re-score every queued URL. Arguments:
#: ``scorer(url: str, score: float, meta: dict | None) -> float``, where
#: meta is the queued request's meta (read it, do not change it).
frontier_rescore = object()

#: The spider finished with a page: its links are all in the scheduler.
#: Arguments: ``url`` (the URL the frontier handed out for that page).
page_processed = object()
