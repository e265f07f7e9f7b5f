"""The search engine: reference-directed votes, BM25 ranking
computed by hand, incremental indexing of real crawls, backlinks, the
command line and clear errors for bad input."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from crawlproject.search.collection import CollectionError, IndexedCollection, copy_pages
from crawlproject.search.document import IndexedPage, parse_page
from crawlproject.search.engine import IndexHome, IndexIdf, QueryError, SearchEngine, parse_weights
from crawlproject.web.text import TermAnalyzer
from tests.conftest import ROOT, UNIVERSITY_HOMES, html, run_crawl

ANALYZER = TermAnalyzer()


def index_of(tmp_path: Path, pages: list[IndexedPage]) -> Path:
    collection = IndexHome(tmp_path / "index").open_or_create()
    writer = collection.writer()
    writer.add_all(pages)
    writer.commit(ANALYZER)
    writer.close()
    collection.close()
    return tmp_path / "index"


def page_at(url: str, body: str, title: str = "page", window: int = 3) -> IndexedPage:
    parsed = parse_page(url, html(body, title), ANALYZER, window)
    assert parsed is not None
    return parsed


def test_one_vote_per_referring_page_per_term(tmp_path: Path) -> None:
    # Referrer a links to t twice, with overlapping windows that share "robotics";
    # referrer b links once. Votes: robotics 2 (a once, b once), lab 1, vision 1.
    a = page_at("http://a.test/", "<p>robotics lab <a href='http://t.test/'>here</a> robotics "
                "<a href='http://t.test/'>again</a> zzz zzz zzz zzz zzz</p>")
    b = page_at("http://b.test/", "<p>zzz zzz zzz zzz vision robotics <a href='http://t.test/'>go</a></p>")
    target = page_at("http://t.test/", "<p>nothing of note</p>")
    folder = index_of(tmp_path, [a, b, target])
    collection = IndexedCollection(IndexHome(folder).current())
    votes = collection.votes("http://t.test/")
    assert votes["robot"] == 2 and votes["lab"] == 1 and votes["vision"] == 1
    assert votes["zzz"] == 2  # a's second window reaches its zzz, b's window too: one vote each
    assert collection.backlinks("http://t.test/") == ["http://a.test/", "http://b.test/"]
    assert collection.backlinks("http://a.test/") == []


def test_votes_for_a_page_not_fetched_yet_wait_for_it(tmp_path: Path) -> None:
    referrer = page_at("http://a.test/", "<p>quantum computing <a href='http://t.test/'>course</a></p>")
    folder = index_of(tmp_path, [referrer])
    engine = SearchEngine(folder)
    assert [hit.key for hit in engine.search("quantum").hits] == ["http://a.test/"]  # t is not in the collection
    collection = IndexedCollection(IndexHome(folder).current())
    writer = collection.writer()
    writer.add(page_at("http://t.test/", "<p>syllabus</p>"))
    writer.commit(ANALYZER)
    writer.close()
    engine.collection.reload()
    hits = engine.search("quantum").hits
    assert {hit.key for hit in hits} == {"http://a.test/", "http://t.test/"}
    assert next(hit for hit in hits if hit.key == "http://t.test/").votes == {"quantum": 1}


def bm25(tf: int, df: int, docs: int, length: int, average: float) -> float:
    """Tantivy's BM25 (k1 = 1.2, b = 0.75), for small field lengths it keeps exactly."""
    idf = math.log(1 + (docs - df + 0.5) / (df + 0.5))
    return idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / average))


