"""The labels a user gives a running crawl ("this page is (not) what I
want"), kept where they survive: a ``url<TAB>relevant|irrelevant`` file
(``JOBDIR/user-labels.tsv``, else the crawl's output folder) — the format
``scrapy train --labels`` reads, to train the next crawl — or, for the
workers of a Redis crawl, a hash beside the shared frontier
(``<FOCUS_REDIS_KEY>:labels``) that every worker reads.

New labels are found by polling (the file's size, the hash's length), so a
label added by ``scrapy dashboard`` attached to the crawl, or by another
worker, reaches this one too.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator

logger = logging.getLogger(__name__)
RELEVANT, IRRELEVANT = "relevant", "irrelevant"


def parse_label(value: Any) -> bool:
    """A label's value: relevant (True) or not, from JSON or a file.

    >>> parse_label("relevant"), parse_label(False), parse_label("irrelevant")
    (True, False, False)
    """
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in (RELEVANT, "true", "1", "yes"):
        return True
    if text in (IRRELEVANT, "false", "0", "no"):
        return False
    raise ValueError(f"a label is 'relevant' or 'irrelevant', got {value!r}")


class FileLabels:
    """Labels in a ``url<TAB>label`` file, appended to (the last line of a
    URL wins)."""

    def __init__(self, path: Path):
        self.path = path
        self._read = 0  # bytes of the file already read

    def add(self, key: str, relevant: bool) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(f"{key}\t{RELEVANT if relevant else IRRELEVANT}\n")

    def new(self) -> Iterator[tuple[str, bool]]:
        """Labels added since the last call (by anyone)."""
        if not self.path.is_file() or self.path.stat().st_size <= self._read:
            return
        with self.path.open("rb") as f:
            f.seek(self._read)
            data = f.read()
        end = data.rfind(b"\n") + 1  # a line still being written waits for the next call
        self._read += end
        for line in data[:end].decode("utf-8", "replace").splitlines():
            url, _, label = line.partition("\t")
            try:
                yield url.strip(), parse_label(label)
            except ValueError:
                logger.warning("Skipping a line of %s that is no label: %r", self.path, line[:200])


class RedisLabels:
    """Labels in a Redis hash (url → label) shared by every worker; polled
    with HSCAN-free reads of what was added since (a list beside the hash
    records the order)."""

    def __init__(self, client: Any, key: str):
        self.client, self.key = client, key
        self._read = 0

    def add(self, key: str, relevant: bool) -> None:
        value = RELEVANT if relevant else IRRELEVANT
        pipe = self.client.pipeline(transaction=True)
        pipe.hset(f"{self.key}:labels", key, value)
        pipe.rpush(f"{self.key}:labels-log", f"{key}\t{value}")
        pipe.execute()

    def new(self) -> Iterator[tuple[str, bool]]:
        found = self.client.lrange(f"{self.key}:labels-log", self._read, -1) or []
        self._read += len(found)
        for entry in found:
            url, _, label = (entry.decode() if isinstance(entry, bytes) else entry).partition("\t")
            yield url, parse_label(label)
