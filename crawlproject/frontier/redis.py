"""Deprecated: the Redis frontier moved to :mod:`crawlproject.distributed.frontier`.
This path keeps working, with a warning, for a while — as Scrapy
keeps a moved path."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

from scrapy.exceptions import ScrapyDeprecationWarning

_MOVED = {"RedisFrontier": "crawlproject.distributed.frontier"}


def __getattr__(name: str) -> Any:
    module = _MOVED.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"crawlproject.frontier.redis.{name} is deprecated: use {module}.{name} "
        f"(FOCUS_FRONTIER_BACKEND={module}.{name})",
        ScrapyDeprecationWarning,
        stacklevel=2,
    )
    # by name: the frontier layer never imports the distributed layer above it
    return getattr(importlib.import_module(module), name)
