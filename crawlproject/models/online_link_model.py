"""An online link learner: what a link is worth, learnt during the crawl from
the crawl's own verdicts (issue 28), as ACHE's online link classifier and
Rennie & McCallum's learned link value learn it.

A link's score is the expected relevant pages per fetch,
Pr(alive) · E[relevance of its page], each estimated in two steps:

1. **From its prior and its siblings** (:class:`PathHistory`): the prior is
   SharkSearch's score of the link (docs/methods.md §2), put on the scale of the
   verdicts (× the crawl's mean relevance over the mean prior of the links
   that led to it). Then, from the coarsest sibling group to the finest —
   the link's host, first directory, first two directories, own directory
   and the page it was found on — the estimate is shrunk toward what that
   group's fetched pages showed: (Σ relevance + k·estimate) / (pages + k),
   k = :attr:`PathHistory.strength` pseudo-pages. Pr(alive) likewise, from
   the crawl's share of links that led to a page (1 before any dead end)
   through each group's own share. A group with no evidence changes nothing,
   so before any fetch the order is SharkSearch's.
2. **From what the link says of its target** (:class:`LinkFeaturizer`,
   hashed): the terms of its anchor (``a:``) and context window (``c:``),
   the words of its URL path (``u:``), its host (``h:``), file extension
   (``x:``) and path depth (``d:``), whether it leaves its page's host
   (``s:``) and how relevant its page was (``p:``). Two online linear models
   (:class:`OnlineLinear`, AdaGrad) learn the corrections to step 1 —
   relevance − estimate (squared loss) and alive or not (logistic loss, the
   step-1 log-odds as the offset) — from zero, so they change nothing until
   the crawl has taught them something.

Updates are incremental — a mini-batch of examples every
:attr:`LinkLearner.batch`, each step touching only the features the examples
have, the history one counter per sibling group — and examples are records
(:class:`Experience`) that any process can apply, so that the workers of a
distributed crawl, each applying all workers' examples, learn one model.
"""

from __future__ import annotations

import math
import re
import struct
from collections import OrderedDict
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import numpy as np
import xxhash
from scipy import sparse

from crawlproject.models.modelfile import load_model, save_model

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence
    from pathlib import Path

FORMAT = "crawlproject/link-learner/2"  # 2: groups keep what was expected of their pages
N_HASHED = 2**18
#: the sibling groups a link's history is read from: its host, its first
#: directory, its first two directories, its own directory, and the page
#: it was found on (links of one page share its fate)
HISTORY_LEVELS = 5
N_FEATURES = N_HASHED + 1  # and a bias
_UNKNOWN = object()
#: A correction is fully trusted once its recent loss is this share below the
#: offsets' alone (fixed before any measurement).
EARNED = 0.01
#: How much of the past a correction's track record keeps per mini-batch.
LOSS_MEMORY = 0.98
_BIAS = N_HASHED
NAMES_KEPT = 50_000  # tokens remembered by name (LinkFeaturizer.names)
TOKENS_CACHED = 200_000  # tokens whose hashed index is remembered (LinkFeaturizer._known)
LEVELS = ("host", "directory 1", "directories 1-2", "own directory", "page")
_URL_WORD = re.compile(r"[a-z]+|\d+")
_EXTENSION = re.compile(r"\.([a-z0-9]{1,5})$")


def _hash(token: str) -> int:
    return xxhash.xxh3_64_intdigest(token.encode()) % N_HASHED


def relevance_bucket(relevance: float) -> str:
    """The ``p:`` feature of a link: how relevant its page was, coarsely.

    >>> relevance_bucket(0.0), relevance_bucket(0.07), relevance_bucket(0.9)
    ('0', '0.05', '0.4')
    """
    for edge in (0.4, 0.2, 0.1, 0.05, 0.02):
        if relevance >= edge:
            return str(edge)
    return "0" if relevance <= 0 else "0.0"


