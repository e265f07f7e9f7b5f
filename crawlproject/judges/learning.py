"""A judge the user's labels teach (the dashboard's "relevant / not"),
which asks about the pages whose labels would teach it most.

Until the user has labelled a relevant and an irrelevant page it answers as
the judge it wraps (the query's, a model's). From then on its relevance is
a logistic regression over the page's terms (hashed, log-scaled counts, rows
L2-normalised) and the wrapped judge's own relevance, fitted on the
labelled pages with both kinds weighing alike; it calls relevant at 0.5. Its
probabilities are not moved to the share of relevant pages the crawl meets,
as a model's are: fitted on the pages its own questions chose, they are no
probabilities of a page drawn from the crawl, and EM moved them so far that
it called no page relevant on most topics (bench.judges, query+20 labels:
median recall 0.64 → 0). The labels of pages it called relevant measure
its precision.

**Active learning** (uncertainty sampling, Lewis & Gale 1994): the pages
it asks about are the fetched, unlabelled pages whose probability is
nearest 0.5 — those whose label moves the model most. Before both kinds
of label exist, it asks about the pages the wrapped judge ranks highest
and those around its median, alternately, so that the first few answers
hold both kinds.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from crawlproject.judges.base import PageJudge, PrecisionEstimate

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from scipy.sparse import csr_matrix
    from sklearn.feature_extraction.text import HashingVectorizer
    from sklearn.linear_model import LogisticRegression

    from crawlproject.web.page import Page
    from crawlproject.web.text import TermAnalyzer

#: Weight of the wrapped judge's relevance beside the page's terms (a
#: unit-norm row): one column worth as much as the whole text.
PRIOR_WEIGHT = 1.0
#: The questions come from the most recent fetched pages, this many at most.
ASKED_AMONG = 1000


class LabelTaughtJudge(PageJudge):
    name: ClassVar[str] = "labels"

    def __init__(self, base: PageJudge, analyzer: TermAnalyzer, remembered: int = 5000):
        super().__init__()
        self.base = base
        self.name = f"{base.name}+labels"  # type: ignore[misc]
        self.threshold = base.threshold
        self.batches = base.batches  # the wrapped judge's, for the spider's micro-batcher
        self.analyzer = analyzer
        self._vectorizer: HashingVectorizer | None = None
        #: recent fetched pages: key → (text, the wrapped judge's relevance); vectorised only when asked
        self.pages: OrderedDict[str, tuple[str, float]] = OrderedDict()
        self.remembered = remembered
        self.labels: dict[str, tuple[csr_matrix, bool]] = {}
        self.model: LogisticRegression | None = None
        self.word = base.word  # one word: the wrapped judge's examples and the labels given to either

    # -- the port -----------------------------------------------------------------------

    def prepare(self, pages: Sequence[Page]) -> None:
        self.base.prepare(pages)

    def prepare_failed(self, page: Page) -> None:
        self.base.prepare_failed(page)

    @property
    def vectorizer(self) -> HashingVectorizer:
        """Made at the first label: scikit-learn takes a second to import,
        and most crawls are never labelled."""
        if self._vectorizer is None:
            from sklearn.feature_extraction.text import HashingVectorizer

            self._vectorizer = HashingVectorizer(
                analyzer=self.analyzer.terms, n_features=2**18, alternate_sign=False, norm=None, dtype=np.float32,
            )
        return self._vectorizer

    def _features(self, pages: list[tuple[str, float]]) -> csr_matrix:
        # imported here: scipy.sparse costs every crawl 0.2 s to import
        from scipy.sparse import csr_matrix, hstack
        from sklearn.preprocessing import normalize

        text = self.vectorizer.transform([text for text, _ in pages])
        text.data = np.log1p(text.data)  # sublinear: a term said ten times is not ten times the evidence
        text = normalize(text, norm="l2", copy=False)
        base = csr_matrix(np.array([[PRIOR_WEIGHT * relevance] for _, relevance in pages]))
        return hstack([text, base]).tocsr()

    def score(self, page: Page) -> float:
        base = self.base.relevance(page)
        self.pages[page.key] = (page.text, base)
        if len(self.pages) > self.remembered:
            self.pages.popitem(last=False)
        if self.model is None:
            return base
        return float(self.model.predict_proba(self._features([(page.text, base)]))[0, 1])

    def probability(self, relevance: float) -> float | None:
        return relevance if self.model is not None else self.base.probability(relevance)

    def calls(self, relevance: float) -> bool:
        return relevance >= self.threshold if self.model is not None else self.base.calls(relevance)

    def threshold_in_force(self) -> float | None:
        return self.threshold if self.model is not None else self.base.threshold_in_force()

    def settle(self, relevances: Iterable[float]) -> bool:
        """Its verdicts are the wrapped judge's until labels taught it: so is
        settling them. Once taught, the history's relevances were made by
        several models (one per label): its calls stay as made."""
        if self.model is None:
            settled = self.base.settle(relevances)
            self.tally = self.base.tally  # its count is the wrapped judge's
            return settled
        return False

    def precision(self) -> PrecisionEstimate | None:
        """The wrapped judge's estimate until labels have taught this one
        (the user's labels reach it too), then this judge's own."""
        return super().precision() if self.model is not None else self.base.precision()

    def label(self, key: str, relevant: bool) -> dict[str, Any]:
        said = super().label(key, relevant)
        self.base.label(key, relevant)
        page = self.pages.get(key)
        if page is None:
            return {**said, "why": "the judge no longer remembers this page's text"}
        self.labels[key] = (self._features([page]), relevant)
        kinds = {relevant for _, relevant in self.labels.values()}
        if len(kinds) < 2:
            return {**said, "learnt": False, "why": "the judge learns once both kinds of page are labelled"}
        from scipy.sparse import vstack

        rows = vstack([row for row, _ in self.labels.values()])
        answers = np.array([relevant for _, relevant in self.labels.values()])
        from sklearn.linear_model import LogisticRegression

        model = LogisticRegression(C=1.0, max_iter=1000, class_weight="balanced")
        model.fit(rows, answers)
        self.model = model
        return {**said, "learnt": True, "labels": len(self.labels)}

    def current(self, keys: list[str]) -> list[float | None]:
        """The judge's relevance now of remembered fetched pages (None for a
        page it no longer remembers): what its labels changed."""
        known = [key for key in keys if key in self.pages]
        if not known:
            return [None] * len(keys)
        if self.model is None:
            now = {key: self.pages[key][1] for key in known}
        else:
            found = self.model.predict_proba(self._features([self.pages[key] for key in known]))[:, 1]
            now = dict(zip(known, found.tolist(), strict=True))
        return [now.get(key) for key in keys]

    def questions(self, count: int) -> list[dict[str, Any]]:
        keys = [key for key in reversed(self.pages) if key not in self.labels][:ASKED_AMONG]
        if not keys or count <= 0:
            return []
        if self.model is not None:
            probability = self.model.predict_proba(self._features([self.pages[key] for key in keys]))[:, 1]
            order = np.argsort(np.abs(probability - 0.5), kind="stable")[:count]
            return [{"url": keys[i], "relevance": round(float(probability[i]), 4), "why": "the judge is least sure"}
                    for i in order]
        # nothing learnt yet: the base judge's verdicts alone (no texts to vectorize, no scikit-learn to import)
        base = np.array([self.pages[key][1] for key in keys], dtype=float)
        ranked = np.argsort(-base, kind="stable")
        middle = ranked[len(ranked) // 2:]
        chosen: list[int] = []
        for top, mid in zip(ranked, middle, strict=False):
            chosen += [int(top), int(mid)]
        chosen = list(dict.fromkeys(chosen))[:count]
        return [{"url": keys[i], "relevance": round(float(base[i]), 4),
                 "why": "ranked high" if n % 2 == 0 else "ranked in the middle"} for n, i in enumerate(chosen)]

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "labels": len(self.labels), "learnt": self.model is not None,
                "wraps": self.base.describe()}
