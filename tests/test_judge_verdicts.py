"""Verdicts people can trust: a topic learnt where few pages are
relevant still calls a crawl's many relevant pages relevant; one crawl gives
one count of relevant pages wherever it says one; the threshold shown is the
one in force; a crawl with labels shows its judge's precision by them."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

from crawlproject.corpus.labels import is_relevant, load_labels
from crawlproject.dashboard.attach import FolderBackend
from crawlproject.models.topic_page import TopicPageModel
from tests.conftest import FAST_REPLAY_SETTINGS, ROOT, html, run_crawl, write_warc

DOCSWEB = ROOT.parent / "shared/corpora/docsweb"
WARC, LABELS = DOCSWEB / "docsweb.warc.gz", DOCSWEB / "labels.tsv"
TERMINALS = "gnuplot/Gnuplot/Terminal types"
TERMINAL_SEEDS = ["http://www.gnuplot.info/docs_5.4/node590.html", "http://www.gnuplot.info/docs_5.4/node627.html"]


TOPIC_WORDS = [f"jazz{i}" for i in range(40)]
OTHER_WORDS = [f"word{i}" for i in range(600)]
SHARED_WORDS = ["page", "home", "news", "contact", "about"]


def topic_text(rng: np.random.Generator, topic_words: int) -> str:
    """A page of 24 words, *topic_words* of them the topic's."""
    words = rng.choice(TOPIC_WORDS, topic_words).tolist() + rng.choice(OTHER_WORDS, 24 - topic_words).tolist()
    return " ".join(words + SHARED_WORDS)


def test_a_topic_learnt_where_one_page_in_a_hundred_is_relevant_calls_a_crawl_that_meets_many(tmp_path: Path) -> None:
    """The pages near the examples' seeds are 1 % relevant, the crawl's 75 %:
    under the near pages' share the model called 43 % of the crawl's
    relevant pages relevant (9 % of them on a documentation web it had never
    seen); moved to the share the crawl meets, most of them."""
    rng = np.random.default_rng(7)
    relevant = [topic_text(rng, int(rng.integers(2, 9))) for _ in range(60)]  # more or less on the topic
    irrelevant = [topic_text(rng, int(rng.integers(0, 2))) for _ in range(20)]
    examples = [topic_text(rng, int(rng.integers(2, 9))) for _ in range(10)]
    near = [topic_text(rng, int(rng.integers(0, 2))) for _ in range(198)] + [topic_text(rng, 5) for _ in range(2)]
    TopicPageModel().fit(examples, [], near).save(tmp_path / "topic.npz")
    texts = relevant + irrelevant
    urls = [f"http://jazz.test/{'r' if n < len(relevant) else 'i'}{n}.html" for n in range(len(texts))]
    hub = "".join(f'<a href="{url}">{n}</a> ' for n, url in enumerate(urls))
    pages = [("http://jazz.test/", 200, [("Content-Type", "text/html")], html(hub, "jazz"))]
    pages += [(url, 200, [("Content-Type", "text/html")], html(f"<p>{text}</p>", "jazz"))
              for url, text in zip(urls, texts, strict=True)]
    warc = write_warc(tmp_path / "jazz.warc.gz", pages)
    result = run_crawl("bestfirst", tmp_path / "out", ["http://jazz.test/"], None, settings={
        "FOCUS_REPLAY_WARC": str(warc), "CLOSESPIDER_PAGECOUNT": 100, "FOCUS_STORE_PAGES": False,
    }, extra_args=["-a", f"model={tmp_path / 'topic.npz'}"])
    assert result.returncode == 0, result.log[-3000:]
    met = [r for r in result.history if r.get("relevance") is not None and "/r" in r["canonical_url"]]
    assert len(met) == len(relevant)  # the crawl meets every page of the site
    called = [r for r in result.history if r.get("relevant")]
    right = sum("/r" in r["canonical_url"] for r in called)
    assert right >= 0.7 * len(relevant), (right, len(called))
    assert right >= 0.8 * len(called)  # and not by calling every page relevant
    stated = result.summary["judge"]["precision"]  # told by its examples, with an interval that holds
    assert stated["basis"] == "examples" and stated["calls"] == result.summary["relevant_called"]
    assert stated["low"] <= right / len(called) <= stated["high"], stated


