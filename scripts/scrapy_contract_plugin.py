"""pytest plugin (``-p scripts.scrapy_contract_plugin``): Scrapy's own tests
with the frontier scheduler in place of Scrapy's, everywhere — as the
default ``SCHEDULER`` and under the name ``scrapy.core.scheduler.Scheduler``
that Scrapy's scheduler tests build directly."""

import scrapy.core.scheduler
import scrapy.settings.default_settings

from crawlproject.frontier.scheduler import FrontierScheduler

scrapy.settings.default_settings.SCHEDULER = "crawlproject.frontier.scheduler.FrontierScheduler"
scrapy.core.scheduler.Scheduler = FrontierScheduler  # type: ignore[misc]
