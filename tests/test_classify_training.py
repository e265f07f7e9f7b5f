"""Training examples, the held-out report, the evaluation's per-topic models,
and the micro-batcher that classifies pages during a crawl."""

from __future__ import annotations

from pathlib import Path

import pytest
from twisted.internet import task

from bench.topic_models import good_category, topic_training_examples
from crawlproject.corpus.reader import Corpus
from crawlproject.evaluation.topics import Topic
from crawlproject.models.examples import examples_from_warc, format_report, holdout_report
from crawlproject.models.taxonomy_classifier import ModelSettings
from crawlproject.spiders.batching import MicroBatcher
from tests.conftest import html, write_warc

WORDS = {
    "science/physics/quantum": "quantum entanglement qubit superposition",
    "science/physics/optics": "lens laser photon refraction",
    "science/biology": "cell gene protein enzyme",
    "arts/music": "symphony violin melody orchestra",
    "arts/painting": "canvas brush pigment portrait",
}


def synthetic(n_per_category: int = 12) -> tuple[list[str], list[str]]:
    texts, categories = [], []
    for category, words in WORDS.items():
        vocabulary = words.split()
        for i in range(n_per_category):
            texts.append(" ".join(vocabulary[j % 4] for j in range(i % 3, i % 3 + 6)) + f" filler{i}")
            categories.append(category)
    return texts, categories


def test_holdout_report_measures_every_level_of_a_three_level_taxonomy() -> None:
    from crawlproject.models.examples import Examples

    texts, categories = synthetic()
    examples = Examples([f"http://x/{i}" for i in range(len(texts))], texts, categories)
    report = holdout_report(examples, ModelSettings(), fraction=0.25, seed=3)
    assert [level["depth"] for level in report["levels"]] == [1, 2, 3]
    assert report["levels"][2]["pages"] < report["levels"][0]["pages"]  # only physics has level 3
    assert all(level["accuracy"] == 1.0 > level["majority"] for level in report["levels"])
    assert {row["category"] for row in report["categories"]} == {"arts", "science"}
    assert report["train_pages"] + report["test_pages"] == len(texts)
    assert "level  pages  accuracy" in format_report(report)


def test_examples_from_a_warc_use_the_crawlers_text_and_count_unusable_pages(tmp_path: Path) -> None:
    warc = write_warc(tmp_path / "pages.warc.gz", [
        ("http://a.org/course", 200, [("Content-Type", "text/html")], html("<p>Lecture notes</p><script>x()</script>")),
        ("http://a.org/empty", 200, [("Content-Type", "text/html")], b"<html><script>x()</script></html>"),
        ("http://a.org/pdf", 200, [("Content-Type", "application/pdf")], b"%PDF-1.4"),
        ("http://a.org/gone", 404, [("Content-Type", "text/html")], html("not found")),
    ])
    labels = tmp_path / "labels.tsv"
    labels.write_text(
        "url\tcategory\nhttp://a.org/course\tcourse/x\nhttp://a.org/empty\tother\n"
        "http://a.org/pdf\tother\nhttp://a.org/gone\tother\nhttp://a.org/never-archived\tother\n",
        encoding="utf-8",
    )
    examples = examples_from_warc(labels, warc, cache_dir=None)
    assert examples.urls == ["http://a.org/course"]
    assert "Lecture notes" in examples.texts[0] and "x()" not in examples.texts[0]
    assert examples.categories == ["course/x"]
    assert examples.missing == 4


def test_topic_models_never_see_the_topics_hosts_except_its_seeds() -> None:
    corpus = Corpus(labels={
        "http://u1.edu/c1": "course/u1", "http://u1.edu/c2": "course/u1", "http://u1.edu/f": "faculty/u1",
        "http://u2.edu/c": "course/u2", "http://u2.edu/f": "faculty/u2",
    })
    corpus.text = {url: f"text of {url}" for url in corpus.labels}
    topic = Topic("course-u1", "course/u1", ["course", "u1"], ["http://u1.edu/c1"], [], ["http://u1.edu/c2"], 2)
    examples = topic_training_examples(corpus, topic)
    assert examples.urls == ["http://u1.edu/c1", "http://u2.edu/c", "http://u2.edu/f"]
    assert good_category(examples, topic) == "course"  # course/u1 is known only from its seed
    whole = Topic("course", "course", ["course"], ["http://u1.edu/c1"], [], [], 3)
    assert good_category(topic_training_examples(corpus, whole), whole) == "course"


