"""Seeds from a Redis list, as scrapy-redis's ``RedisSpider`` reads its start
URLs: ``redis-cli LPUSH courses:start_urls http://…`` feeds every worker of
a distributed crawl, before or while it runs.

The key is the spider's ``redis_key`` attribute (``-a redis_key=…``), else
``FOCUS_REDIS_SEEDS_KEY`` (``%(name)s`` is the spider's name), e.g.
``%(name)s:start_urls`` as in scrapy-redis. A worker pops seeds when it
starts and whenever it goes idle; it closes when idle with the list empty.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crawlproject import config

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.settings import BaseSettings

_BATCH = 100


class RedisSeeds:
    def __init__(self, server: Any, key: str):
        self.server = server
        self.key = key

    @classmethod
    def for_spider(cls, spider: Spider, settings: BaseSettings) -> RedisSeeds | None:
        key = getattr(spider, "redis_key", "") or config.get_str(settings, "FOCUS_REDIS_SEEDS_KEY")
        if not key:
            return None
        from scrapy_redis.connection import get_redis_from_settings

        return cls(get_redis_from_settings(settings), key % {"name": spider.name})

    def pop(self) -> list[str]:
        """Up to a hundred seeds, taken off the list (each worker gets its own)."""
        popped = self.server.lpop(self.key, _BATCH) or []
        return [value.decode() if isinstance(value, bytes) else str(value) for value in popped]
