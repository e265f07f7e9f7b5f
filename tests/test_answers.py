"""Verdicts a user can check (crawlproject.judges.answers, ``scrapy label``):
the user's word is final, answers re-judge a finished crawl and every file
agrees, the precision stated is measured on a fair sample of the calls."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from crawlproject.judges.answers import Answer, AnswerBook, JudgedPage, Rejudge, answers_needed
from crawlproject.replay.process import ReplayProcess
from crawlproject.web.text import TermAnalyzer
from tests.conftest import FAST_REPLAY_SETTINGS, ROOT

DOCSWEB = ROOT.parent / "shared" / "corpora" / "docsweb" / "docsweb.warc.gz"
APACHE = "http://httpd.apache.org/docs/2.4/"
#: the topic: Apache's modules; the irrelevant examples, other pages of the same manual a crawl meets
RELEVANT = [f"{APACHE}mod/{name}.html" for name in ("mod_ssl", "mod_rewrite", "mod_proxy", "mod_alias", "mod_deflate",
                                                    "mod_headers", "mod_log_config", "mod_mime", "mod_dir", "mod_env")]
IRRELEVANT = [f"{APACHE}{name}.html" for name in ("install", "invoking", "stopping", "configuring", "sections",
                                                  "urlmapping", "logs", "license", "glossary", "sitemap")]


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A crawl of Apache's manual judged by a topic from 10 + 10 examples."""
    folder = tmp_path_factory.mktemp("answers")
    (folder / "relevant.txt").write_text("\n".join(RELEVANT) + "\n")
    (folder / "irrelevant.txt").write_text("\n".join(IRRELEVANT) + "\n")
    with ReplayProcess(str(DOCSWEB)) as replay:
        trained = subprocess.run(  # noqa: S603
            [sys.executable, "-m", "scrapy", "train", "--examples", str(folder / "relevant.txt"), "--negatives",
             str(folder / "irrelevant.txt"), "--seeds", f"{APACHE}index.html", "--sample", "60",
             "-o", str(folder / "topic.npz"), "-s", f"FOCUS_REPLAY_PROXY={replay.proxy_url}"],
            cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert trained.returncode == 0, trained.stderr[-2000:]
        settings = {**FAST_REPLAY_SETTINGS, "FOCUS_REPLAY_PROXY": replay.proxy_url, "CLOSESPIDER_PAGECOUNT": 120,
                    "FOCUS_OUTPUT_DIR": folder / "crawl", "FOCUS_COLLECTION": True}
        command = [sys.executable, "-m", "scrapy", "crawl", "focus", "-a", "strategy=best-first",
                   "-a", f"model={folder / 'topic.npz'}", "-a", f"seeds={APACHE}index.html"]
        for name, value in settings.items():
            command += ["-s", f"{name}={value}"]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)  # noqa: S603
        assert done.returncode == 0, done.stderr[-2000:]
    return folder / "crawl", trained.stdout


def relevant_everywhere(folder: Path) -> tuple[set[str], set[str], int]:
    """The relevant pages by the history and by the collection, and the summary's count."""
    history = {row["canonical_url"] for row in map(json.loads, (folder / "history.jsonl").read_text().splitlines())
               if row.get("relevant") is True and not row.get("near_duplicate_of")}
    collection = {row["canonical_url"] for row in
                  map(json.loads, (folder / "collection" / "relevant.jsonl").read_text().splitlines())}
    return history, collection, json.loads((folder / "summary.json").read_text())["relevant_called"]


def test_irrelevant_examples_are_never_called_relevant(crawled: Any) -> None:
    folder, _ = crawled
    history = [json.loads(line) for line in (folder / "history.jsonl").read_text().splitlines()]
    fetched = {row["canonical_url"]: row for row in history if row.get("status") == 200}
    negatives = [url for url in IRRELEVANT if url in fetched]
    assert len(negatives) >= 2  # the crawl met them: the rule is exercised
    assert not [url for url in negatives if fetched[url]["relevant"]]
    by_history, by_collection, count = relevant_everywhere(folder)
    assert not by_collection & set(negatives) and by_history == by_collection and count == len(by_history)


