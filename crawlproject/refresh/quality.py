"""Repository quality as users see it (SPEC §5), and what a refresh gains.

S(p, q) is the TF-IDF cosine between page p and query q (IDF over every
version of every page, so one scale for the whole simulation). A query's
answer A(q, W) ranks the pages with S > 0; a result at rank r is seen with
likelihood I(r) = c·r^(−3/2). Then

    Q(W_L) = Σ_q f_q Σ_{p ∈ A(q, W_L)} I(rank of p in A(q, W_L)) · S(W[p], q)
             ─────────────────────────────────────────────────────────────
             Σ_q f_q Σ_{p ∈ A(q, W)}   I(rank of p in A(q, W))   · S(W[p], q)

ranks come from the repository's copies W_L, relevance from the live pages
W; c cancels, and Q = 1 exactly when the repository ranks as the live web
would. Only the first ``top`` ranks of each answer are summed (I(100) is
0.1 % of I(1)).

The user-centric policy estimates the gain of one refresh without
re-running the workload, from single-term queries w only (SPEC §5): with F_w
a piecewise-linear map from score to rank in log–log space (three pieces,
fitted to the repository's scores for w), the refresh moves p from rank
F_w(S_old) to F_w(S_new). p's own term of Q changes by
(I(F_w(S_new)) − I(F_w(S_old))) · S_new; the pages it passes (or that pass
it) sit near the slot it leaves, whose score is S_old by the definition of
F_w, and change by about −(I(F_w(S_new)) − I(F_w(S_old))) · S_old. So

    ΔQ(p) = Σ_w f_w · (I(F_w(S_new)) − I(F_w(S_old))) · (S_new − S_old) ≥ 0

over the terms w of the old or the new version: a page that gained a term
rises to where it belongs, one that lost it stops taking a better page's
place — both gains, as users see them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer

if TYPE_CHECKING:
    from collections.abc import Sequence

    from crawlproject.refresh.workload import Query
    from crawlproject.web.text import TermAnalyzer

TOP_RANKS = 100


def impression(rank: np.ndarray) -> np.ndarray:
    """I(r) = r^(−3/2), c = 1 (it cancels in Q)."""
    return np.asarray(np.power(rank, -1.5), dtype=float)


class VersionIndex:
    """TF-IDF rows (L2-normalised) of texts, one per version; the row
    :attr:`absent` (all zeros) stands for "no page"."""

    def __init__(self, texts: Sequence[str], analyzer: TermAnalyzer):
        self.vectorizer = TfidfVectorizer(analyzer=analyzer.terms)
        rows = self.vectorizer.fit_transform(texts)
        self.matrix = sparse.vstack([rows, sparse.csr_matrix((1, rows.shape[1]))]).tocsr()
        self.absent = rows.shape[0]
        self.analyzer = analyzer

    def queries(self, texts: Sequence[str]) -> sparse.csr_matrix:
        return self.vectorizer.transform(texts)

    def rows(self, version_ids: Sequence[int] | np.ndarray) -> sparse.csr_matrix:
        return self.matrix[np.asarray(version_ids)]


class QualityMeter:
    """Q(W_L) for one workload over a :class:`VersionIndex`."""

    def __init__(self, index: VersionIndex, workload: Sequence[Query], top: int = TOP_RANKS):
        self.index = index
        self.query_matrix = index.queries([q.text for q in workload]).T.tocsc()
        self.frequencies = np.array([q.frequency for q in workload])
        self.top = top

    def scores(self, version_ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """S(p, q) for every page (rows) and query (columns)."""
        return np.asarray((self.index.rows(version_ids) @ self.query_matrix).todense())

    def quality(self, repository: Sequence[int] | np.ndarray, live: Sequence[int] | np.ndarray) -> float:
        """Q of the repository's copies against the live versions (same page order)."""
        repository_scores, live_scores = self.scores(repository), self.scores(live)
        seen = self.frequencies @ self._seen_relevance(repository_scores, live_scores)
        best = self.frequencies @ self._seen_relevance(live_scores, live_scores)
        return float(seen / best) if best > 0 else 1.0

    def _seen_relevance(self, rank_by: np.ndarray, relevance: np.ndarray) -> np.ndarray:
        """Per query: Σ over its answer's first ranks of I(rank) · relevance."""
        pages = rank_by.shape[0]
        depth = min(self.top, pages)
        candidates = np.argpartition(-rank_by, depth - 1, axis=0)[:depth]
        order = np.argsort(-np.take_along_axis(rank_by, candidates, axis=0), axis=0, kind="stable")
        ranked = np.take_along_axis(candidates, order, axis=0)
        answered = np.take_along_axis(rank_by, ranked, axis=0) > 0  # A(q) holds matching pages only
        weights = impression(np.arange(1, depth + 1, dtype=float))[:, None]
        return np.asarray((weights * np.take_along_axis(relevance, ranked, axis=0) * answered).sum(axis=0))


