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
# Our robots.txt middleware extends Scrapy's (RFC 9309 errors, expiry,
# Crawl-delay and Request-rate as a floor); ROBOTSTXT_OBEY switches it.
ROBOTSTXT_OBEY = True

# The frontier owns the order (global best-first by float score).
SCHEDULER = "crawlproject.frontier.scheduler.FrontierScheduler"

SPIDER_MIDDLEWARES = {
    "crawlproject.middlewares.canonicalize.CanonicalizeMiddleware": 700,
}
DOWNLOADER_MIDDLEWARES = {
    # First: no request leaves for a private network or a refused scheme.
    "crawlproject.netsafety.NetworkSafetyMiddleware": 40,
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    "crawlproject.middlewares.robotstxt.RobotsTxtMiddleware": 100,
    "crawlproject.middlewares.replay.ReplayProxyMiddleware": 740,
    "crawlproject.middlewares.pagesize.PageSizeMiddleware": 800,
}
ITEM_PIPELINES = {
    "crawlproject.pipelines.history.CrawlHistoryPipeline": 100,
    "crawlproject.pipelines.linkgraph.LinkGraphPipeline": 200,
    "crawlproject.pipelines.repository.PageRepositoryPipeline": 300,
    "crawlproject.pipelines.warc.WarcWriterPipeline": 400,
    "crawlproject.pipelines.index.SearchIndexPipeline": 500,  # only with FOCUS_INDEX_DIR
    "crawlproject.pipelines.raw.StripRawContentPipeline": 1000,
}
EXTENSIONS = {
    # Our progress line (pages, harvest, frontier) replaces Scrapy's LogStats.
    "scrapy.extensions.logstats.LogStats": None,
    "crawlproject.extensions.progress.CrawlProgress": 500,
    # CLOSESPIDER_PAGECOUNT counts pages, not our robots.txt fetches.
    "scrapy.extensions.closespider.CloseSpider": None,
    "crawlproject.extensions.closespider.CloseSpider": 0,
    "crawlproject.extensions.closespider.OkPageBudget": 0,
}

# Scrapy's HTTP handler, which waits for a host's turn shared by all the
# workers of a distributed crawl when FOCUS_SHARED_POLITENESS is on.
DOWNLOAD_HANDLERS = {
    "http": "crawlproject.politeness.PoliteDownloadHandler",
    "https": "crawlproject.politeness.PoliteDownloadHandler",
}

# A name resolving to a private address fails like a DNS error (netsafety).
TWISTED_DNS_RESOLVER = "crawlproject.netsafety.SafeResolver"

# Fetching (SPEC §1): 10 s timeouts, every status reaches the spider (dead
# links are recorded, not hidden), pages of any size are read only up to
# FOCUS_MAX_PAGE_BYTES by our page-size middleware.
DOWNLOAD_TIMEOUT = 10
HTTPERROR_ALLOW_ALL = True
RETRY_TIMES = 1
REDIRECT_MAX_TIMES = 5
COOKIES_ENABLED = False
TELNETCONSOLE_ENABLED = False

# Polite to real sites, as Scrapy's project template: one request at a time
# per host, a second apart (robots.txt may ask for more; never less). A
# replay on loopback is no one's site: tests and benchmarks override these.
CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 1
DOWNLOAD_DELAY = 1.0
# The spider-trap guard of SPEC §1 (Scrapy's default is 2083).
URLLENGTH_LIMIT = 256

LOG_LEVEL = "INFO"
FEED_EXPORT_ENCODING = "utf-8"
