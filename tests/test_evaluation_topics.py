"""Topics from a hand-made corpus with a 3-level taxonomy, and the evaluator."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from crawlproject.corpus.reader import Corpus
from crawlproject.evaluation.evaluate import Evaluator, read_crawl
from crawlproject.evaluation.topics import derive_topics, read_topics, seed_terms, write_topics


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
        write_crawl(
            tmp_path / "bfs",
            topic.id,
            "breadth-first",
            [("http://hub.test/1", 200), ("http://art.test/0", 200), (targets[0], 200), ("http://dead.test/", 404)],
        ),
        write_crawl(
            tmp_path / "best",
            topic.id,
            "best-first",
            [("http://hub.test/1", 200), (targets[0], 200), (targets[1], 200), (targets[2], 200)],
        ),
    ]
    result = Evaluator(corpus, [topic], top_n=2).evaluate([read_crawl(c) for c in crawls], [2, 4], axis="fetches")
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


def test_ok_axis_counts_status_200_pages_and_reports_dead_fetches_apart(tmp_path: Path) -> None:
    corpus = hand_corpus()
    topic = {t.category: t for t in derive_topics(corpus)}["sci/cs/ai"]
    t0, t1 = topic.targets[:2]
    crawl = write_crawl(
        tmp_path / "bfs", topic.id, "breadth-first",
        [("http://dead.test/1", 404), ("http://hub.test/1", 200), ("http://dead.test/2", 404),
         ("http://dead.test/3", None), (t0, 200), (t1, 200)],
    )
    evaluator = Evaluator(corpus, [topic], top_n=2)
    ok = evaluator.evaluate([read_crawl(crawl)], [2, 3], axis="ok")["crawls"][0]["at"]
    # 2 good pages: the hub and t0, with 3 dead fetches before t0
    assert ok["2"]["pages"] == 2 and ok["2"]["dead_fetches"] == 3
    assert ok["2"]["harvest_rate"] == pytest.approx(1 / 2)
    needed = math.ceil(0.25 * len(topic.targets))  # t0 is the 2nd good page, t1 the 3rd
    assert ok["3"]["search_length_25pct"] == (1 + needed if needed <= 2 else None)
    every = evaluator.evaluate([read_crawl(crawl)], [2, 3], axis="fetches")["crawls"][0]["at"]
    assert every["2"]["pages"] == 2 and every["2"]["dead_fetches"] == 1
    assert every["3"]["harvest_rate"] == pytest.approx(0.0)
    with pytest.raises(ValueError, match="axis"):
        evaluator.evaluate([read_crawl(crawl)], [2], axis="pages")


def test_summary_search_length_ratio_and_holm_corrected_tests(tmp_path: Path) -> None:
    from crawlproject.evaluation.evaluate import summarize

    def at(harvest: float, length: int | None) -> dict[str, object]:
        metrics = dict.fromkeys(("target_recall", "average_relevance", "coverage_smart", "coverage_kw_pr"), 0.0)
        return {"10": {**metrics, "harvest_rate": harvest, "pages": 10, "dead_fetches": 0,
                       "search_length_25pct": length, "search_length_50pct": None}}

    crawls = []
    for i, topic in enumerate("abcd"):
        crawls += [
            {"task": 1, "topic_id": topic, "strategy": "breadth-first", "at": at(0.1 + 0.01 * i, 8)},
            {
                "task": 1,
                "topic_id": topic,
                "strategy": "best-first",
                "at": at(0.2 + 0.02 * i, 2 + 2 * i if i else None),
            },
            {"task": 1, "topic_id": topic, "strategy": "link-value", "at": at(0.5 + 0.01 * (i % 2), 2)},
        ]
    rows = summarize(crawls, [10])["task1"]["10"]
    length = rows["link-value"]["search_length"]["search_length_25pct"]
    assert length == {"median": 2.0, "reached": 4, "n": 4, "ratio_to_breadth_first": 0.25}
    # best-first never got there on one topic: it counts as longer than any that did
    assert rows["best-first"]["search_length"]["search_length_25pct"]["median"] == 7.0
    assert rows["best-first"]["search_length"]["search_length_25pct"]["reached"] == 3
    tests = [
        rows[s][k] for s in ("best-first", "link-value") for k in ("vs_breadth_first", "vs_best_first") if rows[s][k]
    ]
    assert len(tests) == 3  # best-first is not tested against itself
    smallest = min(tests, key=lambda t: t["p"])
    assert smallest["p_holm"] == pytest.approx(3 * smallest["p"])
    assert all(t["p_holm"] >= t["p"] for t in tests)


def test_seed_terms_prefer_words_many_seeds_share_and_the_corpus_lacks() -> None:
    pages = {
        "http://s.test/1": "neural networks lecture skrentny",
        "http://s.test/2": "neural networks lecture homework",
        "http://s.test/3": "neural networks page",
        "http://s.test/4": "neural page",
    }
    others = {f"http://o.test/{i}": "page lecture homework" if i < 3 else "page" for i in range(20)}
    corpus = Corpus(labels={}, text={**pages, **others}, outlinks={})
    # by hand, N = 24 pages, 4 seeds: neural 1·log(1/(4/24)) = 1.79; networks
    # .75·log(.75/(3/24)) = 1.34; lecture .5·log(.5/(5/24)) = 0.44;
    # page: on every page, 0; skrentny and homework: on one seed only, left
    # out however rare
    assert seed_terms(corpus, list(pages), k=10) == ["neural", "networks", "lecture"]
    assert seed_terms(corpus, list(pages), k=2) == ["neural", "networks"]
    topics = derive_topics(hand_corpus(), query="seed-terms")
    assert {t.id for t in topics} == {t.id for t in derive_topics(hand_corpus())}  # the same topics
    with pytest.raises(ValueError, match="query kind"):
        derive_topics(hand_corpus(), query="words")


def test_a_cache_two_processes_want_at_once_is_built_once(tmp_path: Path) -> None:
    """`scrapy train` and `scrapy topics` (or two test workers) asking for the
    same corpus cache: the second waits for the first's file instead of
    reading the whole WARC again."""
    import threading

    from crawlproject.disk_cache import cached

    cache_file = tmp_path / "corpus-x.pickle"
    second_entered, second_built = threading.Event(), threading.Event()
    builds = []

    def first_build() -> str:
        builds.append("first")
        assert second_entered.wait(10)
        # the second call is now past its first look for the file: if it builds, it does so now
        second_built.wait(2)
        return "value"

    def second_build() -> str:
        builds.append("second")
        second_built.set()
        return "value"

    found = {}
    first = threading.Thread(target=lambda: found.setdefault("first", cached(cache_file, first_build)))
    first.start()

    def second() -> None:
        second_entered.set()
        found["second"] = cached(cache_file, second_build)

    while not builds:  # the first call is building (its lock held) before the second starts
        first.join(0.01)
    other = threading.Thread(target=second)
    other.start()
    first.join(30)
    other.join(30)
    assert builds == ["first"] and found == {"first": "value", "second": "value"}


def test_a_corpus_read_once_is_not_read_again_for_other_labels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages and labels are cached apart: `scrapy train` with a user's
    edited labels does not parse the whole WARC again."""
    from crawlproject.corpus import reader
    from tests.conftest import html, write_warc

    warc = write_warc(
        tmp_path / "c.warc.gz",
        [
            (
                f"http://s.test/{i}",
                200,
                [("Content-Type", "text/html")],
                html(f"page {i} <a href='http://s.test/{i + 1}'>next</a>"),
            )
            for i in range(3)
        ],
    )
    reads = []
    real = reader.archived_pages
    monkeypatch.setattr(reader, "archived_pages", lambda path: reads.append(path) or real(path))
    first, second = tmp_path / "a.tsv", tmp_path / "b.tsv"
    first.write_text("http://s.test/0\tcourse\n", encoding="utf-8")
    second.write_text("http://s.test/0\tstudent\nhttp://s.test/1\tcourse\n", encoding="utf-8")
    one = reader.load_corpus(warc, first, tmp_path / "cache")
    other = reader.load_corpus(warc, second, tmp_path / "cache")
    assert len(reads) == 1
    assert one.labels == {"http://s.test/0": "course"}
    assert other.labels == {"http://s.test/0": "student", "http://s.test/1": "course"}
    assert one.text == other.text and other.outlinks["http://s.test/0"] == ["http://s.test/1"]
