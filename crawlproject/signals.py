"""Signals of crawlproject (in addition to Scrapy's)."""

#: A strategy asks the frontier to re-score every queued URL (sent only by
#: its frontier port, crawlproject.strategies.ports.CrawlerFrontier). Arguments:
#: ``scorer(url: str, score: float, meta: dict | None) -> float``, where
#: meta is the queued request's meta (read it, do not change it), and
#: optionally ``keys``: only these canonical URLs (those queued).
frontier_rescore = object()

#: robots.txt asks a host for at least *delay* seconds between two requests
#: (Crawl-delay, Request-rate). Arguments: ``host: str``, ``delay: float``.
#: The download handler holds requests to the host back accordingly.
host_delay_floor = object()

#: The dashboard asks for a random sample of the queued URLs' scores.
#: Argument: ``count: int``; the frontier scheduler answers with a list of floats.
frontier_sample = object()

#: The estimate of what is left asks for the scores of the URLs being
#: fetched now (found, not yet fetched, out of the queue). No arguments; the
#: frontier scheduler answers with a list of floats.
frontier_in_flight = object()
