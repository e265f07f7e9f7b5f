"""Online learning for the focused crawler: the classifier keeps learning
from the crawl's own confidently classified pages.

Every *every* pages, the pages classified since the last round whose best
leaf has probability ≥ *confidence* are added to the naive Bayes counts
with that leaf as their label (self-training, as ACHE's online learning
does), and every page crawled so far is classified again with the new
model, in one batch, so the strategy can re-score the URLs still queued.

The crawled pages' feature rows are kept for that, in memory: about 12
bytes per distinct term per page.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

if TYPE_CHECKING:
    from crawlproject.classify.model import TaxonomyClassifier

logger = logging.getLogger(__name__)


class OnlineLearner:
    def __init__(self, model: TaxonomyClassifier, every: int, confidence: float):
        self.model = model
        self.every = every
        self.confidence = confidence
        self.urls: list[str] = []
        self._rows: list[sp.csr_matrix] = []
        self._confident: list[tuple[int, str]] = []  # (row, leaf category) not learned yet
        self._since_round = 0
        self.rounds = 0
        self.learned = 0

    def add(self, url: str, features: sp.csr_matrix, leaf: int, confidence: float) -> None:
        self.urls.append(url)
        self._rows.append(features)
        if confidence >= self.confidence:
            self._confident.append((len(self._rows) - 1, self.model.taxonomy.paths[leaf]))
        self._since_round += 1

    @property
    def due(self) -> bool:
        return self._since_round >= self.every

    def learn(self) -> np.ndarray | None:
        """Learn from the confident pages; Pr(node|page) of every crawled page
        under the new model (rows in ``self.urls`` order), or ``None`` when
        there was nothing confident to learn from."""
        self._since_round = 0
        self.rounds += 1
        if not self._confident:
            return None
        rows, categories = zip(*self._confident, strict=True)
        self._confident = []
        self.model.learn(sp.vstack([self._rows[r] for r in rows], format="csr"), categories)
        self.learned += len(rows)
        logger.info(
            "Online learning: learned from %(new)d confident pages (%(total)d so far); "
            "re-classifying %(pages)d crawled pages",
            {"new": len(rows), "total": self.learned, "pages": len(self._rows)},
        )
        return self.model.proba(sp.vstack(self._rows, format="csr"))
