"""The link learner's queued links by their closest sibling groups (own
directory and page: the last two path cells, crawlproject.models.path_history),
which groups to re-score when a sibling's fetch tells something, and the
probes of directories no verdict has told anything of yet.

A dead end or a relevant page says most of its closest siblings, so their
queued links are re-scored every few verdicts (``FOCUS_LEARNER_SIBLINGS_EVERY``)
rather than waiting for the whole queue's re-score — and only the groups whose
history moved by ``FOCUS_LEARNER_SIBLINGS_MOVED`` since their links were last
re-scored: a group of a few pages moves more than 2 % with each verdict, a big
flat directory (hundreds of queued links) after every few dozen, where a
re-score costs most and changes the order least.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from crawlproject.strategies.base import RecentMemory

if TYPE_CHECKING:
    from collections.abc import Callable, Container, Iterable, Sequence

__all__ = ["DirectoryProbes", "SiblingGroups"]


class SiblingGroups:
    def __init__(self, moved: float, every: int):
        #: how far what a group's history says of its links must have moved
        #: since they were last re-scored (a share of what it said then)
        self.moved = moved
        #: verdicts between two re-scorings of the groups they touched
        self.every = every
        self._links: dict[int, set[str]] = {}  # group → its queued links
        #: each group's history cells, coarsest first (those of its first link, down to the group)
        self._chain: dict[int, tuple[int, ...]] = {}
        #: what each group's history said of its links when they were last re-scored
        self._said: dict[int, float] = {}
        self._touched: set[int] = set()  # groups whose history changed since their links were last re-scored
        self._since = 0

    def add(self, key: str, cells: Sequence[int]) -> None:
        """A queued link, in its two closest groups."""
        for level, cell in enumerate(cells[-2:], start=len(cells) - 2):
            if cell:
                group = self._links.get(cell)
                if group is None:
                    group = self._links[cell] = set()
                    self._chain[cell] = tuple(cells[:level + 1])
                group.add(key)

    def touched(self, cells: Sequence[int]) -> None:
        """A verdict (or a hold) changed the history of a link's two closest groups."""
        self._touched.update(cells[-2:])

    def forget_said(self, cell: int) -> None:
        """The group's links are re-scored when next touched, whatever moved."""
        self._said.pop(cell, None)

    def due(self) -> list[int]:
        """After each fetch: the groups touched since the last time, every
        ``every`` fetches (sorted: a repeatable crawl), else none."""
        self._since += 1
        if self._since < self.every:
            return []
        self._since = 0
        cells, self._touched = self._touched, set()
        return sorted(cells)

    def all_rescored(self) -> None:
        """The whole queue was re-scored: every group starts again."""
        self._since = 0
        self._touched.clear()
        self._said.clear()

    def to_rescore(self, cells: Iterable[int], says: Callable[[tuple[int, ...]], float], queued: Container[str],
                   moved_only: bool = False, skipped: Callable[[], None] | None = None) -> list[str]:
        """The queued links of *cells*' groups (sorted), each group's history
        read by *says* (of its cells, coarsest first); links no longer
        *queued* are forgotten. *moved_only*: only groups whose history moved
        by ``moved`` since their links were last re-scored (*skipped* is
        called for each other)."""
        affected: set[str] = set()
        for cell in cells:
            keys = self._links.get(cell)
            if not keys:
                continue
            said = says(self._chain.get(cell, (cell,)))
            before = self._said.get(cell)
            if moved_only and before is not None and abs(said - before) < self.moved * before:
                if skipped is not None:
                    skipped()
                continue
            # Forget what was fetched or forgotten: a look-up per sibling (an
            # intersection with the pending mapping would walk all of it).
            keys.difference_update([key for key in keys if key not in queued])
            affected |= keys
            if keys:
                self._said[cell] = said
            else:
                del self._links[cell]
                self._chain.pop(cell, None)
                self._said.pop(cell, None)
        return sorted(affected)


class DirectoryProbes:
    """A batch chosen for what it will teach (``FOCUS_LEARNER_PROBE_HOLD``):
    of a directory no verdict has told anything of yet, one link (the
    best-scored the learner has met, its probe) keeps its score and the
    others are held at *hold* of theirs until the probe's verdict arrives
    (then its siblings are re-scored with what it told). With many requests
    in flight the top of the queue then spreads over directories instead of
    sending several links of one before any has answered."""

    def __init__(self, hold: float, memory: int):
        self.hold = hold
        self._probes: RecentMemory[int, str] = RecentMemory(memory)  # unexplored directory → its probe's key

    def apply(self, link_keys: Sequence[str], directories: Sequence[int], scores: np.ndarray,
              known: Container[int], queued: Container[str]) -> None:
        """Hold *scores* in place: the links of directories not *known* to
        the history, but each one's probe (a probe no longer *queued* that
        left without a verdict is replaced)."""
        if self.hold >= 1:
            return
        chosen_now: set[str] = set()  # probes of this call (not queued yet)
        for i in np.argsort(-scores, kind="stable").tolist():  # the best of a directory becomes its probe
            directory, key = directories[i], link_keys[i]
            if not directory or directory in known:
                continue
            probe = self._probes.get(directory)
            if probe is None or (probe != key and probe not in queued and probe not in chosen_now):
                self._probes.keep(directory, key)  # new, or its probe left without a verdict
                chosen_now.add(key)
            elif probe != key:
                scores[i] *= self.hold

    def answered(self, directory: int, key: str) -> bool:
        """Whether *key*'s verdict is its directory's first (its probe's): the directory is explored."""
        if self._probes.get(directory) != key:
            return False
        del self._probes[directory]
        return True
