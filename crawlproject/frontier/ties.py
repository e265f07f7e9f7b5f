"""Which way ties go: the order of Scrapy's queues, read from its settings.

Scrapy pops requests of equal priority in the order of
``SCHEDULER_MEMORY_QUEUE`` (``SCHEDULER_DISK_QUEUE`` under ``JOBDIR``), LIFO
by default, so a plain spider crawls depth-first; start requests come from
queues of their own (``SCHEDULER_START_*_QUEUE``, FIFO by default) after the
other requests of the same priority. The frontier orders equal scores the
same way, so a spider that gives no scores crawls as it would on Scrapy's
scheduler. Focused spiders ask for FIFO (breadth-first among equals).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from queuelib import queue as queuelib_queues
from scrapy.utils.job import job_dir
from scrapy.utils.misc import load_object

from crawlproject.config import SettingsError
from crawlproject.frontier.items import COUNTER_LIMIT, START_TIER, tie_of

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scrapy.settings import BaseSettings

_LIFO = (queuelib_queues.LifoMemoryQueue, queuelib_queues.LifoDiskQueue, queuelib_queues.LifoSQLiteQueue)
_FIFO = (queuelib_queues.FifoMemoryQueue, queuelib_queues.FifoDiskQueue, queuelib_queues.FifoSQLiteQueue)


def scrapy_tie_order(settings: BaseSettings) -> tuple[bool, bool | None]:
    """``(lifo, start_lifo)``: whether equal scores pop last-in first-out,
    for requests and for start requests (None: start requests share the
    other requests' queue and order)."""
    which = "DISK" if job_dir(settings) else "MEMORY"
    lifo = _is_lifo(settings, f"SCHEDULER_{which}_QUEUE")
    start_lifo = (
        _is_lifo(settings, f"SCHEDULER_START_{which}_QUEUE") if settings.get(f"SCHEDULER_START_{which}_QUEUE") else None
    )
    return lifo, start_lifo


def _is_lifo(settings: BaseSettings, name: str) -> bool:
    path = settings.get(name)
    try:
        queue_class = load_object(path) if isinstance(path, str) else path
    except (ImportError, NameError, ValueError) as exc:
        raise SettingsError(f"{name}={path!r} cannot be imported ({exc})") from None
    if isinstance(queue_class, type):
        if issubclass(queue_class, _LIFO):
            return True
        if issubclass(queue_class, _FIFO):
            return False
    label = getattr(queue_class, "__name__", str(path)).lower()
    if "lifo" in label:
        return True
    if "fifo" in label:
        return False
    raise SettingsError(
        f"{name}={path!r} is neither a LIFO nor a FIFO queue (queuelib's or Scrapy's): the frontier "
        "orders requests of equal score as one of them; set it to scrapy.squeues.LifoMemoryQueue or FifoMemoryQueue"
    )


class TieKeys:
    """The memory frontier's tie keys: a push counter, arranged as
    :func:`crawlproject.frontier.items.tie_of` says for the order in force."""

    def __init__(self, lifo: bool, start_lifo: bool | None):
        self.lifo = lifo
        self.start_lifo = start_lifo
        self.counter = 0  # pushes so far

    def next(self, start: bool) -> int:
        counter = self.counter
        self.counter = counter + 1
        if start and self.start_lifo is not None:
            return tie_of(counter, self.start_lifo, start_tier=True)
        return tie_of(counter, self.lifo)

    def resume_after(self, ties: Iterable[int]) -> None:
        """Continue after the saved *ties* (a resumed crawl's queue)."""
        self.counter = max((self._counter_of(tie) for tie in ties), default=-1) + 1

    def _counter_of(self, tie: int) -> int:
        """The push counter a saved tie key was made from (under today's order)."""
        start = bool(tie & START_TIER) and self.start_lifo is not None
        low = tie & (START_TIER - 1)
        lifo = self.start_lifo if start else self.lifo
        counter = COUNTER_LIMIT - 1 - low if lifo else low
        return counter if counter < COUNTER_LIMIT // 2 else 0  # saved under another order: restart