def test_ranking_by_hand(tmp_path: Path) -> None:
    pages = [  # text_terms lengths 4, 2, 3 (the analyzer drops nothing here)
        IndexedPage("http://h/1", "http://h/1", "", "apple apple banana cherry"),
        IndexedPage("http://h/2", "http://h/2", "", "apple banana"),
        IndexedPage("http://h/3", "http://h/3", "", "cherry cherry cherry"),
    ]
    pages[2].votes = {"http://h/2": frozenset({"cherri"})}  # h/3 votes "cherry" for h/2
    folder = index_of(tmp_path, pages)
    average = (4 + 2 + 3) / 3
    # votes field: only h/2 has one (length 1, average over the 3 documents = 1/3)
    expected = {
        "http://h/1": bm25(2, 2, 3, 4, average),
        "http://h/2": bm25(1, 2, 3, 2, average) + 2 * bm25(1, 1, 3, 1, 1 / 3),
    }
    engine = SearchEngine(folder, weights=parse_weights("votes:2,text:1"))
    hits = engine.search("apple cherry").hits
    # h/3: text cherry ×3 (df 2)
    expected["http://h/3"] = bm25(3, 2, 3, 3, average)
    expected["http://h/1"] += bm25(1, 2, 3, 4, average)
    assert [hit.key for hit in hits] == sorted(expected, key=expected.__getitem__, reverse=True)
    for hit in hits:
        assert hit.score == pytest.approx(expected[hit.key], rel=1e-4)


def test_a_page_fetched_again_casts_its_new_votes_only(tmp_path: Path) -> None:
    old = page_at("http://a.test/", "<p>physics <a href='http://t.test/'>x</a></p>")
    target = page_at("http://t.test/", "<p>t</p>")
    folder = index_of(tmp_path, [old, target])
    collection = IndexedCollection(IndexHome(folder).current())
    writer = collection.writer()
    writer.add(page_at("http://a.test/", "<p>chemistry <a href='http://t.test/'>x</a></p>"))
    writer.commit(ANALYZER)
    writer.close()
    assert "physic" not in collection.votes("http://t.test/") and collection.votes("http://t.test/")["chemistri"] == 1


def test_a_collection_cut_down_keeps_only_its_own_pages_votes(tmp_path: Path) -> None:
    pages = [page_at("http://a.test/", "<p>alpha <a href='http://t.test/'>x</a></p>", window=1),
             page_at("http://b.test/", "<p>beta <a href='http://t.test/'>x</a></p>", window=1),
             page_at("http://t.test/", "<p>t</p>")]
    folder = index_of(tmp_path, pages)
    home = IndexHome(folder)
    source = IndexedCollection(home.current())
    cut = home.new_collection()
    assert copy_pages(source, cut, ["http://b.test/", "http://t.test/"]) == 2
    writer = cut.writer()
    writer.commit(ANALYZER)
    writer.close()
    assert cut.votes("http://t.test/") == {"beta": 1}
    assert cut.backlinks("http://t.test/") == ["http://b.test/"]


def test_idf_from_the_index(tmp_path: Path) -> None:
    folder = index_of(tmp_path, [IndexedPage(f"http://h/{i}", f"http://h/{i}", "", "common" + " rare" * (i == 0))
                                 for i in range(3)])
    idf = IndexIdf(folder)
    assert idf("common") == pytest.approx(math.log(4 / 4) + 1)
    assert idf("rare") == pytest.approx(math.log(4 / 2) + 1)
    assert idf("unseen") == pytest.approx(math.log(4 / 1) + 1)


def test_a_live_crawl_is_indexed_as_it_goes_and_a_second_crawl_adds_to_it(webkb_replay, tmp_path: Path) -> None:
    index = tmp_path / "index"
    settings = {"FOCUS_INDEX_DIR": str(index), "FOCUS_INDEX_COMMIT_PAGES": 5, "CLOSESPIDER_ITEMCOUNT": 40}
    first = run_crawl("bestfirst", tmp_path / "one", [UNIVERSITY_HOMES[0]], webkb_replay.proxy_url,
                      query="course", settings=settings)
    assert first.returncode == 0, first.log[-2000:]
    ok = {r["canonical_url"] for r in first.history if r["status"] == 200}
    engine = SearchEngine(index)
    assert set(engine.collection.keys()) == ok and first.summary["pages_indexed"] == len(ok)
    home = UNIVERSITY_HOMES[0]
    referrers_before = len(engine.backlinks(home))
    second = run_crawl("bestfirst", tmp_path / "two", [UNIVERSITY_HOMES[0]], webkb_replay.proxy_url,
                       query="research", settings={**settings, "CLOSESPIDER_ITEMCOUNT": 80})
    assert second.returncode == 0, second.log[-2000:]
    engine.collection.reload()
    keys = set(engine.collection.keys())
    assert ok < keys  # the same collection, grown
    assert len(engine.backlinks(home)) >= referrers_before
    hits = engine.search("course").hits
    assert hits and all(hit.key in keys for hit in hits)


