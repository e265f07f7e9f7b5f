"""Spiders: the ``focus`` spider (spiders.focus) and one named after each
strategy (spiders.strategy_spiders), all FocusedSpider (subclass one per
topic): ``from crawlproject.spiders import BestFirstSpider``."""

from __future__ import annotations

import importlib
from typing import Any


def __getattr__(name: str) -> Any:
    """The spiders named after strategies, imported when first asked for
    (the package imports nothing else)."""
    if name.endswith("Spider"):
        strategy_spiders = importlib.import_module("crawlproject.spiders.strategy_spiders")
        if name in strategy_spiders.__all__:
            return getattr(strategy_spiders, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
