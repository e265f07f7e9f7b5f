"""Redis clients from Scrapy settings, as scrapy-redis builds them
(``REDIS_URL``, ``REDIS_PARAMS``…): the synchronous client for work off the
reactor, and an asyncio one for round trips a crawl awaits."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy_redis.connection import get_redis_from_settings

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings


def redis_from_settings(settings: BaseSettings) -> Any:
    """scrapy-redis's client: blocking calls, for threads and scripts."""
    return get_redis_from_settings(settings)


def async_redis_from_settings(settings: BaseSettings) -> tuple[Any, bool]:
    """A client whose calls a coroutine awaits without blocking the reactor,
    and whether it is asynchronous: ``redis.asyncio`` under Scrapy's asyncio
    reactor (the default), else the blocking client, to be called in a
    thread."""
    from scrapy.utils.asyncio import is_asyncio_available

    if not is_asyncio_available():
        return get_redis_from_settings(settings), False
    import redis.asyncio
    from scrapy_redis import defaults
    from scrapy_redis.connection import SETTINGS_PARAMS_MAP, get_redis

    # scrapy-redis's reading of the settings, with the asyncio client class
    params = defaults.REDIS_PARAMS.copy()
    params.update(settings.getdict("REDIS_PARAMS"))
    for source, dest in SETTINGS_PARAMS_MAP.items():
        value = settings.get(source)
        if value:
            params[dest] = value
    params["redis_cls"] = redis.asyncio.Redis
    return get_redis(**params), True
