"""Topics from a hand-made corpus with a 3-level taxonomy, and the evaluator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crawlproject.evaluation.corpus import Corpus
from crawlproject.evaluation.evaluate import Evaluator, read_crawl
from crawlproject.evaluation.topics import derive_topics, read_topics, write_topics


def hand_corpus() -> Corpus:
    """sci/cs/ai: 6 pages, sci/cs/db: 5, sci/bio: 5, art: 5; plus hubs linking in."""
    labels, text, outlinks = {}, {}, {}
    groups = {"sci/cs/ai": 6, "sci/cs/db": 5, "sci/bio": 5, "art": 5}
    for category, n in groups.items():
        for i in range(n):
            url = f"http://{category.replace('/', '-')}.test/{i}"
            labels[url] = category
            text[url] = f"{category.replace('/', ' ')} page {i} " * 3
            outlinks[url] = []
    # hub2 -> hub1 -> every ai page; hub pages are unlabelled "other"
    for hub in ("http://hub.test/1", "http://hub.test/2", "http://hub.test/3"):
        labels[hub] = "other"
        text[hub] = "links"
    outlinks["http://hub.test/1"] = [u for u in labels if labels[u] == "sci/cs/ai"]
    outlinks["http://hub.test/2"] = ["http://hub.test/1"]
    outlinks["http://hub.test/3"] = ["http://hub.test/2"]
    return Corpus(labels=labels, text=text, outlinks=outlinks)


def test_every_node_with_enough_pages_is_a_topic_at_any_depth() -> None:
    topics = {t.category: t for t in derive_topics(hand_corpus(), min_pages=5)}
    assert set(topics) == {"sci", "sci/cs", "sci/cs/ai", "sci/cs/db", "sci/bio", "art"}
    assert topics["sci"].relevant_count == 16
    assert topics["sci/cs/ai"].keywords == ["sci", "cs", "ai"]
    assert derive_topics(hand_corpus(), min_pages=6)[-1].category == "sci/cs/ai"


def test_seeds_and_targets_are_a_disjoint_reproducible_split() -> None:
    first = {t.id: t for t in derive_topics(hand_corpus(), rng_seed=5)}
    again = {t.id: t for t in derive_topics(hand_corpus(), rng_seed=5)}
    for topic in first.values():
        assert not set(topic.seeds) & set(topic.targets)
        assert len(topic.seeds) + len(topic.targets) == topic.relevant_count
        assert topic.seeds == again[topic.id].seeds


def test_task2_neighbors_are_two_links_before_and_never_relevant() -> None:
    topic = {t.category: t for t in derive_topics(hand_corpus())}["sci/cs/ai"]
    assert topic.neighbors == ["http://hub.test/2"]  # in-linker of the in-linker
    bio = {t.category: t for t in derive_topics(hand_corpus())}["sci/bio"]
    assert bio.neighbors == []  # no page links to it: no Task 2 for this topic


def test_topics_round_trip_through_jsonl(tmp_path: Path) -> None:
    topics = derive_topics(hand_corpus())
    write_topics(topics, tmp_path / "t.jsonl")
    assert read_topics(tmp_path / "t.jsonl") == topics
    (tmp_path / "bad.jsonl").write_text('{"id": 1}\n')
    with pytest.raises(ValueError, match="line 1"):
        read_topics(tmp_path / "bad.jsonl")


def write_crawl(folder: Path, topic_id: str, strategy: str, urls: list[tuple[str, int]]) -> Path:
    folder.mkdir(parents=True)
    (folder / "summary.json").write_text(json.dumps({"topic_id": topic_id, "task": 1, "strategy": strategy}))
    (folder / "history.jsonl").write_text(
        "".join(json.dumps({"canonical_url": u, "status": s}) + "\n" for u, s in urls)
    )
    return folder


def test_evaluator_per_crawl_metrics_and_summary(tmp_path: Path) -> None:
    corpus = hand_corpus()
    topic = {t.category: t for t in derive_topics(corpus)}["sci/cs/ai"]
    targets = topic.targets
    crawls = [
        write_crawl(tmp_path / "bfs", topic.id, "breadth-first",
                    [("http://hub.test/1", 200), ("http://art.test/0", 200), (targets[0], 200), ("http://dead.test/", 404)]),
        write_crawl(tmp_path / "best", topic.id, "best-first",
                    [("http://hub.test/1", 200), (targets[0], 200), (targets[1], 200), (targets[2], 200)]),
    ]
    result = Evaluator(corpus, [topic], top_n=2).evaluate([read_crawl(c) for c in crawls], [2, 4])
    by_strategy = {c["strategy"]: c for c in result["crawls"]}
    assert by_strategy["breadth-first"]["at"]["4"]["harvest_rate"] == pytest.approx(1 / 3)
    assert by_strategy["best-first"]["at"]["4"]["harvest_rate"] == pytest.approx(3 / 4)
    assert by_strategy["best-first"]["at"]["2"]["target_recall"] == pytest.approx(1 / len(targets))
    assert by_strategy["best-first"]["at"]["4"]["search_length_10pct"] == 2
    # the pool's top 2 by similarity to the description are ai pages: best-first has both
    assert by_strategy["best-first"]["at"]["4"]["coverage_smart"] == 1.0
    summary = result["summary"]["task1"]["4"]
    assert summary["best-first"]["harvest_rate"]["mean"] == pytest.approx(3 / 4)
    assert summary["best-first"]["vs_breadth_first"] is None  # one topic: no test


def test_crawl_without_topic_is_a_clear_error(tmp_path: Path) -> None:
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "summary.json").write_text("{}")
    with pytest.raises(ValueError, match="-a topic_id"):
        read_crawl(folder)
