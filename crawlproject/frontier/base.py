"""The frontier contract: what every frontier backend (memory today, Redis
next) must do, and nothing more (SPEC §1).

A frontier holds unvisited URLs with a float score and an opaque payload
(what the scheduler needs to rebuild the Request). It owns the order: pops
are best-first, with ties broken first-in first-out, under a per-host
diversity rule. Scoring is not its business: strategies compute scores and
the scheduler passes them in.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable


class PushOutcome(enum.Enum):
    """What :meth:`Frontier.push` did with a URL."""

    ADDED = "added"
    #: Added, and the lowest-scored queued URL was evicted to make room.
    ADDED_EVICTING = "added_evicting"
    #: Already queued with a lower score: its score (and payload) were raised.
    RAISED = "raised"
    #: Already queued with an equal or higher score: nothing changed.
    DUPLICATE = "duplicate"
    #: Already popped (fetched or being fetched): never queued twice.
    ALREADY_FETCHED = "already_fetched"
    #: The frontier is full and the URL scores no better than its worst entry.
    REJECTED_FULL = "rejected_full"


class FrontierEntry(NamedTuple):
    url: str
    score: float
    payload: Any


class Frontier(Protocol):
    """A bounded, deduplicating, best-first queue of URLs.

    The interface is deliberately narrow (push, pop, rescore, snapshot) so a
    shared backend can implement it with a handful of atomic operations.
    """

    def push(
        self, url: str, score: float, payload: Any = None, force: bool = False
    ) -> PushOutcome:
        """Queue *url* (canonical) with *score*; higher scores pop first.

        A URL already queued keeps its place unless *score* is higher, in
        which case its score and payload are raised. A URL already popped is
        refused unless *force* is true (a retry or a ``dont_filter`` request).
        When the frontier is full the lowest-scored entry is evicted, or the
        new URL is refused if it is no better than that entry.
        """
        ...

    def pop(self) -> FrontierEntry | None:
        """Remove and return the best URL that the host-diversity rule allows,
        or ``None`` when the frontier is empty. A popped URL is remembered as
        fetched and will not be queued again."""
        ...

    def rescore(self, scorer: Callable[[str, float, Any], float]) -> None:
        """Give every queued URL the score ``scorer(url, score, payload)``."""
        ...

    def snapshot(self) -> dict[str, Any]:
        """A picklable state from which :meth:`restore` resumes the same order."""
        ...

    def restore(self, state: dict[str, Any]) -> None:
        """Replace this frontier's contents with a :meth:`snapshot`."""
        ...

    def __len__(self) -> int:
        """Number of queued (not yet popped) URLs."""
        ...

    def __contains__(self, url: object) -> bool:
        """Whether *url* is queued now."""
        ...
