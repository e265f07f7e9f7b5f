"""The frontier contract: what every frontier backend (memory, Redis) must
do, and nothing more (docs/methods.md §1).

A frontier holds unvisited URLs under their canonical form (the *key*),
each with a float score, the URL to fetch as it was found (when it differs
from the key) and an opaque payload (what the scheduler needs to rebuild
the Request). It owns the order: pops are best-first, ties first-in
first-out or last-in first-out as Scrapy's queues are configured, under a
per-slot diversity rule, from a download slot that can take a request now. It owns the seen set: a key is
queued once, and never again once fetched.

A pop *leases* its URL: it is neither queued nor fetched until the crawler
acknowledges it (:meth:`Frontier.ack`: fetched and processed) or gives it
back (:meth:`Frontier.release`: not fetched, e.g. the crawl stopped). A
shared backend adds an expiry so that a worker that dies loses nothing.

Scoring is not the frontier's business: strategies compute scores, the
scheduler passes them in, and :meth:`Frontier.rescore` applies a strategy's
new scores to everything queued.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from crawlproject.frontier.pop_rule import ANY_SLOT

if TYPE_CHECKING:
    from collections.abc import Callable, Collection

    from twisted.internet.defer import Deferred

    from crawlproject.frontier.pop_rule import PopRule


class PushOutcome(enum.Enum):
    """What :meth:`Frontier.push` did with a URL."""

    ADDED = "added"
    #: Added, and the lowest-scored queued URL was evicted to make room.
    ADDED_EVICTING = "added_evicting"
    #: Added although the frontier is full: a forced push is never refused.
    ADDED_OVER_BOUND = "added_over_bound"
    #: Already queued with a lower score: its score (and payload) were raised.
    RAISED = "raised"
    #: Already queued with an equal or higher score: nothing changed.
    DUPLICATE = "duplicate"
    #: Already fetched, or leased (being fetched): never queued twice.
    ALREADY_FETCHED = "already_fetched"
    #: This very URL was refused by policy (robots.txt) when popped before.
    REFUSED = "refused"
    #: Its host has had its share of pages (a per-host cap: traps end there).
    HOST_CAP = "host_cap"
    #: Taken, to be decided with the next batch a shared backend sends
    #: (its real outcome is counted in stats then).
    PENDING = "pending"
    #: Queued on disk: the frontier's memory is full and the URL ranks below
    #: everything in memory (it comes back as memory drains).
    SPILLED = "spilled"
    #: The frontier is full, drops what overflows (FOCUS_FRONTIER_OVERFLOW=drop)
    #: and the URL scores no better than its worst entry.
    REJECTED_FULL = "rejected_full"

    @property
    def queued(self) -> bool:
        return self in _QUEUED


_QUEUED = frozenset(
    {
        PushOutcome.ADDED,
        PushOutcome.ADDED_EVICTING,
        PushOutcome.ADDED_OVER_BOUND,
        PushOutcome.RAISED,
        PushOutcome.PENDING,
        PushOutcome.SPILLED,
    }
)


class FrontierEntry(NamedTuple):
    key: str  #: canonical URL: the identity of the page
    score: float
    payload: Any
    url: str  #: the URL to fetch, as it was found (== key when they agree)


class Frontier(Protocol):
    """A bounded, deduplicating, best-first queue of URLs with leases.

    Deliberately narrow, so a shared backend can implement each method with
    one atomic operation.
    """

    def open(self) -> None:
        """Load what a previous run of the same crawl left, if anything."""
        ...

    def close(self) -> Deferred[None] | None:
        """Give back every lease still held, and persist if the backend does
        (a Deferred when it finishes off the reactor: the scheduler returns
        it to Scrapy, which waits for it)."""
        ...

    def flush(self) -> None:
        """Make every change so far durable (or visible to other workers)."""
        ...

    def push(
        self,
        key: str,
        score: float,
        payload: Any = None,
        force: bool = False,
        url: str | None = None,
        slot: str | None = None,
        start: bool = False,
    ) -> PushOutcome:
        """Queue *key* with *score*; higher scores pop first.

        A key already queued keeps its place unless *score* is higher, in
        which case its score, payload and URL are replaced. A key already
        fetched or leased is refused unless *force* (a ``dont_filter``
        request). When the frontier is full the lowest-scored entry is
        evicted, or the new key refused if it is no better; a forced push is
        never refused (the bound is exceeded instead). *url* is the URL to
        fetch when it differs from the key; *slot* its download slot (its
        host when None); *start* marks a start request (Scrapy pops those
        after other requests of equal priority). A backend may ignore
        *slot* and *start*.
        """
        ...

    def pop(self, rule: PopRule = ANY_SLOT) -> FrontierEntry | None:
        """Lease and return the best URL *rule* allows (:class:`PopRule`:
        which download slots are busy, how far down the queue a free one may
        reach, or which slots alone may give), under the diversity rule, or
        ``None`` — when nothing is queued, or when the URLs the rule allows
        wait for their slots. A backend that prefetches may count within what
        it prefetched."""
        ...

    def claim(
        self, key: str, score: float, payload: Any = None, url: str | None = None, slot: str | None = None
    ) -> bool:
        """Lease *key* now unless it was fetched or is leased (taking it out
        of the queue if it is queued): a redirect's target is fetched at
        once, and only once. Return whether the lease was granted."""
        ...

    def ack(self, key: str) -> None:
        """The leased *key* was fetched and processed: it is fetched for good."""
        ...

    def release(self, key: str) -> None:
        """Give the leased *key* back: it is queued again as it was (over the
        bound if need be), and will be popped again."""
        ...

    def refuse(self, key: str, url: str) -> None:
        """The leased *key* was not fetched because *url* is refused by policy
        (robots.txt judges a URL, not a page): *url* is never queued again,
        but the page may still be fetched under another spelling."""
        ...

    def rescore(self, scorer: Callable[[str, float, Any], float], keys: Collection[str] | None = None) -> None:
        """Give every queued key — or each of *keys* that is queued — the
        score ``scorer(key, score, payload)``, higher or lower."""
        ...

    def sample(self, count: int) -> list[tuple[float, str]]:
        """Up to *count* queued URLs drawn at random, each as its score and
        its download slot (what the dashboard charts of the queue, and what
        the estimate of what is left reads per site)."""
        ...

    def __len__(self) -> int:
        """Number of queued (not leased, not fetched) URLs. A shared backend
        counts the URLs other workers lease too: they may come back, or bring
        links, so a worker stops only when nothing is left anywhere."""
        ...

    def leased(self) -> int:
        """Number of URLs leased now."""
        ...

    def in_flight_scores(self) -> list[float]:
        """The scores of the URLs this crawler is fetching now (leased, not
        yet settled): found and not yet fetched, as the queued ones are, but
        out of the queue. None in FIFO order (scores are ignored)."""
        ...
