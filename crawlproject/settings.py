"""Scrapy settings of the crawlproject project.

The focused crawler itself is an add-on (crawlproject.addon): it installs
the frontier scheduler, our middlewares, pipelines and extensions and every
``FOCUS_*`` default (docs/settings.md). Any Scrapy project enables it with
the same ``ADDONS`` line; this module sets only what a project sets.
"""

BOT_NAME = "crawlproject"
SPIDER_MODULES = ["crawlproject.spiders"]
NEWSPIDER_MODULE = "crawlproject.spiders"

ADDONS = {"crawlproject.addon.FocusedCrawlAddon": 0}

USER_AGENT = "crawlproject/0.1 (+focused crawler; research)"
ROBOTSTXT_USER_AGENT = "crawlproject"
ROBOTSTXT_OBEY = True
COOKIES_ENABLED = False

# Polite to real sites, as Scrapy's project template: one request at a time
# per host, a second apart (robots.txt may ask for more; never less). A
# replay on loopback is no one's site: tests and benchmarks override these.
CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 1
DOWNLOAD_DELAY = 1.0

LOG_LEVEL = "INFO"
