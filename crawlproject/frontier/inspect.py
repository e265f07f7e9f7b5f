"""Reading a crawl's durable frontier from outside the crawl (tests,
benchmarks, a curious operator): what is queued, what was fetched."""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawlproject.frontier.items import ItemTables, fingerprint
from crawlproject.frontier.journal import FrontierJournal

if TYPE_CHECKING:
    from pathlib import Path


class FrontierState:
    """The keys a JOBDIR has queued (a popped, unacknowledged URL counts as
    queued: it comes back on resume) and the fingerprints it has fetched."""

    def __init__(self, jobdir: str | Path):
        journal = FrontierJournal(jobdir)
        try:
            state = journal.load()
        finally:
            journal.close()
        tables = ItemTables()
        tables.load(state["origins"], state["payloads"], state["items"], state["slots"])
        self.queued = {tables.key_and_url(item)[0] for item in state["items"]}
        self._fetched: set[int] = state["fetched"]

    def fetched(self, key: str) -> bool:
        return fingerprint(key.encode()) in self._fetched
