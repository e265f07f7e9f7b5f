"""Online learning for the focused crawler: the classifier keeps learning
from the crawl's own confidently classified pages.

Every *every* pages, the pages classified since the last round whose best
leaf has probability ≥ *confidence* are added to the naive Bayes counts
with that leaf as their label (self-training, as ACHE's online learning
does): O(new pages). Pages fetched after that are classified by the new
model as they arrive.

What the new model thinks of pages crawled *before* it — the parents of the
URLs still queued — needs every crawled page classified again. That is
O(pages crawled), so it is amortised: it happens only when the model changed
and at least ``rescore_ratio`` × the pages crawled so far were crawled since
the last time (and at least *every*), which keeps the total work linear in
the length of the crawl.

The crawled pages' feature rows are kept for that, in memory: about 12
bytes per distinct term per page.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

if TYPE_CHECKING:
    from crawlproject.models.taxonomy_classifier import TaxonomyClassifier

logger = logging.getLogger(__name__)


class OnlineLearner:
    def __init__(
        self, model: TaxonomyClassifier, every: int, confidence: float, rescore_ratio: float = 0.5
    ):
        self.model = model
        self.every = every
        self.confidence = confidence
        self.rescore_ratio = rescore_ratio
        self.urls: list[str] = []
        self.rows: list[sp.csr_matrix] = []
        self._confident: list[tuple[int, str]] = []  # (row, leaf category) not learned yet
        self._since_round = 0
        self._since_reclassify = 0
        self._model_changed = False
        self.rounds = 0
        self.learned = 0
        self.reclassified = 0

    def add(self, url: str, features: sp.csr_matrix, leaf: int, confidence: float) -> None:
        self.urls.append(url)
        self.rows.append(features)
        if confidence >= self.confidence:
            self._confident.append((len(self.rows) - 1, self.model.taxonomy.paths[leaf]))
        self._since_round += 1
        self._since_reclassify += 1

    @property
    def due(self) -> bool:
        return self._since_round >= self.every

    def learn(self) -> bool:
        """Learn from the confident pages since the last round; return
        whether the model changed."""
        self._since_round = 0
        self.rounds += 1
        if not self._confident:
            return False
        rows, categories = zip(*self._confident, strict=True)
        self._confident = []
        self.model.learn(sp.vstack([self.rows[r] for r in rows], format="csr"), categories)
        self.learned += len(rows)
        self._model_changed = True
        logger.debug("Online learning: learned from %d confident pages (%d so far)", len(rows), self.learned)
        return True

    @property
    def reclassify_due(self) -> bool:
        return self._model_changed and self._since_reclassify >= max(
            self.every, self.rescore_ratio * len(self.rows)
        )

    def reclassify(self) -> np.ndarray:
        """Pr(node|page) of every crawled page under the current model (rows
        in ``self.urls`` order)."""
        self._since_reclassify = 0
        self._model_changed = False
        self.reclassified += len(self.rows)
        logger.info(
            "Online learning: %(learned)d pages learned from so far; re-classifying the %(pages)d "
            "crawled pages to re-score the frontier",
            {"learned": self.learned, "pages": len(self.rows)},
        )
        return self.model.proba(sp.vstack(self.rows, format="csr"))