def exposure(meter: QualityMeter, version_ids: Sequence[int] | np.ndarray) -> np.ndarray:
    """How often each page is shown in results: Σ_q f_q · I(rank of p in A(q)) (EBR's weight)."""
    scores = meter.scores(version_ids)
    depth = min(meter.top, scores.shape[0])
    top = np.argsort(-scores, axis=0)[:depth]
    weights = impression(np.arange(1, depth + 1, dtype=float))
    seen = np.zeros(scores.shape[0])
    for column in range(scores.shape[1]):
        ranked = top[:, column]
        matching = scores[ranked, column] > 0
        seen[ranked[matching]] += meter.frequencies[column] * weights[matching]
    return seen


@dataclass
class ScoreRankMap:
    """F_q: score → rank, piecewise linear in log–log space."""

    pieces: list[tuple[float, float, float]]  #: (lowest log score of the piece, a, b): log r = a + b·log s
    pages: int

    @classmethod
    def fit(cls, scores: np.ndarray, pieces: int = 3) -> ScoreRankMap:
        """Fit to the positive *scores* of one query's answer."""
        ordered = np.sort(scores[scores > 0])[::-1]
        if ordered.size == 0:
            return cls([], 0)
        log_rank = np.log(np.arange(1, ordered.size + 1, dtype=float))
        log_score = np.log(ordered)
        # Pieces of equal width in log rank: the head, the middle and the tail of the answer.
        edges = np.linspace(0.0, log_rank[-1], pieces + 1)
        fitted = []
        for number in range(pieces):
            last = number == pieces - 1
            inside = (log_rank >= edges[number]) & ((log_rank <= edges[number + 1]) if last else (log_rank < edges[number + 1]))
            if not inside.any():
                continue
            x, y = log_score[inside], log_rank[inside]
            if x.size < 2 or np.ptp(x) == 0:
                slope, intercept = 0.0, float(y.mean())
            else:
                slope, intercept = (float(v) for v in np.polyfit(x, y, 1))
            fitted.append((float(x.min()), intercept, slope))
        return cls(fitted, int(ordered.size))

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


class GainMeter:
    """ΔQ of refreshing a page, from its old and new versions' rows, with
    F_w fitted to the repository (refitted by :meth:`fit`, e.g. weekly)."""

    def __init__(self, index: VersionIndex, workload: Sequence[Query]):
        self.index = index
        columns = index.vectorizer.vocabulary_
        self.frequency: dict[int, float] = {}
        for query in workload:
            terms = set(index.analyzer.terms(query.text))
            if len(terms) == 1 and (term := terms.pop()) in columns:
                column = int(columns[term])
                self.frequency[column] = self.frequency.get(column, 0.0) + query.frequency
        self.maps: dict[int, ScoreRankMap] = {}

    def fit(self, repository: Sequence[int] | np.ndarray) -> None:
        chosen = np.array(sorted(self.frequency), dtype=int)
        if chosen.size == 0:
            return
        columns = self.index.rows(repository)[:, chosen].tocsc()
        for position, column in enumerate(chosen):
            values = columns.data[columns.indptr[position] : columns.indptr[position + 1]]
            self.maps[int(column)] = ScoreRankMap.fit(values)

    def gain(self, old_version: int, new_version: int) -> float:
        return self.gain_rows(self.index.matrix[old_version], self.index.matrix[new_version])

    def gain_rows(self, old: sparse.csr_matrix, new: sparse.csr_matrix) -> float:
        """ΔQ between two TF-IDF rows (a version not in the index: ``index.vectorizer.transform``)."""
        old_scores = dict(zip(old.indices.tolist(), old.data.tolist(), strict=True))
        new_scores = dict(zip(new.indices.tolist(), new.data.tolist(), strict=True))
        total = 0.0
        for column in (old_scores.keys() | new_scores.keys()) & self.frequency.keys():
            rank_map = self.maps.get(column) or ScoreRankMap([], 0)
            now = new_scores.get(column, 0.0)
            before = old_scores.get(column, 0.0)
            seen_now = rank_map(now) ** -1.5 if now > 0 else 0.0
            seen_before = rank_map(before) ** -1.5 if before > 0 else 0.0
            total += self.frequency[column] * (seen_now - seen_before) * (now - before)
        return total