def link_tokens(anchor_terms: Iterable[str], context_terms: Iterable[str], url: str, page_url: str,
                page_relevance: float, hops: int = 1) -> list[str]:
    """The sparse tokens of a link (before hashing); *hops*: links from the
    nearest seed to the link's target (a seed's link: 1).

    >>> link_tokens(["cours"], ["fall"], "http://www.cs.x.edu/courses/cs414/", "http://www.cs.x.edu/", 0.12)
    ['a:cours', 'c:fall', 'u:courses', 'u:cs', 'u:414', 'h:www.cs.x.edu', 'x:', 'd:2', 's:same', 'p:0.1', 'k:1']
    """
    parts = urlsplit(url.lower())
    path = parts.path
    words = _URL_WORD.findall(path + " " + parts.query)
    extension = _EXTENSION.search(path.rsplit("/", 1)[-1])
    depth = min(max(path.count("/") - 1, 0), 6)  # directories above the file
    same = parts.hostname == urlsplit(page_url.lower()).hostname
    return [
        *(f"a:{t}" for t in anchor_terms), *(f"c:{t}" for t in context_terms), *(f"u:{w}" for w in words),
        f"h:{parts.hostname or ''}", f"x:{extension.group(1) if extension else ''}", f"d:{depth}",
        "s:same" if same else "s:out", f"p:{relevance_bucket(page_relevance)}", f"k:{min(hops, 5)}",
    ]


def path_cells(url: str, found_on: str = "") -> tuple[int, ...]:
    """The history cells of a link to *url* found on the page *found_on*:
    its host, first directory, first two directories, own directory (a
    file's name is no directory) and the page, as hashes (0: none).

    >>> a = path_cells("http://h.org/courses/cs414/hw1.html", "http://h.org/courses/")
    >>> b = path_cells("http://h.org/courses/cs415/", "http://h.org/courses/")
    >>> a[:2] == b[:2], a[2] == b[2], a[4] == b[4]
    (True, False, True)
    """
    parts = urlsplit(url.lower())
    directories = parts.path.split("/")[1:-1]  # the last piece is a file name (or empty)
    host = parts.hostname or ""
    cells = [host]
    for depth in (1, 2):
        cells.append(host + "/" + "/".join(directories[:depth]) if len(directories) >= depth else "")
    cells.append(host + "/" + "/".join(directories) + "/" if directories else "")
    cells.append("page " + found_on if found_on else "")
    return tuple(xxhash.xxh3_64_intdigest(cell.encode()) if cell else 0 for cell in cells)


@dataclass
class LinkFeatures:
    """What a queued link is described by, compact enough to keep for every
    queued link (the hashed features' indices and weights)."""

    indices: np.ndarray  # int32, sorted
    values: np.ndarray  # float32, the hashed block L2-normalised
    prior: float
    parent: float  # its page's relevance
    cells: tuple[int, ...]  # its path history cells (path_cells)


