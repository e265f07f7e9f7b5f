"""Redis clients from Scrapy settings, as scrapy-redis builds them
(``REDIS_URL``, ``REDIS_PARAMS``…): the synchronous client for work off the
reactor, and an asyncio one for round trips a crawl awaits."""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Any

from crawlproject import config
from crawlproject.config import SettingsError

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)


def redis_key(settings: BaseSettings, spider_name: str) -> str:
    """The prefix of every Redis key of a spider's shared crawl."""
    return config.get_str(settings, "FOCUS_REDIS_KEY") % {"spider": spider_name}


def redis_from_settings(settings: BaseSettings) -> Any:
    """scrapy-redis's client: blocking calls, for threads and scripts.
    (Imported here: every crawl loads this module through the politeness
    handler, and redis takes a tenth of a second to import.)"""
    from scrapy_redis.connection import get_redis_from_settings

    return get_redis_from_settings(settings)


def async_redis_from_settings(settings: BaseSettings) -> tuple[Any, bool]:
    """A client whose calls a coroutine awaits without blocking the reactor,
    and whether it is asynchronous: ``redis.asyncio`` under Scrapy's asyncio
    reactor (the default), else the blocking client, to be called in a
    thread."""
    from scrapy.utils.asyncio import is_asyncio_available

    if not is_asyncio_available():
        return redis_from_settings(settings), False
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


def reachable_redis(settings: Any, connect: Callable[[Any], Any]) -> Any:
    """The Redis of ``REDIS_URL`` (or ``REDIS_HOST``/``REDIS_PORT``), once it
    answered a PING; else one line saying why and what to do (a crawl that
    cannot reach its frontier must not start)."""
    from redis.exceptions import RedisError

    url = (
        settings.get("REDIS_URL")
        or f"redis://{settings.get('REDIS_HOST', 'localhost')}:{settings.get('REDIS_PORT', 6379)}"
    )
    try:
        server = connect(settings)
    except ValueError as exc:
        raise SettingsError(f"REDIS_URL {url!r} is not a Redis URL ({exc}); e.g. redis://127.0.0.1:6379/0") from None
    try:
        server.ping()
    except RedisError as exc:
        raise SettingsError(f"the shared frontier's Redis at {url} does not answer ({exc}): start it, or set "
                            "REDIS_URL to where it runs") from None
    return server


def bloom_bits(capacity: int, error: float) -> int:
    """Bits of a Bloom filter holding *capacity* items at false-positive rate
    *error*: n·ln(1/p)/ln(2)², at most Redis's largest string (2³² bits)."""
    bits = math.ceil(capacity * math.log(1 / error) / math.log(2) ** 2)
    if bits > 2**32:
        raise ValueError(f"a Redis Bloom filter of {capacity:,} URLs at {error} needs {bits:,} bits, over Redis's "
                         "largest string (2^32 bits): lower FOCUS_SEEN_BLOOM_CAPACITY or raise FOCUS_SEEN_BLOOM_ERROR")
    return bits


def configure_seen_set(server: Any, key: str, seen: tuple[int, int, float]) -> None:
    """The first worker fixes the shared Bloom filter's shape (*seen*: exact
    up to, capacity, error); the others use it, and say so when their own
    settings differ. Two round trips."""
    exact, capacity, error = seen
    bits = bloom_bits(capacity, error)
    wanted = {"exact": exact, "bits": bits, "hashes": max(1, round(bits / capacity * math.log(2)))}
    config_key = f"{key}:bloomcfg"
    for field, value in wanted.items():
        server.hsetnx(config_key, field, value)
    kept = {k.decode(): int(v) for k, v in server.hgetall(config_key).items()}
    if kept != wanted:
        logger.warning("The shared frontier %s keeps the seen set its first worker configured (%s), not this "
                       "worker's FOCUS_SEEN_* (%s)", key, kept, wanted)


def warn_without_persistence(server: Any, key: str) -> None:
    """Say when the Redis keeps nothing on disk: a restart wipes the frontier."""
    try:
        found = {**server.config_get("appendonly"), **server.config_get("save")}
    except Exception:  # noqa: BLE001 (CONFIG may be disabled on a managed Redis: nothing to say then)
        return
    found = {(k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
             for k, v in found.items()}
    if found.get("appendonly") == "no" and not found.get("save"):
        logger.warning(
            "The Redis of the shared frontier %s keeps nothing on disk (appendonly no, save ''): a restart "
            "wipes the frontier, and the workers then stop. Set appendonly yes (docs/distributed.md)", key)
