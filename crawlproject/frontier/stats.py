"""Counting per-URL events without paying a stats call per event.

A call to Scrapy's stats collector costs a few microseconds (2.19 checks a
deprecated argument on each), as much as the scheduler spends on a URL.
:class:`StatsBuffer` counts in a plain dict and hands the totals over every
*every* events, and whenever its owner calls :meth:`StatsBuffer.flush`
(when idle, and on close): the stats are never more than *every* events
behind.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.statscollectors import StatsCollector


class StatsBuffer:
    def __init__(
        self,
        stats: StatsCollector,
        every: int = 1024,
        gauges: Callable[[], dict[str, float]] | None = None,
        keep_max: frozenset[str] = frozenset(),
    ):
        self.stats = stats
        self.every = every
        self.gauges = gauges  # values set at each flush
        self.keep_max = keep_max  # gauges whose maximum is kept too, as NAME_max
        self._counts: defaultdict[str, int] = defaultdict(int)
        self._events = 0

    def inc(self, key: str, count: int = 1) -> None:
        self._counts[key] += count
        self._events += 1
        if self._events >= self.every:
            self.flush()

    def flush(self) -> None:
        stats = self.stats
        for key, count in self._counts.items():
            stats.inc_value(key, count)
        self._counts.clear()
        self._events = 0
        if self.gauges is not None:
            for key, value in self.gauges().items():
                stats.set_value(key, value)
                if key in self.keep_max:
                    stats.max_value(f"{key}_max", value)
