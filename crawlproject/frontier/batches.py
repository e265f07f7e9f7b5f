"""Best-N-First (docs/methods.md §2): release the N best URLs as one batch, and choose
the next N only once every page of the batch was processed."""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from crawlproject.frontier.pop_rule import PopRule

if TYPE_CHECKING:
    from collections.abc import Callable, Collection

    from crawlproject.frontier.base import Frontier, FrontierEntry


class BestNFirstBatches:
    def __init__(self, size: int):
        if size < 1:
            raise ValueError(f"batch size must be ≥ 1, got {size}")
        self.size = size
        self.batches = 0
        self._batch: deque[FrontierEntry] = deque()
        self._outstanding: set[str] = set()  # keys of the batch not finished yet

    def next(self, frontier: Frontier, exploring: Callable[[], Collection[str]] = list) -> FrontierEntry | None:
        """The next entry of the current batch; a new batch only when the
        last one is finished; ``None`` while it is not. A batch takes the
        best of each slot *exploring* names first, one each
        (crawlproject.frontier.exploration), then the best of all."""
        if not self._batch:
            if self._outstanding:
                return None
            explored: set[str] = set()
            while len(self._batch) < self.size:
                explore = [slot for slot in exploring() if slot not in explored]
                entry = frontier.pop(PopRule(only=explore)) if explore else None
                if entry is not None:
                    explored.add(urlsplit(entry.url).hostname or "")
                else:
                    entry = frontier.pop()
                if entry is None:
                    break
                self._batch.append(entry)
            if not self._batch:
                return None
            self._outstanding = {entry.key for entry in self._batch}
            self.batches += 1
        return self._batch.popleft()

    def finished(self, key: str) -> None:
        """The page of *key* was processed (or will never be)."""
        self._outstanding.discard(key)

    def waiting(self) -> bool:
        """Entries of the batch not handed out yet."""
        return bool(self._batch)
