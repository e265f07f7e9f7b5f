"""What one refresh gains, as the user-centric policy measures it (docs/methods.md §5).

The gain of one refresh is estimated without re-running the workload, from
single-term queries: a query of several terms counts as one query per term,
each as frequent as it (the paper's §5.1.1). With F_w a piecewise-linear map from score to
rank in log–log space (three pieces, fitted to the repository's scores for
w), the refresh moves p from rank F_w(S_old) to F_w(S_new). p's own term of
Q changes by (I(F_w(S_new)) − I(F_w(S_old))) · S_new; the pages it passes (or
that pass it) sit near the slot it leaves, whose score is S_old by the
definition of F_w, and change by about −(I(F_w(S_new)) − I(F_w(S_old))) · S_old.
So

    ΔQ(p) = Σ_w f_w · (I(F_w(S_new)) − I(F_w(S_old))) · (S_new − S_old) ≥ 0

over the terms w of the old or the new version: a page that gained a term
rises to where it belongs, one that lost it stops taking a better page's
place — both gains, as users see them.

The scores behind F_w live in a term → score index kept beside the search
collection (:class:`TermScoreIndex`): indexing a refreshed page updates its
postings and marks the terms whose scores moved, and the weekly refit
refits F_w for those terms only. A cosine row is normalised over the page's
own terms, so a new version of p changes S(p, ·) and nothing else: the maps
of the other terms are exactly what a full refit would give. That is how the
measurement piggybacks on index maintenance (the paper's 7–8 %).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Hashable, Iterable, Mapping, Sequence

    from scipy import sparse

    from crawlproject.refresh.quality import VersionIndex
    from crawlproject.refresh.workload import Query

PIECES = 3  #: pieces of F_w (docs/methods.md §5: three were enough)


@dataclass
class ScoreRankMap:
    """F_q: score → rank, piecewise linear in log–log space."""

    pieces: list[tuple[float, float, float]]  #: (lowest log score of the piece, a, b): log r = a + b·log s
    pages: int

    @classmethod
    def fit(cls, scores: np.ndarray, pieces: int = PIECES) -> ScoreRankMap:
        """Fit to the positive *scores* of one query's answer: pieces of equal
        width in log rank (the head, the middle and the tail of the answer),
        each a least-squares line of log rank on log score."""
        return cls.fit_sorted(np.sort(scores[scores > 0])[::-1], pieces)

    @classmethod
    def fit_sorted(cls, ordered: np.ndarray, pieces: int = PIECES) -> ScoreRankMap:
        """:meth:`fit` to positive scores already sorted, highest first."""
        count = ordered.size
        if count == 0:
            return cls([], 0)
        log_rank = np.log(np.arange(1, count + 1, dtype=float))
        log_score = np.log(ordered)
        edges = np.linspace(0.0, log_rank[-1], pieces + 1)
        bounds = [0, *np.searchsorted(log_rank, edges[1:-1], side="left").tolist(), count]
        # Sums over any run of ranks from four cumulative sums: one pass however many pieces.
        sums = np.zeros((4, count + 1))
        np.cumsum(log_score, out=sums[0, 1:])
        np.cumsum(log_rank, out=sums[1, 1:])
        np.cumsum(log_score * log_score, out=sums[2, 1:])
        np.cumsum(log_score * log_rank, out=sums[3, 1:])
        fitted = []
        for first, end in itertools.pairwise(bounds):
            size = end - first
            if size <= 0:
                continue
            sx, sy, sxx, sxy = (sums[:, end] - sums[:, first]).tolist()
            variance, covariance = sxx - sx * sx / size, sxy - sx * sy / size
            if size < 2 or variance <= 1e-12 * max(sxx, 1.0):
                slope, intercept = 0.0, sy / size
            else:
                slope = covariance / variance
                intercept = (sy - slope * sx) / size
            fitted.append((float(log_score[end - 1]), intercept, slope))
        return cls(fitted, int(count))

    def __call__(self, score: float) -> float:
        """The rank a page with *score* would get (∞: not in the answer)."""
        if score <= 0:
            return math.inf
        if not self.pieces:
            return 1.0
        log_score = math.log(score)
        # The first piece (pieces run from the top scores down) that reaches this score; below all, the tail's.
        _, intercept, slope = next((piece for piece in self.pieces if log_score >= piece[0]), self.pieces[-1])
        rank = math.exp(intercept + slope * log_score)
        return min(max(rank, 1.0), self.pages + 1.0)


class TermScoreIndex:
    """Scores S(p, w) > 0 per query-term column w, and F_w fitted to each."""

    def __init__(self, columns: Iterable[int], pieces: int = PIECES):
        #: each term's scores over the pages, kept sorted (lowest first) as pages come and go: a refit needs no sort
        self.ordered: dict[int, np.ndarray] = {int(column): np.empty(0) for column in columns}
        self.maps: dict[int, ScoreRankMap] = {column: ScoreRankMap([], 0) for column in self.ordered}
        self.pieces = pieces
        self.dirty: set[int] = set()  #: terms whose scores moved since the last refit
        self._pages: dict[Hashable, dict[int, float]] = {}  #: page → its query-term scores (what put undoes)

    def __len__(self) -> int:
        return len(self._pages)

    def scores(self, page: Hashable) -> dict[int, float]:
        """S(page, w) > 0 of the page's indexed copy, per query term."""
        return self._pages.get(page, {})

    def query_scores(self, row: sparse.csr_matrix | None) -> dict[int, float]:
        """The query terms' scores in a TF-IDF row."""
        if row is None:
            return {}
        terms = self.ordered
        return {column: value for column, value in zip(row.indices.tolist(), row.data.tolist(), strict=True)
                if column in terms and value > 0}

    def put(self, page: Hashable, after: dict[int, float]) -> set[int]:
        """Index *page*'s new copy by its query-term scores (:meth:`query_scores`;
        empty: the page is gone). Returns the terms whose scores moved,
        refitted at the next :meth:`refit`."""
        before = self._pages.pop(page, {})
        moved = {column for column in before.keys() | after.keys() if before.get(column) != after.get(column)}
        for column in moved:
            ordered = self.ordered[column]
            if column in before:
                ordered = np.delete(ordered, np.searchsorted(ordered, before[column]))
            if column in after:
                ordered = np.insert(ordered, np.searchsorted(ordered, after[column]), after[column])
            self.ordered[column] = ordered
        if after:
            self._pages[page] = after
        self.dirty |= moved
        return moved

    def refit(self) -> int:
        """Refit F_w of the terms whose scores moved; returns how many."""
        dirty, self.dirty = self.dirty, set()
        for column in dirty:
            self.maps[column] = ScoreRankMap.fit_sorted(self.ordered[column][::-1], self.pieces)
        return len(dirty)


