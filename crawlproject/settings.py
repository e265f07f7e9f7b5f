"""Scrapy settings of the crawlproject project.

Our own ``FOCUS_*`` settings have their defaults in crawlproject.config and
are documented in docs/settings.md; this module wires our components into
Scrapy and sets the Scrapy settings a focused crawler needs.
"""

BOT_NAME = "crawlproject"
SPIDER_MODULES = ["crawlproject.spiders"]
NEWSPIDER_MODULE = "crawlproject.spiders"
COMMANDS_MODULE = "crawlproject.commands"

USER_AGENT = "crawlproject/0.1 (+focused crawler; research)"
ROBOTSTXT_USER_AGENT = "crawlproject"
# Our robots.txt middleware replaces Scrapy's (expiring cache, Crawl-delay).
ROBOTSTXT_OBEY = False

# The frontier owns the order (global best-first by float score).
SCHEDULER = "crawlproject.frontier.scheduler.FrontierScheduler"

SPIDER_MIDDLEWARES = {
    "crawlproject.middlewares.canonicalize.CanonicalizeMiddleware": 700,
}
DOWNLOADER_MIDDLEWARES = {
    "crawlproject.middlewares.robotstxt.RobotsTxtMiddleware": 100,
    "crawlproject.middlewares.replay.ReplayProxyMiddleware": 740,
    "crawlproject.middlewares.pagesize.PageSizeMiddleware": 800,
}
ITEM_PIPELINES = {
    "crawlproject.pipelines.history.CrawlHistoryPipeline": 100,
    "crawlproject.pipelines.linkgraph.LinkGraphPipeline": 200,
    "crawlproject.pipelines.repository.PageRepositoryPipeline": 300,
    "crawlproject.pipelines.warc.WarcWriterPipeline": 400,
    "crawlproject.pipelines.raw.StripRawContentPipeline": 1000,
}
EXTENSIONS = {
    "crawlproject.extensions.progress.CrawlProgress": 500,
    # CLOSESPIDER_PAGECOUNT counts pages, not our robots.txt fetches.
    "scrapy.extensions.closespider.CloseSpider": None,
    "crawlproject.extensions.closespider.CloseSpider": 0,
}

# Fetching (SPEC §1): 10 s timeouts, every status reaches the spider (dead
# links are recorded, not hidden), pages of any size are read only up to
# FOCUS_MAX_PAGE_BYTES by our page-size middleware.
DOWNLOAD_TIMEOUT = 10
HTTPERROR_ALLOW_ALL = True
RETRY_TIMES = 1
REDIRECT_MAX_TIMES = 5
COOKIES_ENABLED = False
TELNETCONSOLE_ENABLED = False

CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 8
DOWNLOAD_DELAY = 0

LOG_LEVEL = "INFO"
FEED_EXPORT_ENCODING = "utf-8"