class LinkFeaturizer:
    """Tokens → hashed features in which every kind (anchor, context, URL,
    …) weighs the same, L2-normalised (as the link-value model's). The last
    :data:`NAMES_KEPT` tokens seen are remembered by their index, to say in
    words what a model has learnt."""

    def __init__(self) -> None:
        self.names: OrderedDict[int, str] = OrderedDict()
        #: token → (hashed index, kind): a crawl meets the same tokens again and again (hosts,
        #: URL words, the topic's terms): a look-up instead of encoding and hashing each every time
        self._known: dict[str, tuple[int, str]] = {}

    def featurize(self, tokens: Sequence[str], prior: float, parent: float, cells: tuple[int, ...]) -> LinkFeatures:
        """One link's features (:meth:`featurize_many` of one)."""
        return self.featurize_many([tokens], [prior], parent, [cells])[0]

    def featurize_many(self, token_lists: Sequence[Sequence[str]], priors: Sequence[float], parent: float,
                       cells: Sequence[tuple[int, ...]]) -> list[LinkFeatures]:
        """The features of a page's links (*parent*: the page's relevance):
        each token a dictionary look-up, the page's arrays made at once."""
        known, remember, names = self._known, self._remember, self.names
        all_indices: list[int] = []
        all_values: list[float] = []
        ends = []
        for tokens in token_lists:
            entries = []
            per_kind: dict[str, int] = {}
            for token in dict.fromkeys(tokens):  # each distinct token once, in order
                entry = known.get(token) or remember(token)
                if entry[0] not in names:
                    names[entry[0]] = token
                    if len(names) > NAMES_KEPT:
                        names.popitem(last=False)
                entries.append(entry)
                per_kind[entry[1]] = per_kind.get(entry[1], 0) + 1
            # every kind weighs the same: its tokens 1/√(their count); tokens hashed alike add up
            weight_of = {kind: 1 / math.sqrt(count) for kind, count in per_kind.items()}
            weights: dict[int, float] = {}
            for index, kind in entries:
                weights[index] = weights.get(index, 0.0) + weight_of[kind]
            ordered = sorted(weights)
            norm = math.sqrt(sum(w * w for w in weights.values()))
            scale = 1 / norm if norm > 0 else 1.0
            all_indices += ordered
            all_values += [weights[i] * scale for i in ordered]
            ends.append(len(all_indices))
        indices = np.array(all_indices, dtype=np.int32)
        values = np.array(all_values, dtype=np.float32)
        starts = [0, *ends[:-1]]
        return [
            LinkFeatures(indices[start:end], values[start:end], float(prior), float(parent), link_cells)
            for start, end, prior, link_cells in zip(starts, ends, priors, cells, strict=True)
        ]

    def _remember(self, token: str) -> tuple[int, str]:
        """A token not met lately: its hashed index and kind."""
        if len(self._known) >= TOKENS_CACHED:
            self._known.clear()
        entry = self._known[token] = (_hash(token), token.partition(":")[0])
        return entry


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


class FlatRows:
    """The hashed features of links as flat arrays (the bias implied), for the
    products a prediction takes: a sparse matrix costs more to build than
    the product costs to take (re-scores predict thousands of queued links)."""

    def __init__(self, links: Sequence[LinkFeatures]):
        self.count = len(links)
        lengths = np.fromiter((len(link.indices) for link in links), dtype=np.int64, count=self.count)
        self.owners = np.repeat(np.arange(self.count), lengths)
        self.indices = np.concatenate([link.indices for link in links]) if links else np.zeros(0, np.int32)
        self.values = np.concatenate([link.values for link in links]) if links else np.zeros(0, np.float32)

    def dot(self, weights: np.ndarray) -> np.ndarray:
        """rows @ *weights*: each link's features, then its bias (the order a CSR product sums in)."""
        products = self.values * weights[self.indices]
        return np.asarray(np.bincount(self.owners, weights=products, minlength=self.count) + weights[_BIAS])


