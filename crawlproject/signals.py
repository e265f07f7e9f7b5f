"""Signals of crawlproject (in addition to Scrapy's); what a strategy asks of
the frontier goes through its port (crawlproject.strategies.ports.CrawlerFrontier),
which holds the scheduler the crawl announced."""

#: robots.txt asks a host for at least *delay* seconds between two requests
#: (Crawl-delay, Request-rate). Arguments: ``host: str``, ``delay: float``.
#: The download handler holds requests to the host back accordingly.
host_delay_floor = object()

#: The judge called a fetched page (a 2xx) relevant or not. Arguments:
#: ``request: Request`` (the page's, after redirects), ``relevant: bool | None``
#: (None: the crawl has no judge), ``relevance: float | None`` (the judge's
#: relevance), ``links: list[str]`` (the page's links, canonical). The
#: scheduler's wait prices hosts by the call (crawlproject.frontier.host_harvest),
#: its exploration sites by the relevance (crawlproject.frontier.exploration);
#: the estimate of what is left counts the links (crawlproject.models.unseen).
page_judged = object()

#: The crawl's frontier scheduler opened (``scheduler``: the FrontierScheduler),
#: or closed: the frontier ports (crawlproject.strategies.ports.CrawlerFrontier)
#: hold it in between, as Scrapy hands a DownloaderInterface its downloader.
frontier_scheduler_opened = object()
frontier_scheduler_closed = object()
