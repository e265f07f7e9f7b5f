"""Repository quality as users see it (docs/methods.md §5).

S(p, q) is the TF-IDF cosine between page p and query q (IDF over every
version of every page, so one scale for the whole simulation). A query's
answer A(q, W) ranks the pages with S > 0; a result at rank r is seen with
likelihood I(r) = c·r^(−3/2). Then

    Q(W_L) = Σ_q f_q Σ_{p ∈ A(q, W_L)} I(rank of p in A(q, W_L)) · S(W[p], q)
             ─────────────────────────────────────────────────────────────
             Σ_q f_q Σ_{p ∈ A(q, W)}   I(rank of p in A(q, W))   · S(W[p], q)

ranks come from the repository's copies W_L, relevance from the live pages
W — 0 for a live page outside the query's live answer (a stale copy still
answers a query whose term the live page lost: the user finds nothing); c
cancels, and Q = 1 exactly when the repository ranks as the live web would.
Only the first ``top`` ranks of each answer are summed (I(100) is 0.1 % of I(1)).

A(q, W) holds the pages that hold **all** of q's terms, as the paper's
engine answers (a conjunctive query); ``answers="any"`` keeps any page with
one of them (S > 0), for comparison (any-term answers let a
refreshed page reorder stale pages that hold one common term).

What one refresh gains, as the user-centric policy measures it, is
crawlproject.refresh.gain.
"""

from __future__ import annotations

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


ANSWERS = ("all", "any")


class QualityMeter:
    """Q(W_L) for one workload over a :class:`VersionIndex`; a query's
    answer holds the pages with all its terms (*answers* "all") or any."""

    def __init__(self, index: VersionIndex, workload: Sequence[Query], top: int = TOP_RANKS, answers: str = "all",
                 static: np.ndarray | None = None):
        """*static*, per version id (its last entry, :attr:`VersionIndex.absent`,
        0): the paper's in-link variant — S(p, q) = static[p] for every page
        in q's answer, in place of the TF-IDF cosine."""
        if answers not in ANSWERS:
            raise ValueError(f"answers={answers!r}: one of {', '.join(ANSWERS)}")
        self.index = index
        self.query_matrix = index.queries([q.text for q in workload]).T.tocsc()
        self.frequencies = np.array([q.frequency for q in workload])
        self.top = top
        self.answers = answers
        self.static = static
        #: per query, the index terms it holds (terms × queries, 0/1), and how many distinct terms it has
        #: (a term the index never saw counts: no page holds it)
        self.query_terms = (self.query_matrix > 0).astype(np.int32).tocsc()
        self.needed = np.array([len(set(index.analyzer.terms(q.text))) for q in workload])

    def answered(self, version_ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """Whether each page (rows) is in each query's answer (columns)."""
        return self._by_query(version_ids)[1].T

    def scores(self, version_ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """S(p, q) for every page (rows) and query (columns)."""
        return np.asarray((self.index.rows(version_ids) @ self.query_matrix).todense())

    def quality(self, repository: Sequence[int] | np.ndarray, live: Sequence[int] | np.ndarray,
                best: float | None = None) -> float:
        """Q of the repository's copies against the live versions (same page
        order); *best*, the denominator, when the caller already has it
        (:meth:`best`: it depends on the live web only)."""
        live_scores, live_answers = self._live(live)
        seen = float(self.frequencies @ self._seen_relevance(*self._by_query(repository), live_scores))
        if best is None:
            best = float(self.frequencies @ self._seen_relevance(live_scores, live_answers, live_scores))
        return seen / best if best > 0 else 1.0

    def best(self, live: Sequence[int] | np.ndarray) -> float:
        """The denominator of Q: the live web ranked by itself."""
        live_scores, live_answers = self._live(live)
        return float(self.frequencies @ self._seen_relevance(live_scores, live_answers, live_scores))

    def per_query(
        self, repository: Sequence[int] | np.ndarray, live: Sequence[int] | np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per query: what the repository's answer shows users, and what the live web's would."""
        live_scores, live_answers = self._live(live)
        return (self._seen_relevance(*self._by_query(repository), live_scores),
                self._seen_relevance(live_scores, live_answers, live_scores))

    def _live(self, live: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The live pages' relevance S(W[p], q), 0 where p is not in q's live answer, and that answer."""
        scores, answers = self._by_query(live)
        return np.where(answers, scores, 0.0), answers

    def _by_query(self, version_ids: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """S(p, q) with a row per query (each query's answer contiguous in
        memory), and whether p is in q's answer — from the same rows."""
        rows = self.index.rows(version_ids)
        scores = np.asarray((self.query_matrix.T @ rows.T).todense())
        if self.answers == "any":
            answers = scores > 0
        else:
            held = np.asarray((self.query_terms.T @ (rows > 0).astype(np.int32).T).todense())
            answers = (held >= self.needed[:, None]) & (self.needed[:, None] > 0)
        if self.static is not None:
            scores = np.where(answers, self.static[np.asarray(version_ids)][None, :], 0.0)
        return scores, answers

    def _seen_relevance(self, rank_by: np.ndarray, in_answer: np.ndarray, relevance: np.ndarray) -> np.ndarray:
        """Per query (row): Σ over its answer's first ranks of I(rank) ·
        relevance; *in_answer* is what the ranked versions hold (a stale
        copy answers with its old terms)."""
        rank_by = np.where(in_answer, rank_by, 0.0)  # a page outside the answer ranks nowhere
        pages = rank_by.shape[1]
        depth = min(self.top, pages)
        candidates = np.argpartition(-rank_by, depth - 1, axis=1)[:, :depth]
        order = np.argsort(-np.take_along_axis(rank_by, candidates, axis=1), axis=1, kind="stable")
        ranked = np.take_along_axis(candidates, order, axis=1)
        answered = np.take_along_axis(in_answer, ranked, axis=1)  # A(q) holds its matching pages only
        weights = impression(np.arange(1, depth + 1, dtype=float))[None, :]
        return np.asarray((weights * np.take_along_axis(relevance, ranked, axis=1) * answered).sum(axis=1))


def exposure(meter: QualityMeter, version_ids: Sequence[int] | np.ndarray) -> np.ndarray:
    """How often each page is shown in results: Σ_q f_q · I(rank of p in A(q)) (EBR's weight)."""
    by_query, in_answer = meter._by_query(version_ids)
    scores = np.where(in_answer, by_query, 0.0).T  # a row per page
    depth = min(meter.top, scores.shape[0])
    top = np.argsort(-scores, axis=0)[:depth]
    weights = impression(np.arange(1, depth + 1, dtype=float))
    seen = np.zeros(scores.shape[0])
    for column in range(scores.shape[1]):
        ranked = top[:, column]
        matching = scores[ranked, column] > 0
        seen[ranked[matching]] += meter.frequencies[column] * weights[matching]
    return seen