class OnlineLinear:
    """A linear correction over N_FEATURES sparse features, learnt online by
    AdaGrad (a step per coordinate that shrinks with the gradients it has
    had: the frequent tokens settle, a new one learns fast), with an L2
    penalty, added to an offset (what is known without it); ``logistic``
    for a probability (the offset a log-odds), else squared loss.

    The correction is trusted only as far as it has earned it: every
    mini-batch is first predicted with and without it (prequentially, before
    it is learnt from), and :attr:`trust` — the weight the correction gets —
    grows from 0 to 1 as its recent loss falls below the offset's alone by
    up to :data:`EARNED` of it. A correction that learns noise (tokens that
    say nothing of this topic) stays out of the crawl's way."""

    def __init__(self, rate: float = 0.1, l2: float = 1e-4, logistic: bool = False):
        self.rate, self.l2, self.logistic = rate, l2, logistic
        self.weights = np.zeros(N_FEATURES)
        self.squares = np.full(N_FEATURES, 1e-8)
        self.updates = 0
        self.loss_without = 0.0  # recent loss of the offsets alone (decayed sums)
        self.loss_with = 0.0  # … and with the correction

    @property
    def trust(self) -> float:
        """How much of the correction a prediction uses, in [0, 1]."""
        if self.loss_without <= 0:
            return 0.0
        gain = (self.loss_without - self.loss_with) / self.loss_without
        return min(max(gain / EARNED, 0.0), 1.0)

    def _link(self, raw: np.ndarray) -> np.ndarray:
        linked: np.ndarray = 1 / (1 + np.exp(-np.clip(raw, -30, 30))) if self.logistic else raw
        return linked

    def predict(self, rows: FlatRows, offsets: np.ndarray) -> np.ndarray:
        trust = self.trust
        if trust == 0:  # a correction not trusted yet (often the relevance one): no product to take
            return self._link(offsets)
        return self._link(offsets + trust * rows.dot(self.weights))

    def _loss(self, predicted: np.ndarray, targets: np.ndarray) -> float:
        if self.logistic:
            clipped = np.clip(predicted, 1e-6, 1 - 1e-6)
            return float(-np.sum(targets * np.log(clipped) + (1 - targets) * np.log(1 - clipped)))
        return float(np.sum((predicted - targets) ** 2))

    def learn(self, rows: sparse.csr_matrix, offsets: np.ndarray, targets: np.ndarray) -> None:
        """Judge the correction on a mini-batch, then one AdaGrad step on it."""
        full = self._link(offsets + rows @ self.weights)
        self.loss_without = LOSS_MEMORY * self.loss_without + self._loss(self._link(offsets), targets)
        self.loss_with = LOSS_MEMORY * self.loss_with + self._loss(full, targets)
        errors = full - targets  # d loss / d raw, for both losses
        gradient = (rows.T @ errors) / len(targets)
        touched = np.unique(rows.indices)
        step = gradient[touched] + self.l2 * self.weights[touched]
        self.squares[touched] += step * step
        self.weights[touched] -= self.rate * step / np.sqrt(self.squares[touched])
        self.updates += 1


def logit(probability: np.ndarray) -> np.ndarray:
    clipped = np.clip(probability, 1e-6, 1 - 1e-6)
    return np.asarray(np.log(clipped / (1 - clipped)))


_EXPERIENCE_HEAD = f"<ddd{HISTORY_LEVELS}QI"  # prior, parent, relevance (−1: dead end), cells, feature count


@dataclass
class Experience:
    """One verdict of the crawl about a link: the page it led to had
    *relevance*, or (None) it led to a dead end. Applied in any process, in
    any order, it teaches the same."""

    features: LinkFeatures
    relevance: float | None

    def pack(self) -> bytes:
        f = self.features
        head = struct.pack(
            _EXPERIENCE_HEAD, f.prior, f.parent, -1.0 if self.relevance is None else self.relevance,
            *(list(f.cells) + [0] * HISTORY_LEVELS)[:HISTORY_LEVELS], len(f.indices),
        )
        return head + f.indices.astype("<i4").tobytes() + f.values.astype("<f4").tobytes()

    @classmethod
    def unpack(cls, blob: bytes, offset: int = 0) -> tuple[Experience, int]:
        size = struct.calcsize(_EXPERIENCE_HEAD)
        prior, parent, relevance, *rest = struct.unpack_from(_EXPERIENCE_HEAD, blob, offset)
        cells, count = tuple(rest[:HISTORY_LEVELS]), rest[HISTORY_LEVELS]
        offset += size
        indices = np.frombuffer(blob, dtype="<i4", count=count, offset=offset).astype(np.int32)
        offset += 4 * count
        values = np.frombuffer(blob, dtype="<f4", count=count, offset=offset).astype(np.float32)
        offset += 4 * count
        features = LinkFeatures(indices, values, prior, parent, cells)
        return cls(features, None if relevance < 0 else relevance), offset


def pack_all(experiences: Iterable[Experience]) -> bytes:
    return b"".join(e.pack() for e in experiences)


def unpack_all(blob: bytes) -> list[Experience]:
    found, offset = [], 0
    while offset < len(blob):
        experience, offset = Experience.unpack(blob, offset)
        found.append(experience)
    return found


