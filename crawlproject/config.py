"""Every ``FOCUS_*`` setting: its default, and typed getters that fail clearly.

This is the one place defaults live (STYLE §2); docs/settings.md documents
each. Components read settings through :func:`get_int`, :func:`get_float`,
:func:`get_bool`, :func:`get_choice` and :func:`get_str` so that a bad value
stops the crawl at start-up with a message naming the setting, its range and
what was given, instead of failing somewhere mid-crawl.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Collection

    from scrapy.settings import BaseSettings

DEFAULTS: dict[str, Any] = {
    # Replay (crawlproject.replay)
    "FOCUS_REPLAY_WARC": "",
    "FOCUS_REPLAY_PROXY": "",
    "FOCUS_REPLAY_ROBOTS": "",
    "FOCUS_REPLAY_FAULTS": "",
    "FOCUS_REPLAY_AS_OF": "",
    "FOCUS_REPLAY_LATENCY_MS": 0.0,
    "FOCUS_REPLAY_STARTUP_TIMEOUT": 120.0,
    # Network safety (netsafety) and spider traps
    "FOCUS_ALLOWED_NETWORKS": "",
    "FOCUS_MAX_SEGMENT_REPEATS": 3,
    "FOCUS_MAX_LINKS_PER_PAGE": 1000,
    "FOCUS_MAX_PAGES_PER_HOST": 0,
    # Crawl scope (scope): any | domain | host of the seeds
    "FOCUS_SCOPE": "any",
    # The home sites of a topic bound to them (scope.HomeSites): URLs or host names
    "FOCUS_HOME": "",
    # robots.txt (middlewares.robotstxt; Scrapy's ROBOTSTXT_OBEY turns it on)
    "FOCUS_ROBOTSTXT_EXPIRY": 86400.0,
    "FOCUS_ROBOTSTXT_RETRY_AFTER": 300.0,
    "FOCUS_ROBOTSTXT_MAX_BYTES": 512000,
    "FOCUS_ROBOTSTXT_MAX_CRAWL_DELAY": 30.0,
    # Page size and type (middlewares.pagesize)
    "FOCUS_MAX_PAGE_BYTES": 102400,
    # Frontier (frontier.scheduler)
    "FOCUS_FRONTIER_BACKEND": "crawlproject.frontier.memory.MemoryFrontier",
    "FOCUS_FRONTIER_MAX": 100000,
    "FOCUS_FRONTIER_ORDER": "score",
    "FOCUS_FRONTIER_HOST_BATCH": 1,
    "FOCUS_BATCH_SIZE": 1,
    # The shared frontier on Redis (frontier.redis)
    "FOCUS_REDIS_KEY": "%(spider)s:frontier",
    "FOCUS_REDIS_LEASE_SECONDS": 120.0,
    "FOCUS_REDIS_PREFETCH": 16,
    "FOCUS_REDIS_BATCH": 256,
    "FOCUS_REDIS_SEEDS_KEY": "",
    "FOCUS_OK_PAGECOUNT": 0,
    "FOCUS_REFRESH_POLICY": "uniform",
    "FOCUS_REFRESH_BUDGET": 100,
    "FOCUS_INDEX_DIR": "",
    "FOCUS_INDEX_COMMIT_PAGES": 100,
    "FOCUS_INDEX_VOTE_WINDOW": 10,
    "FOCUS_SEARCH_WEIGHTS": "votes:1,text:1,title:1",
    "FOCUS_IDF_INDEX": "",
    "FOCUS_SHARED_POLITENESS": False,
    # Strategy and text
    "FOCUS_STRATEGY": "",
    "FOCUS_STEMMING": True,
    "FOCUS_SHARK_GAMMA": 0.7,
    "FOCUS_SHARK_DELTA": 0.5,
    "FOCUS_SHARK_BETA": 0.8,
    "FOCUS_SHARK_DEPTH": 3,
    "FOCUS_CONTEXT_WORDS": 10,
    "FOCUS_RANDOM_SEED": 0,
    "FOCUS_LINK_VALUE_ONLINE": True,
    "FOCUS_LINK_VALUE_SIBLINGS": True,
    "FOCUS_LEARN_MEMORY": 200000,
    "FOCUS_INFOSPIDERS_AGENTS": 8,
    "FOCUS_INFOSPIDERS_MAX_AGENTS": 64,
    "FOCUS_INFOSPIDERS_ALPHA": 0.5,
    "FOCUS_INFOSPIDERS_BETA": 5.0,
    "FOCUS_INFOSPIDERS_HIDDEN": 4,
    "FOCUS_INFOSPIDERS_LEARNING_RATE": 0.1,
    "FOCUS_ORACLE_WARC": "",
    "FOCUS_CACHE_DIR": ".cache",
    # Focused crawler (strategies.focused, spiders.focused)
    "FOCUS_MODEL": "",
    "FOCUS_GOOD": "",
    "FOCUS_FOCUS_MODE": "soft",
    "FOCUS_HARD_RESERVE": False,
    "FOCUS_CLASSIFY_BATCH": 16,
    "FOCUS_CLASSIFY_WAIT": 0.02,
    "FOCUS_DISTILL_EVERY": 0,
    "FOCUS_DISTILL_HUBS": 10,
    "FOCUS_DISTILL_SAME_HOST": False,
    "FOCUS_RETRAIN_EVERY": 0,
    "FOCUS_RETRAIN_CONFIDENCE": 0.9,
    "FOCUS_RETRAIN_RESCORE_RATIO": 0.5,
    # Output (pipelines, extensions)
    "FOCUS_OUTPUT_DIR": "crawls/%(name)s-%(job)s",
    "FOCUS_STORE_PAGES": True,
    "FOCUS_WARC_OUTPUT": False,
    "FOCUS_LABELS": "",
    "FOCUS_RELEVANT": "",
}


class SettingsError(ValueError):
    """A setting or spider argument has a value the crawler cannot use."""


def _raw(settings: BaseSettings, name: str) -> Any:
    if name not in DEFAULTS:
        raise KeyError(f"{name} is not a crawlproject setting")
    value = settings.get(name)
    return DEFAULTS[name] if value is None else value


def get_int(
    settings: BaseSettings, name: str, minimum: int | None = None, maximum: int | None = None
) -> int:
    raw = _raw(settings, name)
    try:
        value = int(raw)
        if isinstance(raw, float) and raw != value:
            raise ValueError
    except (TypeError, ValueError):
        raise SettingsError(
            f"{name} must be a whole number{_range(minimum, maximum)}, got {raw!r}"
        ) from None
    _check_range(name, value, minimum, maximum)
    return value


def get_float(
    settings: BaseSettings,
    name: str,
    minimum: float | None = None,
    maximum: float | None = None,
) -> float:
    raw = _raw(settings, name)
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise SettingsError(
            f"{name} must be a number{_range(minimum, maximum)}, got {raw!r}"
        ) from None
    if value != value:  # NaN passes every comparison
        raise SettingsError(f"{name} must be a number, got NaN")
    _check_range(name, value, minimum, maximum)
    return value


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def get_bool(settings: BaseSettings, name: str) -> bool:
    raw = _raw(settings, name)
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise SettingsError(f"{name} must be true or false, got {raw!r}")


def get_choice(settings: BaseSettings, name: str, choices: Collection[str]) -> str:
    raw = str(_raw(settings, name)).strip().lower()
    if raw not in choices:
        raise SettingsError(
            f"{name} must be one of {', '.join(sorted(choices))}, got {raw!r}"
        )
    return raw


def get_str(settings: BaseSettings, name: str) -> str:
    return str(_raw(settings, name) or "")


def _range(minimum: float | None, maximum: float | None) -> str:
    if minimum is not None and maximum is not None:
        return f" from {minimum} to {maximum}"
    if minimum is not None:
        return f" ≥ {minimum}"
    if maximum is not None:
        return f" ≤ {maximum}"
    return ""


def _check_range(
    name: str, value: float, minimum: float | None, maximum: float | None
) -> None:
    if (minimum is not None and value < minimum) or (
        maximum is not None and value > maximum
    ):
        raise SettingsError(f"{name} must be{_range(minimum, maximum)}, got {value!r}")
