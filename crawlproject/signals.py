"""Signals of crawlproject (in addition to Scrapy's): broadcasts only; what
a strategy asks of the frontier goes through its port
(crawlproject.strategies.ports.CrawlerFrontier), which holds the scheduler."""

#: robots.txt asks a host for at least *delay* seconds between two requests
#: (Crawl-delay, Request-rate). Arguments: ``host: str``, ``delay: float``.
#: The download handler holds requests to the host back accordingly.
host_delay_floor = object()

#: The judge called a fetched page (a 2xx) relevant or not. Arguments:
#: ``request: Request`` (the page's, after redirects), ``relevant: bool | None``
#: (None: the crawl has no judge). The scheduler's wait prices hosts by it
#: (crawlproject.frontier.host_harvest).
page_judged = object()