ONE_CRAWL = """
import json, sys
import crawlproject

settings, folder = json.loads(sys.argv[1]), sys.argv[2]
collection = crawlproject.crawl(seeds={seeds!r}, query="gnuplot terminal driver output device", budget=150,
                                strategy="best-first", settings=settings, output_dir=folder, progress=False)
print(json.dumps({{"relevant": len(collection.relevant), "summary": collection.summary}}))
"""


def test_one_crawl_gives_one_count_of_relevant_pages_wherever_it_says_one(tmp_path: Path) -> None:
    """The summary, the judge's own block, the report, the collection, the
    Python call and the dashboard: one number for a finished crawl (it was
    135, 117, 136, 116 and 117 in one crawl). The calibration changes calls
    at the end, and the gnuplot manual has near-duplicate pages."""
    folder = tmp_path / "crawl"
    settings = {**FAST_REPLAY_SETTINGS, "FOCUS_REPLAY_WARC": str(WARC), "FOCUS_STORE_PAGES": False,
                "LOG_LEVEL": "WARNING", "FOCUS_REPORT": True}
    completed = subprocess.run(  # noqa: S603
        [sys.executable, "-c", ONE_CRAWL.format(seeds=TERMINAL_SEEDS), json.dumps(settings), str(folder)],
        cwd=tmp_path, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    said = json.loads(completed.stdout.strip().splitlines()[-1])
    summary = said["summary"]
    count = summary["relevant_called"]
    history = [json.loads(line) for line in (folder / "history.jsonl").read_text().splitlines()]
    assert any(r.get("relevant_when_fetched") is not None for r in history)  # calls changed at the end
    assert count > 0
    collected = (folder / "collection" / "relevant.jsonl").read_text().splitlines()
    reported = re.search(r"<h2>Relevant pages \((\d+)\)</h2>", (folder / "report.html").read_text())
    dashboard = FolderBackend(folder, folder / "user-labels.tsv").snapshot()
    assert (said["relevant"], summary["judge"]["called_relevant"], len(collected),
            int(reported.group(1)) if reported else None, dashboard["pages"]["judged_relevant"]) == (count,) * 5
    assert len(list((folder / "collection" / "relevant").glob("*.md"))) == count
    # "when fetched" appears only under that name, and only where calls changed
    assert summary["relevant_called_when_fetched"] != count


def test_the_threshold_shown_is_the_one_in_force_and_labels_measure_the_judge(tmp_path: Path) -> None:
    """A query judge calibrated on the crawl calls pages from a relevance
    far below 0.5 (the dashboard wrote "relevance ≥ 0.5" above pages called
    at 0.20–0.48), and a crawl with labels shows its judge's precision by them
    in the report (the demo's said "unknown")."""
    result = run_crawl("bestfirst", tmp_path / "out", TERMINAL_SEEDS, None,
                       query="gnuplot terminal driver output device", settings={
                           "FOCUS_REPLAY_WARC": str(WARC), "CLOSESPIDER_PAGECOUNT": 120, "FOCUS_STORE_PAGES": False,
                           "FOCUS_LABELS": str(LABELS), "FOCUS_RELEVANT": TERMINALS, "FOCUS_REPORT": True})
    assert result.returncode == 0, result.log[-3000:]
    judge = result.summary["judge"]
    called = [r for r in result.history if r.get("relevant") and not r.get("near_duplicate_of")]
    judged = [r for r in result.history if r.get("relevance") is not None and not r.get("near_duplicate_of")]
    # the threshold shown parts the pages called relevant from the others (0.5 did not)
    assert called and judge["threshold"] < 0.5
    assert all(r["relevant"] == (r["relevance"] >= judge["threshold"]) for r in judged), judge["threshold"]
    labels = load_labels(LABELS)
    right = sum(is_relevant(labels.get(r["canonical_url"]), (TERMINALS,)) for r in called)
    measured = result.summary["judge_by_labels"]
    assert (measured["called"], measured["labelled_relevant"]) == (len(called), right)
    report = (tmp_path / "out" / "report.html").read_text()
    assert "the judge&#x27;s precision, by the labels" in report or "the judge's precision, by the labels" in report
    assert f"{right:,} of the {len(called):,} pages it called relevant are labelled relevant" in report
    assert f"{judge['threshold']:.3g}" in report
