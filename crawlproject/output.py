"""Where a crawl writes what it leaves behind (``FOCUS_OUTPUT_DIR``)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from crawlproject import config

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.settings import BaseSettings

_ATTRIBUTE = "focus_output_dir"


def output_dir(spider: Spider, settings: BaseSettings) -> Path:
    """The crawl's output folder, created on first use.

    ``FOCUS_OUTPUT_DIR`` may use ``%(name)s`` (the spider) and ``%(time)s``
    (the crawl's start, UTC). The result is kept on the spider so every
    pipeline and extension of one crawl agrees on it.
    """
    existing = getattr(spider, _ATTRIBUTE, None)
    if existing is not None:
        return Path(existing)
    template = config.get_str(settings, "FOCUS_OUTPUT_DIR")
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H-%M-%S")
    path = Path(template % {"name": spider.name, "time": stamp})
    path.mkdir(parents=True, exist_ok=True)
    setattr(spider, _ATTRIBUTE, str(path))
    return path
