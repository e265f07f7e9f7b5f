"""The hierarchical naive Bayes taxonomy classifier (crawlproject.models)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from crawlproject.models.taxonomy import Taxonomy, TaxonomyError
from crawlproject.models.taxonomy_classifier import ModelError, ModelSettings, TaxonomyClassifier

# A hand-built 3-level taxonomy: root → a, b; a → a/x, a/y; a/x → a/x/1, a/x/2.
CATEGORIES = ["a/x/1", "a/x/2", "a/y", "b", "a/x/1"]
COUNTS = [[3, 0, 1], [0, 2, 1], [1, 1, 0], [0, 0, 4], [2, 1, 0]]  # terms w0, w1, w2


def hand_model() -> TaxonomyClassifier:
    model = TaxonomyClassifier(ModelSettings(alpha=1.0))
    model.taxonomy = Taxonomy.from_categories(CATEGORIES)
    model.learn(sp.csr_matrix(np.array(COUNTS, dtype=float)), CATEGORIES)
    return model


def test_probabilities_match_a_computation_by_hand() -> None:
    model = hand_model()
    page = sp.csr_matrix(np.array([[1, 2, 0]], dtype=float))
    probabilities = model.proba(page)[0]
    p = {path: probabilities[model.taxonomy.index(path)] for path in model.taxonomy.paths if path}

    # Multinomial naive Bayes by hand: prior × Π Pr(term|class)^count, with
    # Laplace smoothing (count + 1) / (total + 3 terms), normalized per node.
    def likelihood(prior: float, counts: list[int], total: int) -> float:
        return prior * ((counts[0] + 1) / (total + 3)) ** 1 * ((counts[1] + 1) / (total + 3)) ** 2

    a = likelihood(4 / 5, [6, 4, 2], 12)  # a: pages 1, 2, 3, 5
    b = likelihood(1 / 5, [0, 0, 4], 4)
    pr_a, pr_b = a / (a + b), b / (a + b)
    x = likelihood(3 / 4, [5, 3, 2], 10)  # under a: x has pages 1, 2, 5; y page 3
    y = likelihood(1 / 4, [1, 1, 0], 2)
    pr_x, pr_y = pr_a * x / (x + y), pr_a * y / (x + y)
    one = likelihood(2 / 3, [5, 1, 1], 7)  # under a/x: 1 has pages 1, 5; 2 page 2
    two = likelihood(1 / 3, [0, 2, 1], 3)

    assert p["a"] == pytest.approx(pr_a)
    assert p["b"] == pytest.approx(pr_b)
    assert p["a/x"] == pytest.approx(pr_x)
    assert p["a/y"] == pytest.approx(pr_y)
    assert p["a/x/1"] == pytest.approx(pr_x * one / (one + two))
    assert p["a/x/2"] == pytest.approx(pr_x * two / (one + two))
    assert probabilities[0] == 1.0  # Pr(root|p) = 1


def test_children_sum_to_their_parent_and_relevance_sums_good_categories() -> None:
    model = hand_model()
    pages = sp.csr_matrix(np.array([[1, 2, 0], [0, 0, 5], [4, 0, 0]], dtype=float))
    probabilities = model.proba(pages)
    tree = model.taxonomy
    for node, children in enumerate(tree.children):
        if children:
            np.testing.assert_allclose(probabilities[:, list(children)].sum(axis=1), probabilities[:, node])
    good = model.good_nodes(["a/x", "b", "a/x/1"])  # a/x/1 is inside a/x already
    assert [tree.paths[n] for n in good] == ["b", "a/x"]
    relevance = probabilities[:, good].sum(axis=1)
    expected = probabilities[:, tree.index("a/x")] + probabilities[:, tree.index("b")]
    np.testing.assert_allclose(relevance, expected)
    leaves = [tree.paths[n] for n in model.best_leaves(probabilities)]
    assert leaves[1] == "b"  # only w2: b's term


def test_compiled_classification_equals_sklearn_per_node() -> None:
    texts = [
        "course syllabus homework lecture exam", "homework grading lecture notes",
        "professor research publications students", "faculty research grants",
        "graduate student thesis advisor", "student resume hobbies", "course lecture",
    ]
    categories = ["course/cs", "course/math", "people/faculty", "people/faculty",
                  "people/student", "people/student", "course/cs"]
    model = TaxonomyClassifier().fit(texts, categories)
    test = model.features(["lecture homework research", "student thesis grants", "nothing known"])
    log_probabilities = model.log_proba(test)
    for node, classifier in model.node_classifiers.items():
        expected = classifier.predict_log_proba(test) + log_probabilities[:, [node]]
        np.testing.assert_allclose(log_probabilities[:, classifier.classes_], expected, atol=1e-9)


def test_learning_more_pages_equals_training_on_all_of_them() -> None:
    # Naive Bayes counts add up: online learning is exact, not an approximation.
    counts = sp.csr_matrix(np.array(COUNTS, dtype=float))
    extra = sp.csr_matrix(np.array([[0, 3, 0], [1, 0, 2]], dtype=float))
    online = hand_model()
    online.learn(extra, ["a/y", "b"])
    batch = TaxonomyClassifier(ModelSettings(alpha=1.0))
    batch.taxonomy = online.taxonomy
    batch.learn(sp.vstack([counts, extra], format="csr"), [*CATEGORIES, "a/y", "b"])
    page = sp.csr_matrix(np.array([[1, 1, 1]], dtype=float))
    np.testing.assert_allclose(online.proba(page), batch.proba(page))
    assert online.trained_pages == 7


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    texts = ["course homework", "course lecture", "student home page", "student resume"]
    model = TaxonomyClassifier().fit(texts, ["course", "course", "student", "student"])
    model.report = {"levels": []}
    path = tmp_path / "model.npz"
    model.save(path)
    loaded = TaxonomyClassifier.load(path)
    assert loaded.taxonomy.paths == model.taxonomy.paths
    assert loaded.report == {"levels": []}
    pages = ["homework lecture", "resume"]
    np.testing.assert_allclose(loaded.classify_texts(pages), model.classify_texts(pages))
    assert loaded.classify_texts(pages)[0, loaded.taxonomy.index("course")] > 0.5


def test_bad_model_files_give_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="does not exist; train one"):
        TaxonomyClassifier.load(tmp_path / "missing.npz")
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"this is not a pickle")
    with pytest.raises(ModelError, match="is not a crawlproject model file"):
        TaxonomyClassifier.load(garbage)
    other = tmp_path / "other.npz"
    with other.open("wb") as f:
        np.savez(f, meta=np.array(json.dumps({"format": "someone-else/1"})))
    with pytest.raises(ModelError, match="is not a crawlproject/taxonomy-naive-bayes/2 model"):
        TaxonomyClassifier.load(other)
    pickled = tmp_path / "pickled.npz"
    with pickled.open("wb") as f:
        np.savez(f, meta=np.array([{"format": "x"}], dtype=object))  # needs pickle to load
    with pytest.raises(ModelError, match="is not a crawlproject model file"):
        TaxonomyClassifier.load(pickled)


def test_a_saved_model_is_arrays_and_json_that_learns_on(tmp_path: Path) -> None:
    texts = ["course homework", "course lecture", "student home page", "student resume"]
    for features in ("counts", "tfidf", "hashing"):
        model = TaxonomyClassifier(ModelSettings(features=features)).fit(
            texts, ["course", "course", "student", "student"]
        )
        path = tmp_path / f"{features}.npz"
        model.save(path)
        with np.load(path, allow_pickle=False) as data:
            assert "meta" in data.files
        loaded = TaxonomyClassifier.load(path)
        for learner in (model, loaded):
            learner.learn(learner.features(["lecture exam"]), ["course"])
        pages = ["exam", "resume page"]
        np.testing.assert_allclose(loaded.classify_texts(pages), model.classify_texts(pages))


def test_a_taxonomy_under_one_top_category_and_one_child_chains_are_learnt() -> None:
    # Every PHP manual page is "php/<book>": one top category, which the
    # classifier refused to train. And below a node with one child, the
    # probabilities forgot the node's own (Pr(a/x/1) was Pr(a/x/1 | a/x)).
    php = TaxonomyClassifier().fit(
        ["array sort keys", "array merge values", "date time zone", "date format time"],
        ["php/Arrays", "php/Arrays", "php/Date and Time", "php/Date and Time"],
    )
    probabilities = php.classify_texts(["sort the array keys"])[0]
    arrays, dates = php.taxonomy.index("php/Arrays"), php.taxonomy.index("php/Date and Time")
    assert probabilities[php.taxonomy.index("php")] == pytest.approx(1.0)
    assert probabilities[arrays] > probabilities[dates] and probabilities[arrays] + probabilities[
        dates
    ] == pytest.approx(1.0)
    chain = TaxonomyClassifier().fit(
        ["lecture exam", "homework exam", "lecture notes", "resume hobbies"], ["a/x/1", "a/x/2", "a/x/1", "b"],
    )
    for row in chain.classify_texts(["hobbies and a resume", "exam homework"]):
        leaves = [chain.taxonomy.index(leaf) for leaf in ("a/x/1", "a/x/2", "b")]
        assert row[leaves].sum() == pytest.approx(1.0)
        assert row[chain.taxonomy.index("a/x/1")] <= row[chain.taxonomy.index("a")] + 1e-12


def test_training_refuses_what_it_cannot_learn() -> None:
    with pytest.raises(ModelError, match="at least two categories to tell apart"):
        TaxonomyClassifier().fit(["a page", "another page"], ["course", "course/cornell"])
    with pytest.raises(ModelError, match="no training pages"):
        TaxonomyClassifier().fit([], [])
    with pytest.raises(ModelError, match="cannot learn features"):
        TaxonomyClassifier().fit(["the and of", "a an the"], ["course", "student"])
    with pytest.raises(ModelError, match="not trained"):
        TaxonomyClassifier().log_proba(sp.csr_matrix((1, 3)))
    with pytest.raises(ModelError, match="features must be one of"):
        ModelSettings(features="word2vec")


def test_unknown_category_names_the_top_categories() -> None:
    model = hand_model()
    with pytest.raises(TaxonomyError, match="'c/z' is not in the taxonomy; its top categories are: a, b"):
        model.good_nodes(["c/z"])


def test_feature_kinds_all_classify() -> None:
    texts = ["course homework lecture", "course syllabus exam", "student resume", "student hobbies home"]
    categories = ["course", "course", "student", "student"]
    for kind in ("counts", "tfidf", "hashing"):
        model = TaxonomyClassifier(ModelSettings(features=kind, n_features=2**10)).fit(texts, categories)
        probabilities = model.classify_texts(["homework exam lecture"])
        assert probabilities[0, model.taxonomy.index("course")] > 0.5, kind
        assert math.isclose(probabilities[0, 1:].sum(), 1.0)
