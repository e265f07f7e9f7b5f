"""The online link learner in real crawls of the replayed WebKB,
and a topic from example URLs (`scrapy train --examples`)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from crawlproject.models.online_link_model import LinkLearner
from crawlproject.models.topic_page import TopicPageModel
from tests.conftest import ROOT, UNIVERSITY_HOMES, WEBKB_LABELS, run_crawl

QUERY = "course syllabus lecture homework"
CORNELL = "http://www.cs.cornell.edu/"


def test_a_link_learner_crawl_learns_from_its_own_fetches(webkb_replay: Any, tmp_path: Path) -> None:
    result = run_crawl(
        "linklearner", tmp_path / "crawl", UNIVERSITY_HOMES, webkb_replay.proxy_url, query=QUERY,
        settings={"CLOSESPIDER_ITEMCOUNT": 200, "JOBDIR": str(tmp_path / "job")},
    )
    assert result.returncode == 0, result.log[-3000:]
    learner = result.summary["focused"]
    fetched = result.summary["pages_fetched"]
    # every fetch but the seeds' taught it: a page's relevance, or a dead end
    assert learner["learner/examples"] >= fetched - len(UNIVERSITY_HOMES) - 16  # those in flight at the end
    assert learner["learner/dead_ends"] > 0 and learner["learner/rescores"] > 0
    assert "'frontier/rescored_some'" in result.log  # siblings re-scored as soon as a fetch told something
    assert re.search(r"Link learner: \d+ examples", result.log)
    # what it learnt stays with the JOBDIR, for a resumed crawl
    saved = LinkLearner.load(tmp_path / "job" / "link-learner.npz")
    assert saved.learned >= learner["learner/examples"] - 16 and saved.history.cells


def test_a_repeatable_crawl_is_the_same_crawl_every_run(webkb_replay: Any, tmp_path: Path) -> None:
    """FOCUS_REPEATABLE: one page at a time, the next chosen once the last was
    processed — what the demo relies on for the same figures every run."""
    orders = []
    for run in range(2):
        result = run_crawl(
            "linklearner", tmp_path / f"run{run}", UNIVERSITY_HOMES, webkb_replay.proxy_url, query=QUERY,
            settings={"CLOSESPIDER_ITEMCOUNT": 120, "FOCUS_REPEATABLE": True, "CONCURRENT_REQUESTS": 16},
        )
        assert result.returncode == 0, result.log[-3000:]
        orders.append([record["canonical_url"] for record in result.history])
    assert len(orders[0]) >= 120 and orders[0] == orders[1]


def train_from_examples(*arguments: str, proxy: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "scrapy", "train", *arguments, "-s", f"FOCUS_REPLAY_PROXY={proxy}",
               "-s", "DOWNLOAD_DELAY=0", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=8"]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)  # noqa: S603


@pytest.fixture(scope="module")
def course_examples() -> list[str]:
    """Ten course pages of Cornell (the user's examples of a topic)."""
    lines = WEBKB_LABELS.read_text(encoding="utf-8").splitlines()
    return [line.split("\t")[0] for line in lines if line.endswith("\tcourse/cornell")][:10]


def test_a_topic_from_example_urls_fetched_through_scrapy(
    webkb_replay: Any, tmp_path: Path, course_examples: list[str]
) -> None:
    examples = tmp_path / "courses.txt"
    examples.write_text("\n".join(course_examples) + "\n")
    model = tmp_path / "courses.npz"
    done = train_from_examples("--examples", str(examples), "--seeds", CORNELL, "--sample", "120", "-o", str(model),
                               proxy=webkb_replay.proxy_url)
    assert done.returncode == 0, done.stderr[-3000:]
    # the pages near the seeds (what a crawl from them meets) are the unlabelled pages; some of
    # them, surely unlike the examples, the negatives; none of them an example
    found = re.search(r"Trained on 10 relevant and 0 irrelevant examples and (\d+) pages near the seeds "
                      r"\((\d+) of them surely unlike the examples", done.stdout)
    assert found and 50 < int(found[1]) <= 120 and 0 < int(found[2]) < int(found[1])
    # the report's precision is an estimate on those pages, not a cross-validation on easy negatives
    # its precision with an interval, or "unknown" when it calls none of them
    assert re.search(r"On the pages near the seeds .* estimated precision (\d+% \(\d+%–\d+%\)|unknown \(it calls "
                     r"none of them relevant\)), recall \d+%", done.stdout), done.stdout[-2000:]
    trained = TopicPageModel.load(model)
    assert set(trained.report["examples"]["relevant"]) <= set(course_examples)
    assert trained.report["unlabelled"] == int(found[1]) and trained.report["on_unlabelled"]["relevant_share"] > 0
    # the pages were fetched through Scrapy (a crawl of its own, with its history)
    history = [
        json.loads(line) for line in (tmp_path / "courses" / "examples" / "history.jsonl").read_text().splitlines()
    ]
    assert {record["url"] for record in history} >= set(course_examples)
    # the model drives the link learner: its good category is its own
    crawl = run_crawl("linklearner", tmp_path / "crawl", [CORNELL, *course_examples[:3]], webkb_replay.proxy_url,
                      settings={"CLOSESPIDER_ITEMCOUNT": 80}, extra_args=["-a", f"model={model}"])
    assert crawl.returncode == 0, crawl.log[-3000:]
    # the model judges the crawl's pages: the course pages it met (three seeds among them) above the rest
    labels = dict(line.split("\t") for line in WEBKB_LABELS.read_text(encoding="utf-8").splitlines())
    judged = [(r["relevance"], labels.get(r["canonical_url"]) == "course/cornell")
              for r in crawl.history if r["relevance"] is not None]
    course = [relevance for relevance, is_course in judged if is_course]
    others = [relevance for relevance, is_course in judged if not is_course]
    assert course and others and sum(course) / len(course) > sum(others) / len(others)


def test_too_few_examples_are_said_to_be_too_few(webkb_replay: Any, tmp_path: Path, course_examples: list[str]) -> None:
    done = train_from_examples("--examples", ",".join(course_examples[:3]), "--negatives", ",".join(UNIVERSITY_HOMES),
                               "-o", str(tmp_path / "few.npz"), proxy=webkb_replay.proxy_url)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "WARNING: too few pages to trust (give at least 10 relevant examples" in done.stdout
    assert "Trained on 3 relevant and 4 irrelevant examples" in done.stdout


def test_an_example_that_cannot_be_fetched_is_named(
    webkb_replay: Any, tmp_path: Path, course_examples: list[str]
) -> None:
    missing = "http://www.cs.cornell.edu/no-such-page.html"
    done = train_from_examples("--examples", ",".join([*course_examples[:4], missing]),
                               "--negatives", ",".join(UNIVERSITY_HOMES), "-o", str(tmp_path / "m.npz"),
                               proxy=webkb_replay.proxy_url)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"not used: {missing} (404)" in done.stdout