def search_command(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scrapy", "search", *args], cwd=ROOT,  # noqa: S603
                          capture_output=True, text=True, timeout=120)


def test_search_and_index_commands(webkb_replay, tmp_path: Path) -> None:
    crawl = run_crawl("bestfirst", tmp_path / "crawl", [UNIVERSITY_HOMES[1]], webkb_replay.proxy_url,
                      query="course", settings={"CLOSESPIDER_ITEMCOUNT": 40})
    assert crawl.returncode == 0
    index = tmp_path / "index"
    indexed = subprocess.run([sys.executable, "-m", "scrapy", "index", str(crawl.folder), "--index", str(index)],
                             cwd=ROOT, capture_output=True, text=True, timeout=120)  # noqa: S603
    pages = sum(1 for r in crawl.history if r["status"] == 200)
    assert indexed.returncode == 0 and f"the collection holds {pages} pages" in indexed.stdout, indexed.stderr
    found = search_command("--index", str(index), "--json", "-n", "3", "computer", "science")
    answer = json.loads(found.stdout)
    assert answer["total"] >= 1 and len(answer["results"]) <= 3 and answer["terms"] == ["comput", "scienc"]
    assert all(r["url"].startswith("http") and "snippet" in r for r in answer["results"])
    readable = search_command("--index", str(index), "computer")
    assert readable.returncode == 0 and "  1. " in readable.stdout
    backlinks = search_command("--index", str(index), "--backlinks", answer["results"][0]["url"])
    assert backlinks.returncode == 0


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--index", "{index}", ""], "empty query"),
        (["--index", "{index}", "the of and"], "only stopwords"),
        (["--index", "{missing}", "course"], "no index at"),
        (["--index", "{corrupt}", "course"], "corrupt"),
        (["--index", "{index}", "-n", "0", "x"], "at least 1"),
    ],
)
def test_bad_search_input_gets_one_clear_line(tmp_path: Path, arguments: list[str], message: str) -> None:
    index = index_of(tmp_path, [IndexedPage("http://h/", "http://h/", "t", "course")])
    corrupt = tmp_path / "corrupt"
    corrupt_home = IndexHome(corrupt)
    collection = corrupt_home.open_or_create()
    collection.close()
    (corrupt_home.current() / "store.sqlite").write_bytes(b"this is not a database" * 100)
    names = {"index": str(index), "missing": str(tmp_path / "nowhere"), "corrupt": str(corrupt)}
    completed = search_command(*(a.format(**names) for a in arguments))
    assert completed.returncode == 2, completed.stdout
    assert message in completed.stderr and "Traceback" not in completed.stderr
    assert completed.stderr.count("\n") <= 2


def test_engine_errors_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(CollectionError, match="no index at"):
        SearchEngine(tmp_path / "nowhere")
    (tmp_path / "stuff").mkdir()
    (tmp_path / "stuff" / "file.txt").write_text("mine")
    with pytest.raises(CollectionError, match="not an index folder"):
        IndexHome(tmp_path / "stuff").open_or_create()
    engine = SearchEngine(index_of(tmp_path, [IndexedPage("http://h/", "http://h/", "t", "course")]))
    with pytest.raises(QueryError, match="empty query"):
        engine.search("   ")
    with pytest.raises(ValueError, match="unknown field"):
        parse_weights("anchors:1")


def test_malformed_and_non_html_pages(tmp_path: Path) -> None:
    assert parse_page("http://h/", b"\x89PNG\r\n", ANALYZER, 5, content_type="image/png") is None
    assert parse_page("http://h/", b"", ANALYZER, 5) is None
    broken = parse_page("http://h/", b"<html><title>T</title><p>caf\xe9 <a href='/x'>link<p>unclosed", ANALYZER, 5,
                        content_type="text/html; charset=iso-8859-1")
    assert broken is not None and broken.title == "T" and "café" in broken.text
    assert "http://h/x" in broken.votes