class GainMeter:
    """ΔQ of refreshing a page, from its old and new versions' rows, with
    F_w fitted to the repository: all at once (:meth:`fit`), or kept up to
    date as pages are indexed (:meth:`track`, :meth:`refresh`, :meth:`refit`)."""

    def __init__(self, index: VersionIndex, workload: Sequence[Query], static: np.ndarray | None = None):
        """*static*: the paper's in-link variant — S(p, w) = static[p] for a
        page holding w (p: the keys :meth:`track` and :meth:`refresh` use),
        in place of the TF-IDF cosine."""
        self.index = index
        self.static = static
        columns = index.vectorizer.vocabulary_
        self.frequency: dict[int, float] = {}
        for query in workload:
            for term in set(index.analyzer.terms(query.text)) & columns.keys():
                column = int(columns[term])
                self.frequency[column] = self.frequency.get(column, 0.0) + query.frequency
        self.terms = TermScoreIndex(self.frequency)

    @property
    def maps(self) -> dict[int, ScoreRankMap]:
        """F_w per term column: the term index's, whichever way they were fitted."""
        return self.terms.maps

    def fit(self, repository: Sequence[int] | np.ndarray) -> None:
        """Refit every F_w to the repository's versions (a full refit)."""
        chosen = np.array(sorted(self.frequency), dtype=int)
        if chosen.size == 0:
            return
        columns = self.index.rows(repository)[:, chosen].tocsc()
        for position, column in enumerate(chosen):
            values = columns.data[columns.indptr[position] : columns.indptr[position + 1]]
            self.maps[int(column)] = ScoreRankMap.fit(values)

    def track(self, repository: Sequence[int] | np.ndarray) -> None:
        """Start the term → score index from the repository's versions (page
        keys: positions in *repository*) and fit every F_w."""
        self.terms = TermScoreIndex(self.frequency)
        for page, version in enumerate(np.asarray(repository).tolist()):
            self.terms.put(page, self._scores(page, self.index.matrix[version]))
        self.terms.refit()

    def _scores(self, page: Hashable, row: sparse.csr_matrix | None) -> dict[int, float]:
        scores = self.terms.query_scores(row)
        if self.static is None:
            return scores
        value = float(self.static[page]) if isinstance(page, int) else 0.0  # static scores are keyed by position
        return {column: value for column in scores} if value > 0 else {}

    def refresh(self, page: Hashable, row: sparse.csr_matrix | None) -> float:
        """ΔQ of replacing *page*'s indexed copy by *row* (None: gone), then
        the new copy indexed: one pass over the page's query terms."""
        after = self._scores(page, row)
        gain = self._gain(self.terms.scores(page), after)
        self.terms.put(page, after)
        return gain

    def refit(self) -> int:
        """Refit the F_w whose scores moved since the last refit (incremental)."""
        return self.terms.refit()

    def gain(self, old_version: int, new_version: int, siblings: float | Mapping[int, float] = 1.0) -> float:
        return self.gain_rows(self.index.matrix[old_version], self.index.matrix[new_version], siblings)

    def gain_rows(self, old: sparse.csr_matrix, new: sparse.csr_matrix,
                  siblings: float | Mapping[int, float] = 1.0) -> float:
        """ΔQ between two TF-IDF rows (a version not in the index: ``index.vectorizer.transform``)."""
        return self._gain(dict(zip(old.indices.tolist(), old.data.tolist(), strict=True)),
                          dict(zip(new.indices.tolist(), new.data.tolist(), strict=True)), siblings)

    def _gain(self, old_scores: dict[int, float], new_scores: dict[int, float],
              siblings: float | Mapping[int, float] = 1.0) -> float:
        """Σ_w f_w · ΔI_w · (S_new − κ·S_old), κ = *siblings*: the live
        relevance of the pages p passes, as a share of their copies' score
        S_old. κ = 1 (the estimate the policy uses) takes them as fresh and
        the gain is ≥ 0; κ < 1 — stale siblings whose copies overstate them —
        makes a refresh that lets them rise (p's score falls above κ·S_old)
        a loss (bench.refresh_single measures whether it picks
        better); one κ, or one per term column."""
        total = 0.0
        for column in (old_scores.keys() | new_scores.keys()) & self.frequency.keys():
            rank_map = self.maps[column]
            now = new_scores.get(column, 0.0)
            before = old_scores.get(column, 0.0)
            seen_now = rank_map(now) ** -1.5 if now > 0 else 0.0
            seen_before = rank_map(before) ** -1.5 if before > 0 else 0.0
            share = siblings if isinstance(siblings, float | int) else siblings.get(column, 1.0)
            total += self.frequency[column] * (seen_now - seen_before) * (now - share * before)
        return total
