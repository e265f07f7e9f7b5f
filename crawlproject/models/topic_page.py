"""A topic learnt from example pages: a score of relevance, with a
threshold and a precision estimated on pages like those the crawl will meet
(``scrapy train --examples``).

The user gives a few relevant pages (P), perhaps a few irrelevant ones (N),
and the command fetches pages near the seeds (U, unlabelled: some relevant,
most not — what a crawl from those seeds meets). Two-step
positive-unlabelled learning (Liu et al. 2003): the pages of U surely
unlike the examples — less similar to their centroid than any example is
to the others' — are the reliable negatives (all of U when none is); a
logistic regression tells P from N and them (the classes weigh alike).
Each page's score comes from a model trained without it (cross-fitting),
and the model kept is the average of those fold models, so its scores are
on the same scale.

Calibration (Elkan & Noto 2008): if the examples are a random draw of
the relevant pages, Pr(relevant | x) = Pr(labelled | x) / c, c the mean of
Pr(labelled | x) over relevant pages. Pr(labelled | x) is a logistic fit of
the cross-fitted scores of the examples against those of the unlabelled
pages (the two populations as they are); c its mean over the held-out
examples. A page is called relevant at 0.5, and the precision the report
states is the mean probability of the unlabelled pages it calls relevant —
an estimate on crawl-like pages, not a cross-validation against easy
negatives.

Features: the crawl's terms (crawlproject.web.text, stemmed as configured)
hashed, sublinear TF-IDF with the IDF of all the training pages, rows
L2-normalised.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.feature_extraction.text import HashingVectorizer, TfidfTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold

from crawlproject.models.modelfile import load_model, save_model
from crawlproject.web.text import TermAnalyzer

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from scipy.sparse import csr_matrix

FORMAT = "topic-page"
TRAINER = "scrapy train --examples URLS -o MODEL.npz"
HASH_FEATURES = 2**18
#: The logistic regression's inverse regularisation (scikit-learn's default).
C = 1.0


def _vectorizer(stem: bool) -> HashingVectorizer:
    analyzer = TermAnalyzer(stem=stem)
    return HashingVectorizer(
        analyzer=analyzer.terms, n_features=HASH_FEATURES, alternate_sign=False, norm=None, dtype=np.float32
    )


@dataclass
class Expectations:
    """What the model expects of its calls on the unlabelled (crawl-like) pages."""

    relevant_share: float  # the expected share of relevant pages among them
    precision: float
    recall: float
    called: float  # share of them it calls relevant

    def as_dict(self) -> dict[str, Any]:
        return {k: round(v, 4) for k, v in self.__dict__.items()}


def reliable_negatives(relevant: csr_matrix, unlabelled: csr_matrix) -> np.ndarray:
    """The rows of *unlabelled* surely unlike the examples (Liu et al.
    2003's first step, by Rocchio): less similar to the examples' centroid
    than every example is to the centroid of the others."""
    count = relevant.shape[0]
    if count < 2 or unlabelled.shape[0] == 0:
        return np.zeros(0, dtype=int)
    total = np.asarray(relevant.sum(axis=0)).ravel()
    own = np.array([float((relevant[i] @ ((total - relevant[i].toarray().ravel()) / (count - 1)))[0])
                    for i in range(count)])
    similarity = unlabelled @ (total / count)
    return np.flatnonzero(similarity < own.min())


class TopicPageModel:
    """Pr(relevant | page text), from examples and unlabelled pages."""

    def __init__(self, stem: bool = True):
        self.stem = stem
        self.vectorizer = _vectorizer(stem)
        self.tfidf = TfidfTransformer(sublinear_tf=True)
        self.classifier = LogisticRegression(C=C, max_iter=1000)
        self.slope, self.offset = 1.0, 0.0  # Pr(labelled | score), fitted by calibrate()
        self.c = 1.0  # its mean over the relevant pages (Elkan & Noto)
        self.report: dict[str, Any] = {}

    # -- training ---------------------------------------------------------------------

    def fit(
        self, relevant: Sequence[str], irrelevant: Sequence[str] = (), unlabelled: Sequence[str] = (), seed: int = 1
    ) -> TopicPageModel:
        """Learn from page texts; needs relevant pages and at least one
        irrelevant or unlabelled page."""
        if not relevant or not (irrelevant or unlabelled):
            raise ValueError("a topic model needs relevant examples and irrelevant or unlabelled pages")
        texts = [*relevant, *irrelevant, *unlabelled]
        counts = self.vectorizer.transform(texts)
        self.tfidf.fit(counts)
        features = self.tfidf.transform(counts)
        start = len(relevant) + len(irrelevant)
        negatives = reliable_negatives(features[: len(relevant)], features[start:]) + start
        if not len(negatives):  # no page near the seeds is surely unlike the examples: all of them
            negatives = np.arange(start, len(texts))
        rows = np.r_[np.arange(start), negatives]
        labelled = np.zeros(len(rows), dtype=bool)
        labelled[: len(relevant)] = True
        folds = int(min(5, len(relevant), (~labelled).sum()))
        models = []
        scores = np.full(len(texts), np.nan)
        if folds >= 2:
            for train, test in StratifiedKFold(folds, shuffle=True, random_state=seed).split(rows, labelled):
                model = LogisticRegression(C=C, max_iter=1000, class_weight="balanced")
                model.fit(features[rows[train]], labelled[train])
                scores[rows[test]] = model.decision_function(features[rows[test]])
                models.append(model)
        else:
            models = [LogisticRegression(C=C, max_iter=1000, class_weight="balanced").fit(features[rows], labelled)]
        self.classifier = models[0]
        self.classifier.coef_ = np.mean([m.coef_ for m in models], axis=0)
        self.classifier.intercept_ = np.mean([m.intercept_ for m in models], axis=0)
        unscored = np.isnan(scores)  # pages no fold model trained on (or no folds): the kept model's scores
        if unscored.any():
            scores[unscored] = self.classifier.decision_function(features[np.flatnonzero(unscored)])
        positive, rest = scores[: len(relevant)], scores[start:]
        if not len(rest):
            rest = scores[len(relevant):]  # no unlabelled pages: the irrelevant examples stand for them
        self.calibrate(positive, rest)
        self.report = {
            "relevant": len(relevant), "irrelevant": len(irrelevant), "unlabelled": len(unlabelled), "folds": folds,
            "reliable_negatives": len(negatives) if len(unlabelled) else 0,
            "on_unlabelled": self.expectations(rest).as_dict() if len(unlabelled) else None,
            "irrelevant_called": round(float((self._probability(scores[len(relevant): start]) >= 0.5).mean()), 4)
            if irrelevant else None,
        }
        return self

    def calibrate(self, positive: np.ndarray, unlabelled: np.ndarray) -> None:
        """Elkan & Noto's Pr(relevant | x) = g(x) / c: g = Pr(labelled | score)
        by a logistic fit of the held-out examples' and the unlabelled pages'
        scores (no weights: the two populations as they are), c = g's mean
        over the held-out examples."""
        x = np.r_[positive, unlabelled].reshape(-1, 1)
        y = np.r_[np.ones(len(positive)), np.zeros(len(unlabelled))]
        platt = LogisticRegression(C=1.0, max_iter=1000).fit(x, y)
        self.slope, self.offset = float(platt.coef_[0, 0]), float(platt.intercept_[0])
        self.c = float(np.clip(self._labelled(positive).mean(), 1e-6, 1.0))

    def _labelled(self, scores: np.ndarray) -> np.ndarray:
        return np.asarray(1.0 / (1.0 + np.exp(-(self.slope * np.asarray(scores) + self.offset))))

    def _probability(self, scores: np.ndarray) -> np.ndarray:
        return np.clip(self._labelled(scores) / self.c, 0.0, 1.0)

    def expectations(self, unlabelled: np.ndarray) -> Expectations:
        """What the model expects of its calls (probability ≥ 0.5) on the
        unlabelled pages: the mean probability of those it calls relevant
        is its precision there; their share of the expected relevant pages,
        its recall."""
        probability = self._probability(unlabelled)
        called = probability >= 0.5
        expected = float(probability.sum())
        return Expectations(
            relevant_share=expected / max(len(probability), 1),
            precision=float(probability[called].mean()) if called.any() else 0.0,
            recall=float(probability[called].sum() / expected) if expected else 0.0,
            called=float(called.mean()) if len(called) else 0.0,
        )

    # -- use --------------------------------------------------------------------------

    def features(self, texts: Sequence[str]) -> csr_matrix:
        return self.tfidf.transform(self.vectorizer.transform(texts))

    def relevance(self, texts: Sequence[str]) -> np.ndarray:
        """Pr(relevant | page) of each text: called relevant at 0.5."""
        return self.relevance_of_counts(self.vectorizer.transform(texts))

    def relevance_of_counts(self, counts: csr_matrix) -> np.ndarray:
        """:meth:`relevance` of pages whose hashed term counts are known
        (the vectorizer is the same for every model of one stemming)."""
        return self._probability(self.classifier.decision_function(self.tfidf.transform(counts)))

    def precision(self) -> float | None:
        """The precision the model expects of its calls on crawl-like pages."""
        found = (self.report.get("on_unlabelled") or {}).get("precision")
        return float(found) if found is not None else None

    # -- file ---------------------------------------------------------------------------

    def save(self, path: str | Path) -> None:
        meta = {"stem": self.stem, "slope": self.slope, "offset": self.offset, "c": self.c, "report": self.report}
        save_model(path, FORMAT, meta, {
            "idf": self.tfidf.idf_, "coef": self.classifier.coef_, "intercept": self.classifier.intercept_,
            "classes": self.classifier.classes_,
        })

    @classmethod
    def load(cls, path: str | Path) -> TopicPageModel:
        meta, arrays = load_model(path, FORMAT, TRAINER)
        model = cls(stem=bool(meta["stem"]))
        model.slope, model.offset, model.c = float(meta["slope"]), float(meta["offset"]), float(meta["c"])
        model.report = meta.get("report") or {}
        model.tfidf.idf_ = arrays["idf"]
        model.classifier.coef_ = arrays["coef"]
        model.classifier.intercept_ = arrays["intercept"]
        model.classifier.classes_ = arrays["classes"]
        model.classifier.n_features_in_ = arrays["coef"].shape[1]
        return model



def format_report(report: dict[str, Any]) -> str:
    """What ``scrapy train --examples`` prints: what the model expects of
    itself on pages like the crawl's (the pages near the seeds)."""
    lines = [f"Trained on {report['relevant']} relevant and {report['irrelevant']} irrelevant examples and "
             f"{report['unlabelled']} pages near the seeds ({report.get('reliable_negatives', 0)} of them surely "
             "unlike the examples: negatives)."]
    estimate = report.get("on_unlabelled")
    if estimate:
        lines.append(
            f"On the pages near the seeds — what a crawl from them meets — it expects about "
            f"{estimate['relevant_share']:.0%} to be relevant and calls {estimate['called']:.0%} relevant: "
            f"estimated precision {estimate['precision']:.0%}, recall {estimate['recall']:.0%} "
            "(positive-unlabelled estimates; label pages on the dashboard to measure them)."
        )
    else:
        lines.append("WARNING: no page near the seeds: the model's precision on a crawl's pages cannot be estimated")
    if report.get("irrelevant_called") is not None:
        lines.append(f"Irrelevant examples it would call relevant: {report['irrelevant_called']:.0%}.")
    if report["relevant"] < 10 or (report["irrelevant"] + report["unlabelled"]) < 10:
        lines.append("WARNING: too few pages to trust (give at least 10 relevant examples and fetch pages near the seeds)")
    return "\n".join(lines)