def test_label_disjoint_models_see_every_page_but_no_label_of_the_topic_but_its_seeds() -> None:
    from bench.topic_models import topic_training_graph
    from crawlproject.models.training_graph import LinkRecord, TrainingGraph

    corpus = Corpus(labels={
        "http://u1.edu/c1": "course/u1", "http://u1.edu/c2": "course/u1", "http://u1.edu/f": "faculty/u1",
        "http://u2.edu/c": "course/u2",
    })
    corpus.text = {url: f"text of {url}" for url in corpus.labels}
    topic = Topic("course-u1", "course/u1", ["course", "u1"], ["http://u1.edu/c1"], [], ["http://u1.edu/c2"], 2)
    examples = topic_training_examples(corpus, topic, protocol="label-disjoint")
    # the target c2 is no example; the seed and the topic's host's other pages are
    assert examples.urls == ["http://u1.edu/c1", "http://u1.edu/f", "http://u2.edu/c"]
    assert good_category(examples, topic, "label-disjoint") == "course/u1"  # known from its seed
    graph = TrainingGraph(
        text=dict(corpus.text), labels=dict(corpus.labels),
        links={"http://u1.edu/f": [LinkRecord("http://u1.edu/c1", "c1", ""), LinkRecord("http://u1.edu/c2", "c2", "")]},
    )
    training = topic_training_graph(graph, corpus, topic, protocol="label-disjoint")
    assert set(training.text) == set(corpus.text) and training.links == graph.links
    assert training.targets == {"http://u1.edu/c1"} and "http://u1.edu/c2" not in training.labels
    host_disjoint = topic_training_graph(graph, corpus, topic)
    assert set(host_disjoint.text) == {"http://u1.edu/c1", "http://u2.edu/c"}
    with pytest.raises(ValueError, match="protocol must be one of"):
        topic_training_examples(corpus, topic, protocol="peeking")


# -- micro-batching -----------------------------------------------------------------

def test_batcher_classifies_a_full_batch_at_once() -> None:
    calls: list[list[int]] = []
    batcher = MicroBatcher(lambda items: calls.append(list(items)) or [i * 10 for i in items],
                           max_size=3, wait=60.0, nothing_in_flight=lambda: False)
    results: list[int] = []
    for i in range(1, 4):
        batcher.submit(i).addCallback(results.append)
    assert calls == [[1, 2, 3]] and results == [10, 20, 30]
    batcher.flush()  # nothing pending: no empty batch
    assert batcher.batches == 1 and batcher.items == 3


def test_batcher_does_not_wait_when_nothing_else_can_arrive() -> None:
    batcher = MicroBatcher(lambda items: [len(items)] * len(items), max_size=16, wait=60.0)
    results: list[int] = []
    batcher.submit("page").addCallback(results.append)
    assert results == [1]


def test_batcher_passes_a_classifier_error_to_every_waiting_page() -> None:
    def broken(items: object) -> list[int]:
        raise RuntimeError("model exploded")

    batcher = MicroBatcher(broken, max_size=2, wait=60.0, nothing_in_flight=lambda: False)
    errors: list[str] = []
    for item in range(2):
        batcher.submit(item).addErrback(lambda failure: errors.append(failure.getErrorMessage()))
    assert errors == ["model exploded", "model exploded"]


def test_batcher_flushes_after_its_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = task.Clock()
    from twisted.internet import reactor

    monkeypatch.setattr(reactor, "callLater", clock.callLater)
    batcher = MicroBatcher(lambda items: list(items), max_size=16, wait=0.02, nothing_in_flight=lambda: False)
    results: list[str] = []
    batcher.submit("a").addCallback(results.append)
    batcher.submit("b").addCallback(results.append)
    clock.advance(0.019)
    assert results == []
    clock.advance(0.002)
    assert results == ["a", "b"] and batcher.batches == 1
