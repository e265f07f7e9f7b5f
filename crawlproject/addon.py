"""The focused crawler as a Scrapy add-on: one line in any project's settings

    ADDONS = {"crawlproject.addon.FocusedCrawlAddon": 0}

installs the frontier scheduler, our middlewares, pipelines and extensions
*into* the project's own dicts (a project's ``EXTENSIONS`` or a crawl's
``-s EXTENSIONS=…`` no longer drops ours), every ``FOCUS_*`` default at
add-on priority (``scrapy settings --get FOCUS_FRONTIER_MAX`` shows it) and
the process-level DNS resolver of the network-safety policy. It then checks
every setting once, so that a misspelled ``FOCUS_*`` name or an
out-of-range value stops the crawl with one line.

A project's own values win over the add-on's (``project`` priority is above
``addon``), component by component: disable one of ours with ``None`` in
the project's dict, as for any Scrapy component.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.utils.misc import load_object

from crawlproject import config, config_check

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings, Settings

#: Components installed into Scrapy's component priority dicts (None: a
#: Scrapy component ours replaces).
COMPONENTS: dict[str, dict[str, int | None]] = {
    "SPIDER_MIDDLEWARES": {
        "crawlproject.middlewares.canonicalize.CanonicalizeMiddleware": 700,
    },
    "DOWNLOADER_MIDDLEWARES": {
        # First: no request leaves for a private network or a refused scheme.
        "crawlproject.middlewares.netsafety.NetworkSafetyMiddleware": 40,
        # Ours extends Scrapy's (RFC 9309 errors, expiry, Crawl-delay as a floor).
        "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
        "crawlproject.middlewares.robotstxt.RobotsTxtMiddleware": 100,
        "crawlproject.middlewares.replay.ReplayProxyMiddleware": 740,
        "crawlproject.middlewares.render.RenderMiddleware": 750,  # only with FOCUS_RENDER: after the proxy is set
        "crawlproject.middlewares.pagesize.PageSizeMiddleware": 800,
    },
    "ITEM_PIPELINES": {
        "crawlproject.pipelines.collection.CollectionPipeline": 50,  # only with FOCUS_COLLECTION: text first
        "crawlproject.pipelines.history.CrawlHistoryPipeline": 100,
        "crawlproject.pipelines.linkgraph.LinkGraphPipeline": 200,
        "crawlproject.pipelines.repository.PageRepositoryPipeline": 300,
        "crawlproject.pipelines.warc.WarcWriterPipeline": 400,
        "crawlproject.pipelines.index.SearchIndexPipeline": 500,  # only with FOCUS_INDEX_DIR
        "crawlproject.pipelines.raw.StripRawContentPipeline": 1000,
    },
    "EXTENSIONS": {
        # Our progress line (pages, harvest, frontier) replaces Scrapy's LogStats.
        "scrapy.extensions.logstats.LogStats": None,
        "crawlproject.extensions.progress.CrawlProgress": 500,
        # The live dashboard, metrics and labels (only with FOCUS_DASHBOARD_PORT).
        "crawlproject.extensions.dashboard.CrawlDashboard": 600,
        # Scrapy's limits, with the crawl's page budget in place of its page count (robots.txt is not a page).
        "scrapy.extensions.closespider.CloseSpider": None,
        "crawlproject.frontier.budget.CloseSpider": 0,
    },
}

#: Scrapy's HTTP handler, which waits for a host's turn shared by all the
#: workers of a distributed crawl when FOCUS_SHARED_POLITENESS is on.
DOWNLOAD_HANDLER = "crawlproject.distributed.politeness.PoliteDownloadHandler"

#: Scrapy settings a focused crawl needs, at add-on priority (a project's win).
SCRAPY_SETTINGS: dict[str, Any] = {
    # The frontier owns the order (global best-first by float score).
    "SCHEDULER": "crawlproject.frontier.scheduler.FrontierScheduler",
    # Requests are told apart by their canonical URL (docs/methods.md §1), method and
    # body, and the frontier filters repeats; a project may swap either.
    "REQUEST_FINGERPRINTER_CLASS": "crawlproject.frontier.dupefilter.CanonicalRequestFingerprinter",
    "DUPEFILTER_CLASS": "crawlproject.frontier.dupefilter.FrontierDupeFilter",
    "ROBOTSTXT_OBEY": True,
    # Scrapy's parser interface over Protego, reading Request-rate and Sitemap lines too.
    "ROBOTSTXT_PARSER": "crawlproject.middlewares.robotstxt.ProtegoRobotParser",
    # Fetching (docs/methods.md §1): 10 s timeouts, one retry, redirects followed.
    "DOWNLOAD_TIMEOUT": 10,
    "RETRY_TIMES": 1,
    "REDIRECT_MAX_TIMES": 5,
    # The spider-trap guard of docs/methods.md §1 (Scrapy's default is 2083).
    "URLLENGTH_LIMIT": 256,
    # Scrapy starts this many worker tasks for every response's output
    # (scrapy.utils.asyncio._parallel_asyncio), 100 by default: a page of
    # ours yields one item and a few requests, handled at once, and 100 tasks
    # per page took a tenth of a crawl's CPU. 16 leaves a project's
    # asynchronous pipeline room to overlap.
    "CONCURRENT_ITEMS": 16,
    # Two consoles that run code sent to them (docs/settings.md, "Safe by
    # default"): off unless a user turns one on.
    "TELNETCONSOLE_ENABLED": False,
    "REMOTE_CONTROL_ENABLED": False,
    "FEED_EXPORT_ENCODING": "utf-8",
}


class FocusedCrawlAddon:
    """Scrapy add-on: the focused crawler's components and defaults."""

    def __init__(self, crawler: Crawler | None = None):
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FocusedCrawlAddon:
        return cls(crawler)

    @classmethod
    def update_pre_crawler_settings(cls, settings: BaseSettings) -> None:
        """Process-level settings, read before any crawler exists: a name
        resolving to a private address fails like a DNS error."""
        settings.set("TWISTED_DNS_RESOLVER", "crawlproject.policy.netsafety.SafeResolver", "addon")

    def update_settings(self, settings: Settings) -> None:
        install(settings)
        check(settings)


