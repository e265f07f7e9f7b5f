"""Hierarchical naive Bayes over a taxonomy (docs/methods.md §2, Chakrabarti et al.).

Every internal node of the taxonomy with two or more children has its own
scikit-learn ``MultinomialNB`` that tells its children apart. The
probability of a node is its parent's times the conditional at that node,
and Pr(root|p) = 1, so the probabilities of a node's children sum to the
node's own.

Classification is the crawler's per-page cost, so it is compiled: the
``feature_log_prob_`` rows of all node classifiers are stacked into one
matrix and a batch of pages is classified by one sparse × dense product,
then a log-softmax per node (exactly what ``MultinomialNB.predict_log_proba``
computes, for every node at once; tests check the two agree).
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer, TfidfVectorizer
from sklearn.naive_bayes import MultinomialNB

from crawlproject.models.modelfile import (
    ModelError as ModelError,  # re-exported: part of this module's API
)
from crawlproject.models.modelfile import load_model, save_model
from crawlproject.models.taxonomy import Taxonomy, TaxonomyError
from crawlproject.web.text import TermAnalyzer

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from scipy.sparse import csr_matrix

logger = logging.getLogger(__name__)

FORMAT = "crawlproject/taxonomy-naive-bayes/2"
#: What a fitted MultinomialNB is, besides its classes: counts (online
#: learning adds to them) and the log probabilities they give.
_NB_ARRAYS = ("class_count_", "feature_count_", "class_log_prior_", "feature_log_prob_")
FEATURES = ("counts", "tfidf", "hashing")


@dataclass(frozen=True)
class ModelSettings:
    #: "counts": term counts over the training pages' vocabulary (the
    #: multinomial model naive Bayes is defined on, as Chakrabarti et al.);
    #: "tfidf": log TF × IDF over that vocabulary, not length-normalized
    #: (normalized vectors carry so little mass that the class prior wins);
    #: "hashing": stateless counts in ``n_features`` buckets (terms first
    #: seen while learning online count too, at more memory).
    features: str = "counts"
    stem: bool = True
    alpha: float = 1.0  # Laplace/Lidstone smoothing
    min_df: int = 1
    n_features: int = 2**18

    def __post_init__(self) -> None:
        if self.features not in FEATURES:
            raise ModelError(f"features must be one of {', '.join(FEATURES)}, got {self.features!r}")
        if self.alpha <= 0:
            raise ModelError(f"alpha must be > 0, got {self.alpha!r}")


class TaxonomyClassifier:
    """Pr(c|p) for every category c of a taxonomy, for batches of pages."""

    def __init__(self, settings: ModelSettings | None = None):
        self.settings = settings or ModelSettings()
        self.taxonomy = Taxonomy([""])
        self.vectorizer: CountVectorizer | HashingVectorizer = self._new_vectorizer()
        #: node → classifier over its children (nodes with ≥ 2 children only)
        self.node_classifiers: dict[int, MultinomialNB] = {}
        self.trained_pages = 0
        #: the held-out report of ``scrapy train``, kept with the model
        self.report: dict[str, Any] = {}
        self._compiled: _Compiled | None = None

    # -- training --------------------------------------------------------------

    def fit(self, texts: Sequence[str], categories: Sequence[str]) -> TaxonomyClassifier:
        """Learn the taxonomy spanned by *categories* and every node's classifier."""
        if len(texts) != len(categories):
            raise ValueError(f"{len(texts)} texts but {len(categories)} categories")
        if not texts:
            raise ModelError("no training pages")
        self.taxonomy = Taxonomy.from_categories(categories)
        if not any(len(children) >= 2 for children in self.taxonomy.children):  # "php/a", "php/b" will do
            raise ModelError(
                "a taxonomy needs at least two categories to tell apart; got "
                + (", ".join(self.taxonomy.paths[1:]) or "none")
            )
        self.vectorizer = self._new_vectorizer()
        try:
            features = self.vectorizer.fit_transform(texts)
        except ValueError as exc:  # e.g. every page empty after stopwords
            raise ModelError(f"cannot learn features from the training pages: {exc}") from None
        self.node_classifiers = {}
        self.trained_pages = 0
        self.learn(features, categories)
        return self

    def learn(self, features: csr_matrix, categories: Sequence[str]) -> None:
        """Add labelled pages to the node classifiers (naive Bayes counts add
        up, so this is both the first fit and online learning). Categories
        must be in the taxonomy."""
        # Each page's path from its category up to the root, computed once.
        chains = [self.taxonomy.ancestors(self.taxonomy.index(c)) for c in categories]
        for node, children in enumerate(self.taxonomy.children):
            if len(children) < 2:
                continue
            rows, child_labels = self._examples_below(node, chains)
            if not rows:
                continue
            classifier = self.node_classifiers.get(node)
            if classifier is None:
                classifier = self.node_classifiers[node] = MultinomialNB(alpha=self.settings.alpha)
                classifier.partial_fit(features[rows], child_labels, classes=np.array(children))
            else:
                classifier.partial_fit(features[rows], child_labels)
        self.trained_pages += len(categories)
        self._compiled = None

    def _examples_below(self, node: int, chains: list[list[int]]) -> tuple[list[int], list[int]]:
        """Rows labelled at or below a child of *node*, with that child."""
        depth = self.taxonomy.depth(node)
        rows, child_labels = [], []
        for row, chain in enumerate(chains):
            if len(chain) - 1 <= depth or chain[-1 - depth] != node:
                continue  # not below node
            rows.append(row)
            child_labels.append(chain[-2 - depth])
        return rows, child_labels

    # -- classification ----------------------------------------------------------

    def features(self, texts: Iterable[str]) -> csr_matrix:
        return self.vectorizer.transform(texts)

    def log_proba(self, features: csr_matrix) -> np.ndarray:
        """log Pr(node|page): one row per page, one column per taxonomy node."""
        compiled = self._compiled or self._compile()
        joint = features @ compiled.weights
        joint += compiled.priors
        result = np.zeros((features.shape[0], len(self.taxonomy)))
        for node, columns, children in compiled.steps:  # parents first: a node's own value is final
            if columns is None:  # its only child: Pr(child | node) = 1
                result[:, children] = result[:, [node]]
                continue
            block = joint[:, columns]
            block -= _logsumexp_rows(block)
            result[:, children] = result[:, [node]] + block
        return result

    def proba(self, features: csr_matrix) -> np.ndarray:
        probabilities: np.ndarray = np.exp(self.log_proba(features))
        return probabilities

    def classify_texts(self, texts: Iterable[str]) -> np.ndarray:
        return self.proba(self.features(texts))

    def _compile(self) -> _Compiled:
        if not self.node_classifiers:
            raise ModelError("the classifier is not trained")
        weights, priors = [], []
        steps: list[tuple[int, slice | None, np.ndarray]] = []
        start = 0
        for node, children in enumerate(self.taxonomy.children):  # parents first
            classifier = self.node_classifiers.get(node)
            if classifier is not None:
                stop = start + len(children)
                weights.append(classifier.feature_log_prob_)
                priors.append(classifier.class_log_prior_)
                steps.append((node, slice(start, stop), np.asarray(classifier.classes_)))
                start = stop
            elif len(children) == 1:
                steps.append((node, None, np.asarray(children)))
            elif children:
                raise ModelError(
                    f"category {self.taxonomy.paths[node]!r} has no trained classifier "
                    "(no training page below it)"
                )
        self._compiled = _Compiled(np.ascontiguousarray(np.vstack(weights).T), np.concatenate(priors), steps)
        return self._compiled

    def prior_of(self, nodes: Iterable[int]) -> float:
        """Pr(a page is in one of *nodes*) before its text is read: the
        share of the training pages the model learnt (its classes' priors)."""
        return float(self.proba(self.features([""]))[0, list(nodes)].sum())  # no term: the priors alone

    # -- decisions over probabilities --------------------------------------------

    def good_nodes(self, good: Iterable[str]) -> list[int]:
        """Node ids of the good categories, without any whose ancestor is also
        good (its probability is already inside the ancestor's)."""
        nodes = {self.taxonomy.index(category) for category in good}
        if not nodes:
            raise TaxonomyError("name at least one good category")
        return sorted(n for n in nodes if not any(a in nodes for a in self.taxonomy.ancestors(n)[1:]))

    def best_leaves(self, probabilities: np.ndarray) -> np.ndarray:
        """The most probable leaf c* of each page."""
        leaves = np.array(self.taxonomy.leaves)
        best: np.ndarray = leaves[np.argmax(probabilities[:, leaves], axis=1)]
        return best

    # -- persistence ---------------------------------------------------------------

    def save(self, path: str | Path) -> None:
        """Write the model as NumPy arrays and JSON in one ``.npz`` file: no
        pickle, so loading a model file cannot run code."""
        meta: dict[str, Any] = {
            "settings": asdict(self.settings),
            "taxonomy": self.taxonomy.to_list(),
            "trained_pages": self.trained_pages,
            "report": self.report,
            "nodes": {},
        }
        arrays: dict[str, np.ndarray] = {}
        vocabulary = getattr(self.vectorizer, "vocabulary_", None)
        if vocabulary is not None:
            meta["vocabulary"] = {term: int(index) for term, index in vocabulary.items()}
        if isinstance(self.vectorizer, TfidfVectorizer):
            arrays["idf"] = self.vectorizer.idf_
        for node, classifier in self.node_classifiers.items():
            meta["nodes"][str(node)] = [int(c) for c in classifier.classes_]
            for name in _NB_ARRAYS:
                arrays[f"node{node}_{name}"] = getattr(classifier, name)
        save_model(path, FORMAT, meta, arrays)

    @classmethod
    def load(cls, path: str | Path) -> TaxonomyClassifier:
        """Load a model written by :meth:`save` (arrays and JSON; no pickle)."""
        meta, arrays = load_model(path, FORMAT, "scrapy train")
        model = cls(ModelSettings(**meta["settings"]))
        model.taxonomy = Taxonomy(meta["taxonomy"])
        model.trained_pages = meta["trained_pages"]
        model.report = meta["report"]
        model.vectorizer = model._new_vectorizer(meta.get("vocabulary"))
        if "idf" in arrays:
            model.vectorizer.idf_ = arrays["idf"]  # type: ignore[union-attr]
        for node, classes in meta["nodes"].items():
            classifier = MultinomialNB(alpha=model.settings.alpha)
            classifier.classes_ = np.array(classes)
            for name in _NB_ARRAYS:
                setattr(classifier, name, arrays[f"node{node}_{name}"])
            classifier.n_features_in_ = classifier.feature_count_.shape[1]
            model.node_classifiers[int(node)] = classifier
        return model

    def _new_vectorizer(self, vocabulary: dict[str, int] | None = None) -> CountVectorizer | HashingVectorizer:
        settings = self.settings
        analyzer = TermAnalyzer(stem=settings.stem).terms
        if settings.features == "hashing":
            return HashingVectorizer(
                analyzer=analyzer, n_features=settings.n_features, alternate_sign=False, norm=None
            )
        if settings.features == "tfidf":
            return TfidfVectorizer(
                analyzer=analyzer, sublinear_tf=True, norm=None, min_df=settings.min_df, vocabulary=vocabulary
            )
        return CountVectorizer(analyzer=analyzer, min_df=settings.min_df, vocabulary=vocabulary)


def _logsumexp_rows(block: np.ndarray) -> np.ndarray:
    """log Σ exp over each row, stable (scipy's logsumexp costs ~100 µs a
    call in input checks, which is most of a one-page batch)."""
    peak = block.max(axis=1, keepdims=True)
    total: np.ndarray = np.log(np.exp(block - peak).sum(axis=1, keepdims=True)) + peak
    return total


@dataclass
class _Compiled:
    weights: np.ndarray  # features × stacked children (log Pr(term|child))
    priors: np.ndarray  # log Pr(child|parent) priors, stacked
    #: parents first, (node, its children's columns, children); no columns: its only child, Pr = 1
    steps: list[tuple[int, slice | None, np.ndarray]]