def test_no_answers_leave_the_collection_and_every_file_agrees(crawled: Any, tmp_path: Path) -> None:
    folder, _ = crawled
    before, _, _ = relevant_everywhere(folder)
    said_no = sorted(before)[:3]
    labels = tmp_path / "labels.tsv"
    labels.write_text("".join(f"{url}\tno\n" for url in said_no))
    done = subprocess.run([sys.executable, "-m", "scrapy", "label", str(folder), "--labels", str(labels)],  # noqa: S603
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "3 answers read" in done.stdout and "precision" in done.stdout
    by_history, by_collection, count = relevant_everywhere(folder)
    assert not by_history & set(said_no) and by_history == by_collection and count == len(by_history)
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["answers"]["given"] >= 3 and "said" in summary["answers"]["precision"]
    assert "your answers" in (folder / "report.html").read_text()


def test_the_terminal_asks_one_page_at_a_time_and_takes_y_n_skip(crawled: Any) -> None:
    folder, _ = crawled
    done = subprocess.run([sys.executable, "-m", "scrapy", "label", str(folder), "--questions", "4"],  # noqa: S603
                          input="y\nn\ns\nmaybe\ny\n", cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("Relevant to the topic?") == 5  # "maybe" is asked again
    assert "[1/4, to teach the judge]" in done.stdout and "[2/4, a fair sample of its calls]" in done.stdout
    assert "answer y, n, s or q" in done.stderr
    kinds = [json.loads(line)["kind"] for line in (folder / "answers.jsonl").read_text().splitlines()]
    assert kinds[-3:] == ["teach", "sample", "sample"]  # the third question was skipped: the fourth is a sample again


def test_train_warns_when_it_cannot_tell_the_examples_apart(crawled: Any) -> None:
    _, report = crawled
    print(report)
    assert "Irrelevant examples it would call relevant" in report


def pages(rng: random.Random, count: int = 200) -> tuple[list[JudgedPage], set[str]]:
    """Pages whose text says what they are; a judge that calls every page
    relevant, and ranks the relevant ones a little higher."""
    found, relevant = [], set()
    for i in range(count):
        topic = rng.random() < 0.3
        words = ("module directive config " if topic else "install license history ") * 5
        url = f"http://t.test/{i}"
        found.append(JudgedPage(url, 0.65 + rng.random() * 0.15 + 0.05 * topic, True, words + f"page{i}"))
        if topic:
            relevant.add(url)
    return found, relevant


def test_sample_answers_measure_precision_and_teach_answers_teach(tmp_path: Path) -> None:
    rng = random.Random(2)
    found, relevant = pages(rng)
    judge = Rejudge(found, AnswerBook(tmp_path), TermAnalyzer(), judge_estimate=(0.9, 0.6, 1.0))
    assert str(judge.precision()).startswith("90% (60%–100%), the judge's own estimate")
    for _ in range(10):  # taught: it tells the two kinds apart by their words
        for url in judge.questions("teach", 1, rng):
            judge.book.add(Answer(url, url in relevant, "teach"))
        judge.fit()
    calls = judge.calls()
    assert {url for url, called in calls.items() if called} == relevant
    for url in judge.questions("sample", 30, rng):  # a fair sample of its calls: all right
        judge.book.add(Answer(url, url in relevant, "sample"))
    statement = judge.precision()
    assert statement.known and statement.value == 1.0 and statement.measured_on == 30
    assert "measured on 30 of your answers" in str(statement)


def test_a_wide_interval_is_unknown_and_says_how_many_answers_would_do(tmp_path: Path) -> None:
    found, relevant = pages(random.Random(3))
    book = AnswerBook(tmp_path)
    for url in sorted(found_url.url for found_url in found)[:3]:
        book.add(Answer(url, url in relevant, "sample"))
    statement = Rejudge(found, book, TermAnalyzer()).precision()
    assert not statement.known and statement.needed >= 1
    assert str(statement).startswith(f"unknown — answer {statement.needed} page")
    assert str(statement).endswith(" to know (scrapy label)")
    assert answers_needed() > 3


def test_a_page_of_the_fair_sample_answered_again_stays_in_the_sample(tmp_path: Path) -> None:
    # A later answer on a sampled page (the dashboard's "given") replaced the sample answer, and the
    # page left the fair sample: the precision statement could fall back to "unknown".
    book = AnswerBook(tmp_path)
    book.add(Answer("http://a.test/1", True, "sample"))
    book.add(Answer("http://a.test/1", False, "given"))  # the user changes their mind: their word counts
    book.add(Answer("http://a.test/2", True, "teach"))
    for read in (book, AnswerBook(tmp_path)):  # as kept, and as read back from answers.jsonl
        assert [(a.url, a.relevant) for a in read.of_kind("sample")] == [("http://a.test/1", False)]
        assert read.word() == {"http://a.test/1": False, "http://a.test/2": True}


def test_answers_from_python_wait_for_the_folder_s_writer(crawled: Any) -> None:
    # Collection.answer wrote answers.jsonl and re-settled the history with no lock: a crawl
    # (or `scrapy label`) still writing the folder was trampled; the dashboard's answers took it.
    from crawlproject.api import Collection
    from crawlproject.store_lock import StoreInUse, lock_dir

    folder, _ = crawled
    answers = folder / "answers.jsonl"
    before = answers.read_bytes() if answers.exists() else b""
    url = sorted(relevant_everywhere(folder)[0])[0]
    with lock_dir(folder, "a crawl still writing"), pytest.raises(StoreInUse, match="is in use by PID"):
        Collection(pages=[], summary={}, folder=folder).answer({url: False})
    assert (answers.read_bytes() if answers.exists() else b"") == before
