"""The users' half of the symbiotic loop (docs/methods.md §4): every query
``scrapy serve`` answers is logged — its time, the query, how many pages
matched — in ``INDEX/queries.log``, and a night reads the log
(``scrapy symbiosis --from-log``) for the queries that refocus the
collection: the community's recent interests, as the papers' engine took
its users' queries of the day.

One line per query, tab-separated: ``2026-12-07T13:20:08+00:00<TAB>course
syllabus<TAB>12``. Several servers may append to one log: a line is one
``write`` of an ``O_APPEND`` file, which POSIX keeps whole.

Representative queries: the distinct queries of the window, drawn without
replacement with a chance in proportion to how often users asked them
(a query asked ten times is likelier among the night's, not ten times in
it), up to the night's number.
"""

from __future__ import annotations

import os
import random
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

__all__ = ["LoggedQuery", "QueryLog", "representative"]

LOG_NAME = "queries.log"


@dataclass(frozen=True)
class LoggedQuery:
    at: datetime
    query: str
    hits: int


class QueryLog:
    """The query log of an index folder."""

    def __init__(self, index: str | Path):
        self.path = Path(index) / LOG_NAME

    def record(self, query: str, hits: int, at: datetime | None = None) -> None:
        """One query answered (*hits*: pages matched; 0: none)."""
        query = " ".join(query.split())  # one line, one field
        if not query:
            return
        when = (at or datetime.now(UTC)).isoformat(timespec="seconds")
        line = f"{when}\t{query}\t{hits}\n".encode()
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(descriptor, line)
        finally:
            os.close(descriptor)

    def read(self, since: datetime | None = None, until: datetime | None = None) -> list[LoggedQuery]:
        """The queries logged in [*since*, *until*), in order; a line that is
        not one (a hand edit) is skipped."""
        if not self.path.is_file():
            return []
        found = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            parts = line.split("\t")
            if len(parts) != 3:
                continue
            try:
                at, hits = datetime.fromisoformat(parts[0]), int(parts[2])
            except ValueError:
                continue
            if (since is None or at >= since) and (until is None or at < until):
                found.append(LoggedQuery(at, parts[1], hits))
        return found

    def recent(self, hours: float, now: datetime | None = None) -> list[LoggedQuery]:
        now = now or datetime.now(UTC)
        return self.read(now - timedelta(hours=hours), now)


def representative(queries: list[LoggedQuery], count: int, rng: random.Random) -> list[str]:
    """*count* distinct queries (case and spacing aside), each drawn with a
    chance in proportion to how often it was asked (see the module docstring).

    >>> logged = [LoggedQuery(datetime(2026, 1, 1, tzinfo=UTC), q, 1) for q in ["a b", "A  b", "c", "d"]]
    >>> sorted(representative(logged, 2, random.Random(1)))
    ['a b', 'd']
    """
    asked = Counter(" ".join(entry.query.lower().split()) for entry in queries)
    pool, weights = list(asked), [float(n) for n in asked.values()]
    chosen: list[str] = []
    while pool and len(chosen) < count:
        index = rng.choices(range(len(pool)), weights)[0]
        chosen.append(pool.pop(index))
        weights.pop(index)
    return chosen
