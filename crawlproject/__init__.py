"""crawlproject: a focused crawler on Scrapy. From Python, ``crawlproject.crawl(…)``
(crawlproject.api); from a shell, ``scrapy crawl focus …`` (README)."""

from __future__ import annotations

from typing import Any

__all__ = ["Collection", "CrawlError", "crawl"]


def __getattr__(name: str) -> Any:
    # Imported on first use: `import crawlproject` (every spider, Scrapyd's egg) stays light.
    if name in __all__:
        from crawlproject import api

        return getattr(api, name)
    raise AttributeError(f"module 'crawlproject' has no attribute {name!r}")