class LinkLearner:
    """The online model of one crawl: the path history and the two token
    corrections over it, learnt from :class:`Experience`."""

    def __init__(self, rate: float = 0.1, batch: int = 16, history_strength: float = 3.0):
        self.relevance = OnlineLinear(rate)
        self.alive = OnlineLinear(rate, logistic=True)
        self.history = PathHistory(history_strength)
        self.batch = batch
        self.featurizer = LinkFeaturizer()
        self.learned = 0  # experiences learnt from
        self.dead_ends = 0
        self._waiting: list[tuple[Experience, float, float]] = []  # and step 1's estimates before it

    # -- scoring ---------------------------------------------------------------

    def rows(self, links: Sequence[LinkFeatures]) -> sparse.csr_matrix:
        """The hashed features of *links* (and the bias) as one sparse matrix."""
        indptr = np.zeros(len(links) + 1, dtype=np.int64)
        np.cumsum([len(link.indices) + 1 for link in links], out=indptr[1:])
        bias_index = np.array([_BIAS], dtype=np.int32)
        bias_value = np.ones(1, dtype=np.float32)
        indices = [part for link in links for part in (link.indices, bias_index)]
        values = [part for link in links for part in (link.values, bias_value)]
        return sparse.csr_matrix(
            (np.concatenate(values) if values else np.zeros(0, np.float32),
             np.concatenate(indices) if indices else np.zeros(0, np.int32), indptr),
            shape=(len(links), N_FEATURES),
        )

    def offsets(self, links: Sequence[LinkFeatures]) -> tuple[np.ndarray, np.ndarray]:
        """Step 1 of each link: E[relevance] and Pr(alive) from its prior and
        its sibling groups (PathHistory.estimate, in one tight loop)."""
        history = self.history
        factors = history._factors  # noqa: SLF001 (the same class family)
        relevance = np.array([link.prior for link in links], dtype=float) * history.scale
        alive = np.full(len(links), history.alive_rate)
        if not links:
            return relevance, alive
        # Each distinct group's factors once (siblings share most groups), then
        # every link's chain down its groups as array arithmetic.
        cells = np.fromiter(chain.from_iterable(link.cells for link in links), dtype=np.uint64).reshape(len(links), -1)
        distinct, where = np.unique(cells, return_inverse=True)
        table = np.array([(1.0, 0.0, 1.0) if found is None else found
                          for found in map(factors, distinct.tolist())])  # ratio, stay, keep
        ratio, stay, keep = (table[:, column][where.reshape(cells.shape)] for column in range(3))
        relevance *= ratio.prod(axis=1)
        for level in range(cells.shape[1]):  # coarsest first, as PathHistory.estimate
            alive = stay[:, level] + keep[:, level] * alive
        return relevance, alive

    def expected(self, links: Sequence[LinkFeatures]) -> tuple[np.ndarray, np.ndarray]:
        """Each link's expected relevance and Pr(alive), both steps."""
        if not links:
            return np.zeros(0), np.zeros(0)
        rows = FlatRows(links)
        relevance, alive = self.offsets(links)
        return self.relevance.predict(rows, relevance), self.alive.predict(rows, logit(alive))

    def scores(self, links: Sequence[LinkFeatures]) -> np.ndarray:
        """Expected relevant pages per fetch: Pr(alive) · max(relevance, 0)."""
        relevance, alive = self.expected(links)
        return np.asarray(alive * np.maximum(relevance, 0.0))

    def calibrated_priors(self, links: Sequence[LinkFeatures]) -> np.ndarray:
        """The priors alone, on the learnt scale and with the crawl's alive
        rate: an exploring link's score — SharkSearch's order, comparable
        with the others' scores."""
        priors = np.array([link.prior for link in links])
        return np.asarray(priors * self.history.scale * self.history.alive_rate)

    # -- learning ----------------------------------------------------------------

    def add(self, experience: Experience) -> None:
        """One more verdict: the history takes it in at once (its siblings'
        estimates change now); the corrections learn it with the next
        mini-batch, from what step 1 said of the link before it."""
        features = experience.features
        relevance, alive = self.history.estimate(features.prior, features.cells)
        self.history.observe(features.prior, features.cells, experience.relevance)
        self._waiting.append((experience, relevance, alive))
        if len(self._waiting) >= self.batch:
            self.flush()

    def relabel(self, features: LinkFeatures, old: float, new: float) -> None:
        """A page this learner took in with relevance *old* has *new* (a
        user's label): the history is revised, and the corrections learn
        the link once more, with the new value."""
        self.history.revise(features.cells, old, new)
        relevance, alive = self.history.estimate(features.prior, features.cells)
        self._waiting.append((Experience(features, new), relevance, alive))
        self.flush()

    def flush(self) -> None:
        """Learn the waiting experiences (one step of each correction)."""
        if not self._waiting:
            return
        waiting, self._waiting = self._waiting, []
        batch = [experience for experience, _, _ in waiting]
        rows = self.rows([e.features for e in batch])
        relevance = np.array([offset for _, offset, _ in waiting])
        alive = np.array([offset for _, _, offset in waiting])
        outcomes = np.array([e.relevance is not None for e in batch], dtype=float)
        self.dead_ends += int(len(batch) - outcomes.sum())
        self.learned += len(batch)
        self.alive.learn(rows, logit(alive), outcomes)
        fetched = np.flatnonzero(outcomes)
        if fetched.size:
            verdicts = np.array([batch[i].relevance for i in fetched], dtype=float)
            self.relevance.learn(rows[fetched], relevance[fetched], verdicts)

    def top_features(self, names: dict[int, str], count: int = 10) -> list[tuple[str, float, float]]:
        """The named tokens (*names*: hashed index → token) with the largest
        corrections: (token, to relevance, to the log-odds of alive) — what
        the learner has learnt, for a person."""
        found = [
            (name, float(self.relevance.weights[index]), float(self.alive.weights[index]))
            for index, name in names.items()
        ]
        return sorted(found, key=lambda item: -abs(item[1]))[:count]

    # -- state (JOBDIR) ------------------------------------------------------------

    def save(self, path: str | Path) -> None:
        self.flush()
        cells = np.array(list(self.history.cells), dtype=np.uint64)
        counts = np.array(list(self.history.cells.values()), dtype=float).reshape(-1, 4)
        meta = {
            "learned": self.learned, "dead_ends": self.dead_ends, "batch": self.batch,
            "rate": self.relevance.rate,
            "history": [self.history.pages, self.history.relevance, self.history.dead, self.history.priors],
            "strength": self.history.strength,
        }
        meta["losses"] = [self.relevance.loss_without, self.relevance.loss_with,
                          self.alive.loss_without, self.alive.loss_with]
        save_model(path, FORMAT, meta, {
            "relevance_weights": self.relevance.weights, "relevance_squares": self.relevance.squares,
            "alive_weights": self.alive.weights, "alive_squares": self.alive.squares,
            "cells": cells, "counts": counts,
        })

    @classmethod
    def load(cls, path: str | Path) -> LinkLearner:
        meta, arrays = load_model(path, FORMAT, "a crawl with JOBDIR")
        learner = cls(meta["rate"], meta["batch"], meta["strength"])
        learner.relevance.weights, learner.relevance.squares = arrays["relevance_weights"], arrays["relevance_squares"]
        learner.alive.weights, learner.alive.squares = arrays["alive_weights"], arrays["alive_squares"]
        learner.learned, learner.dead_ends = meta["learned"], meta["dead_ends"]
        (learner.relevance.loss_without, learner.relevance.loss_with,
         learner.alive.loss_without, learner.alive.loss_with) = meta["losses"]
        history = learner.history
        history.pages, history.relevance, history.dead, history.priors = meta["history"]
        for cell, counts in zip(arrays["cells"].tolist(), arrays["counts"].tolist(), strict=True):
            learner.history.cells[int(cell)] = list(counts)
        return learner

