"""An online link learner: what a link is worth, learnt during the crawl from
the crawl's own verdicts, as ACHE's online link classifier and
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

import struct
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np
from scipy import sparse

from crawlproject.models.link_features import HISTORY_LEVELS, N_HASHED, LinkFeatures, LinkFeaturizer
from crawlproject.models.modelfile import load_model, save_model
from crawlproject.models.path_history import PathHistory

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from pathlib import Path

FORMAT = "crawlproject/link-learner/2"  # 2: groups keep what was expected of their pages
N_FEATURES = N_HASHED + 1  # and a bias
#: A correction is fully trusted once its recent loss is this share below the
#: offsets' alone (fixed before any measurement).
EARNED = 0.01
#: How much of the past a correction's track record keeps per mini-batch.
LOSS_MEMORY = 0.98
_BIAS = N_HASHED


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

