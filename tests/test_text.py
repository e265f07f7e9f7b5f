from __future__ import annotations

import pytest

from crawlproject.text import DIALOG_STOPWORDS, STOPWORDS, TermAnalyzer, cosine


def test_stopword_data_matches_scikit_learn() -> None:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    from crawlproject.text import ENGLISH_STOPWORDS

    assert frozenset(ENGLISH_STOP_WORDS) == ENGLISH_STOPWORDS


def test_dialog_nine_are_stopwords() -> None:
    assert DIALOG_STOPWORDS <= STOPWORDS
    assert TermAnalyzer(stem=False).terms("an and by for from of the to with") == []


def test_porter_stemming_conflates_inflections() -> None:
    analyzer = TermAnalyzer(stem=True)
    assert analyzer.terms("courses") == analyzer.terms("course")
    assert analyzer.terms("lectures lecturing") == ["lectur", "lectur"]


def test_cosine_against_hand_computation() -> None:
    # q = {course: 1, syllabus: 1}; p = {course: 2, exam: 1}
    # dot = 2; |q| = sqrt(2); |p| = sqrt(5); cos = 2 / sqrt(10)
    assert cosine({"course": 1, "syllabus": 1}, {"course": 2, "exam": 1}) == pytest.approx(
        2 / 10**0.5
    )
    assert cosine({}, {"a": 1}) == 0.0
    assert cosine({"a": 1}, {"b": 1}) == 0.0


def test_vector_is_term_frequency() -> None:
    vector = TermAnalyzer(stem=False).vector("Course course syllabus; the COURSE")
    assert vector == {"course": 3, "syllabus": 1}
