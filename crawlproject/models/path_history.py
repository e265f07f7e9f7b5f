"""What the crawl has seen of each sibling group of links (host, path
prefixes, page: crawlproject.models.link_features.path_cells), and the
estimate of a link's worth shrunk through them — step 1 of the online link
learner (crawlproject.models.online_link_model).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

_UNKNOWN = object()


class PathHistory:
    """What the crawl has seen, in all and per sibling group (host, path
    prefixes, page: :func:`path_cells`): links that led to a page, the
    pages' summed relevance and what had been expected of them, and links
    that led to a dead end (a 4xx/5xx or a failed fetch). At most *cells*
    groups are kept (the oldest forgotten first).

    A group corrects what coarser knowledge expects of its links by the
    ratio of what its pages showed to what was expected of them — so a
    directory of relevant pages lifts its links, and a large mixed one (a
    whole site under one directory) leaves the prior's differences alone."""

    def __init__(self, strength: float = 3.0, cells: int = 500_000):
        self.strength = strength
        self.limit = cells
        self.cells: OrderedDict[int, list[float]] = OrderedDict()  # cell → [pages, relevance, expected, dead]
        self.pages = 0.0
        self.relevance = 0.0
        self.dead = 0.0
        self.priors = 0.0  # summed priors of the links that led to pages
        self.held: dict[int, float] = {}  # cell → what links in flight hold (hold)
        self._memo: dict[int, tuple[float, float, float] | None] = {}

    @property
    def scale(self) -> float:
        """Relevance per unit of prior: what puts a prior on the verdicts'
        scale (1 until a page with a prior has been seen)."""
        if self.pages == 0 or self.priors <= 0:
            return 1.0
        return self.relevance / self.priors

    @property
    def mean(self) -> float:
        return self.relevance / self.pages if self.pages else 0.0

    @property
    def alive_rate(self) -> float:
        """The crawl's share of links that led to a page (1 before any dead end)."""
        tries = self.pages + self.dead
        return (self.pages + 1) / (tries + 1) if self.dead else 1.0

    def _factors(self, cell: int, holds: bool = True) -> tuple[float, float, float] | None:
        """What a sibling group does to an estimate: relevance × *ratio*,
        Pr(alive) → *stay* + *keep* · Pr(alive) (remembered until the next
        verdict changes the counts); None for a group with no evidence.
        *holds*: with what links in flight hold (:meth:`hold`)."""
        if not cell:
            return None
        # the memo keeps the reading with holds; without them it is the same while nothing is held
        memo = holds or not self.held
        found = self._memo.get(cell, _UNKNOWN) if memo else _UNKNOWN
        if found is _UNKNOWN:
            counts = self.cells.get(cell)
            held = self.held.get(cell, 0.0) if holds else 0.0
            if counts is None and not held:
                found = None
            else:
                pages, shown, expected, dead = counts or (0.0, 0.0, 0.0, 0.0)
                k, mean = self.strength, self.mean
                # a hold counts as expected, not shown; a negative one (optimism) as shown
                ratio = ((shown + max(-held, 0.0) + k * mean) / (expected + max(held, 0.0) + k * mean)
                         if mean > 0 else 1.0)
                found = (ratio, pages / (pages + dead + k), k / (pages + dead + k))
            if memo:
                self._memo[cell] = found
        return found  # type: ignore[return-value]

    def _chain(self, prior: float, cells: Sequence[int], holds: bool = True) -> Iterator[tuple[int, float, float]]:
        """Down the sibling groups, coarsest first: each group, and the
        relevance and Pr(alive) expected of the link before that group."""
        relevance = prior * self.scale
        alive = self.alive_rate
        for cell in cells:
            yield cell, relevance, alive
            factors = self._factors(cell, holds)
            if factors is not None:
                ratio, stay, keep = factors
                relevance *= ratio
                alive = stay + keep * alive
        yield 0, relevance, alive

    def estimate(self, prior: float, cells: Sequence[int]) -> tuple[float, float]:
        """E[relevance] and Pr(alive) of a link of *prior* under *cells*.

        >>> history = PathHistory(strength=1.0)
        >>> history.estimate(0.2, [0, 0])
        (0.2, 1.0)
        >>> history.observe(0.1, [7], 0.3); history.observe(0.1, [8], 0.1); history.observe(0.1, [8], None)
        >>> [tuple(round(x, 2) for x in history.estimate(0.1, [cell])) for cell in (7, 8, 9)]
        [(0.33, 0.88), (0.12, 0.58), (0.2, 0.75)]
        """
        *_, (_, relevance, alive) = self._chain(prior, cells)
        return relevance, alive

    def observe(self, prior: float, cells: Sequence[int], relevance: float | None) -> None:
        """A link (of *prior*) under *cells* led to a page of *relevance*,
        or (None) to a dead end."""
        dead = relevance is None
        # what was expected of it by the verdicts alone: links still in flight hold nothing of it
        expectations = [(cell, expected) for cell, expected, _ in self._chain(prior, cells, holds=False) if cell]
        self._memo.clear()  # the counts change: every group's factors may
        self.dead += dead
        if not dead:
            self.pages += 1
            self.relevance += float(relevance)  # type: ignore[arg-type]
            self.priors += prior
        for cell, expected in expectations:
            counts = self.cells.get(cell)
            if counts is None:
                counts = self.cells[cell] = [0.0, 0.0, 0.0, 0.0]
                if len(self.cells) > self.limit:
                    self.cells.popitem(last=False)
            if dead:
                counts[3] += 1
            else:
                counts[0] += 1
                counts[1] += float(relevance)  # type: ignore[arg-type]
                counts[2] += expected

    def hold(self, prior: float, cells: Sequence[int], weight: float) -> list[tuple[int, float]]:
        """A link (of *prior*) under *cells* is being fetched: until its
        verdict, each group counts *weight* of what the verdicts so far
        expect of it as expected and not yet shown — a "virtual loss", as
        parallel tree searches count a move being explored — so the links
        that many requests in flight take at once spread over groups instead
        of piling into the one that looked best before any of them answered.
        What the verdicts teach is unchanged. Returns what was held, for
        :meth:`release`."""
        held = [(cell, weight * expected) for cell, expected, _ in self._chain(prior, cells, holds=False) if cell]
        self._memo.clear()
        for cell, amount in held:
            self.held[cell] = self.held.get(cell, 0.0) + amount
        return held

    def release(self, held: Sequence[tuple[int, float]]) -> None:
        """The verdict of a held link arrived: what :meth:`hold` held is let go."""
        self._memo.clear()
        for cell, amount in held:
            left = self.held.get(cell, 0.0) - amount
            if abs(left) > 1e-12:
                self.held[cell] = left
            else:
                self.held.pop(cell, None)

    def revise(self, cells: Sequence[int], old: float, new: float) -> None:
        """A page counted with relevance *old* is now known to have *new*
        (a user's label): every group it is in, and the crawl, take the
        difference."""
        self.relevance += new - old
        self._memo.clear()
        for cell in cells:
            counts = self.cells.get(cell) if cell else None
            if counts is not None:
                counts[1] += new - old

    def counts(self, cell: int) -> tuple[float, float, float]:
        """Pages, their summed relevance, dead ends of one sibling group."""
        pages, relevance, _, dead = self.cells.get(cell, (0.0, 0.0, 0.0, 0.0))
        return pages, relevance, dead