def install(settings: BaseSettings) -> None:
    """Put our components and defaults into *settings* (a project's own
    values and components stay)."""
    for name, value in (*SCRAPY_SETTINGS.items(), *config.DEFAULTS.items()):
        settings.set(name, value, "addon")
    for name, components in COMPONENTS.items():
        for path, order in components.items():
            _setdefault_component(settings, name, path, order)
    handlers = settings.getdict("DOWNLOAD_HANDLERS")
    if not {"http", "https"} & set(handlers):
        handlers.update({"http": DOWNLOAD_HANDLER, "https": DOWNLOAD_HANDLER})
        settings.set("DOWNLOAD_HANDLERS", handlers, settings.getpriority("DOWNLOAD_HANDLERS") or 0)
    FocusedCrawlAddon.update_pre_crawler_settings(settings)
    if config.get_choice(settings, "FOCUS_RENDER") != "never" and not settings.getdict("PLAYWRIGHT_LAUNCH_OPTIONS"):
        # the system's chromium (no browser download); as root, chromium runs only without its sandbox
        settings.set("PLAYWRIGHT_LAUNCH_OPTIONS", {"executable_path": config.get_str(settings, "FOCUS_BROWSER"),
                                                   "headless": True, "args": ["--no-sandbox"]}, "addon")


def _setdefault_component(settings: BaseSettings, name: str, path: str, order: int | None) -> None:
    """Scrapy's ``setdefault_in_component_priority_dict``, keeping the import
    path as the key (``scrapy settings --get`` prints paths, not reprs)."""
    components = settings.getdict(name)
    wanted = load_object(path)
    if any(key == path or load_object(key) is wanted for key in components):
        return  # the project placed (or disabled) it itself
    components[path] = order
    settings.set(name, components, settings.getpriority(name) or 0)


def check(settings: BaseSettings) -> None:
    """Every setting in range and every FOCUS_* name known; the classes the
    settings name importable — one line each when not."""
    config_check.check_settings(settings)
    from crawlproject.strategies import strategy_class

    strategy_class(config.get_str(settings, "FOCUS_STRATEGY"))  # raises SettingsError if unusable
    config.load_class(settings, "FOCUS_FRONTIER_BACKEND")


def applied(settings: Settings) -> Settings:
    """A copy of *settings* with every enabled add-on's settings applied, as
    a crawler would have them (for commands that build no crawler)."""
    from scrapy.utils.conf import build_component_list

    result = settings.copy()
    for path in build_component_list(result["ADDONS"]):
        addon = load_object(path)
        if hasattr(addon, "update_pre_crawler_settings"):
            addon.update_pre_crawler_settings(result)
        if isinstance(addon, type) and addon is FocusedCrawlAddon:
            install(result)  # no crawler here: install without the start-up checks
        elif hasattr(addon, "update_settings"):
            try:
                instance = addon()
            except TypeError:  # it wants a crawler: its settings show in a crawl only
                continue
            instance.update_settings(result)
    return result
