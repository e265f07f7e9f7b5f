"""The focused crawler end to end: `scrapy train` on the real WebKB corpus,
then real crawls of the replayed corpus with soft focus, hard focus, the
distiller and online learning, and the errors a user gets for bad input."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from crawlproject.models.taxonomy_classifier import TaxonomyClassifier
from crawlproject.web.content import is_html_content_type
from tests.conftest import (
    ROOT,
    UNIVERSITY_HOMES,
    WEBKB_LABELS,
    WEBKB_WARC,
    CrawlResult,
    log_stat,
    run_crawl,
)


def train(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603
        [sys.executable, "-m", "scrapy", "train", "--labels", str(WEBKB_LABELS), *args],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("model") / "webkb.npz"
    completed = train("--warc", str(WEBKB_WARC), "-o", str(path), "--cache-dir", str(ROOT / ".cache"))
    assert completed.returncode == 0, completed.stderr[-2000:]
    return path, completed.stdout


def focused_crawl(folder: Path, proxy: str, model: Path, pages: int, **settings: Any) -> CrawlResult:
    return run_crawl(
        "focused", folder, UNIVERSITY_HOMES, proxy,
        settings={"CLOSESPIDER_ITEMCOUNT": pages, "FOCUS_LABELS": WEBKB_LABELS, "FOCUS_RELEVANT": "course", **settings},
        extra_args=["-a", f"model={model}", "-a", "good=course"],
    )


@pytest.fixture(scope="module")
def soft_crawl(tmp_path_factory: pytest.TempPathFactory, webkb_replay: Any, trained: tuple[Path, str]) -> CrawlResult:
    result = focused_crawl(
        tmp_path_factory.mktemp("soft"), webkb_replay.proxy_url, trained[0], 150, FOCUS_FOCUSED_MODE="soft"
    )
    assert result.returncode == 0, result.log[-3000:]
    return result


def test_train_reports_held_out_accuracy_per_level(trained: tuple[Path, str]) -> None:
    path, output = trained
    levels = {
        int(m[1]): (float(m[2]), float(m[3]))
        for m in re.finditer(r"^\s+(\d)\s+\d+\s+([\d.]+)%\s+\(([\d.]+)%\)", output, re.MULTILINE)
    }
    assert set(levels) == {1, 2}  # class, then class/university
    for accuracy, majority in levels.values():
        assert accuracy > majority  # better than always answering the biggest category
    assert re.search(r"^\s+course\s+[\d.]+%", output, re.MULTILINE)
    model = TaxonomyClassifier.load(path)
    assert "course/cornell" in model.taxonomy and model.report["levels"]


def test_soft_focus_crawl_classifies_every_page_in_batches(soft_crawl: CrawlResult) -> None:
    focused = soft_crawl.summary["focused"]
    ok = [r for r in soft_crawl.history if r["status"] == 200]
    assert focused["classify/pages"] >= len(ok) > 50
    assert focused["classify/batches"] < focused["classify/pages"]  # pages shared batches
    assert all(0.0 <= r["relevance"] <= 1.0 for r in ok)
    assert "classify/errors" not in focused


def test_soft_focus_gives_each_link_its_parent_relevance(soft_crawl: CrawlResult) -> None:
    relevance = {r["url"]: r["relevance"] for r in soft_crawl.history if r["status"] == 200}
    checked = 0
    for record in soft_crawl.history:
        parent = record["parent_url"]
        if parent in relevance and record["score"] is not None and record["score"] <= 1.0:
            assert record["score"] == pytest.approx(relevance[parent], abs=1e-9)
            checked += 1
    assert checked > 50


def test_hard_focus_follows_only_links_of_pages_classified_good(
    tmp_path: Path, webkb_replay: Any, trained: tuple[Path, str]
) -> None:
    result = focused_crawl(tmp_path, webkb_replay.proxy_url, trained[0], 150, FOCUS_FOCUSED_MODE="hard")
    assert result.returncode == 0, result.log[-3000:]
    assert result.summary["focused"]["hard/pruned_pages"] > 0
    # A page is expanded only when its best leaf is below "course"; that leaf's
    # probability is at least 1/(number of leaves), so R(parent) is too.
    floor = 1 / len(TaxonomyClassifier.load(trained[0]).taxonomy.leaves)
    relevance = {r["url"]: r["relevance"] for r in result.history if r["status"] == 200}
    parents = {r["parent_url"] for r in result.history if r["parent_url"]} - set(UNIVERSITY_HOMES)
    assert parents
    assert all(relevance[p] >= floor for p in parents if p in relevance)


def test_distiller_and_online_learning_run_during_a_crawl(
    tmp_path: Path, webkb_replay: Any, trained: tuple[Path, str]
) -> None:
    result = focused_crawl(
        tmp_path, webkb_replay.proxy_url, trained[0], 200,
        FOCUS_DISTILL_EVERY=25, FOCUS_RETRAIN_EVERY=25, FOCUS_RETRAIN_CONFIDENCE=0.5,
    )
    assert result.returncode == 0, result.log[-3000:]
    focused = result.summary["focused"]
    assert focused["distiller/runs"] >= 2
    assert focused["learning/rounds"] >= 2 and focused["learning/pages"] > 0
    assert (log_stat(result.log, "frontier/rescored") or 0) > 0
    assert "Online learning: " in result.log and "re-classifying the" in result.log


def test_train_from_a_crawls_page_repository(tmp_path: Path, soft_crawl: CrawlResult) -> None:
    path = tmp_path / "from-crawl.npz"
    completed = train("--pages", str(soft_crawl.folder), "-o", str(path), "--holdout", "0")
    assert completed.returncode == 0, completed.stderr[-2000:]
    pages = int(completed.stdout.split()[0])
    # the labelled HTML pages (a labelled text/plain page is fetched, not trained on)
    html_pages = {
        r["canonical_url"] for r in soft_crawl.history if r["status"] == 200 and is_html_content_type(r["content_type"])
    }
    assert pages == len(html_pages & _labelled())
    model = TaxonomyClassifier.load(path)
    assert model.trained_pages == pages and len(model.taxonomy.children[0]) >= 2


def _labelled() -> set[str]:
    from crawlproject.corpus.labels import load_labels

    return set(load_labels(WEBKB_LABELS))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-a", "model=/nonexistent/model.npz", "-a", "good=course"], "does not exist; train one with `scrapy train`"),
        (["-a", "good=course"], "the focused crawler needs a model"),
        (["-a", "model=MODEL"], "needs good categories"),
        (
            ["-a", "model=MODEL", "-a", "good=courses"],
            "'courses' is not in the taxonomy; its top categories are: course,",
        ),
        (["-a", "model=GARBAGE", "-a", "good=course"], "is not a crawlproject model file"),
    ],
)
def test_bad_focused_crawler_input_stops_with_a_clear_error(
    tmp_path: Path, webkb_replay: Any, trained: tuple[Path, str], args: list[str], message: str
) -> None:
    garbage = tmp_path / "garbage.npz"
    garbage.write_text("not a model", encoding="utf-8")
    args = [a.replace("MODEL", str(trained[0])).replace("GARBAGE", str(garbage)) for a in args]
    result = run_crawl("focused", tmp_path / "crawl", UNIVERSITY_HOMES, webkb_replay.proxy_url, extra_args=args)
    assert result.returncode != 0
    assert message in result.log
    assert not result.history


def test_bad_train_input_is_a_usage_error(tmp_path: Path) -> None:
    completed = train("--warc", str(tmp_path / "missing.warc.gz"), "-o", str(tmp_path / "m.npz"))
    assert completed.returncode == 2 and "no such file" in completed.stderr
    completed = train("--pages", str(tmp_path), "-o", str(tmp_path / "m.npz"))
    assert completed.returncode == 2 and "has no pages.jsonl" in completed.stderr
    assert not (tmp_path / "m.npz").exists()


def test_a_failing_classifier_is_counted_and_loses_no_page(tmp_path: Path, webkb_replay: Any) -> None:
    import numpy as np

    from crawlproject.models.taxonomy_classifier import ModelSettings

    texts = ["course homework lecture", "course syllabus", "student resume", "student hobbies"]
    broken = TaxonomyClassifier(ModelSettings(features="hashing", n_features=2**10))
    broken.fit(texts, ["course", "course", "student", "student"])
    model = tmp_path / "broken.npz"
    broken.save(model)
    # Term weights one column wider than the features: the file loads, and
    # every classification raises.
    with np.load(model) as data:
        arrays = {name: data[name] for name in data.files}
    arrays["node0_feature_log_prob_"] = np.hstack([arrays["node0_feature_log_prob_"], np.zeros((2, 1))])
    with model.open("wb") as f:
        np.savez(f, **arrays)
    result = run_crawl(
        "focused", tmp_path / "crawl", UNIVERSITY_HOMES, webkb_replay.proxy_url,
        settings={"CLOSESPIDER_ITEMCOUNT": 40},
        extra_args=["-a", f"model={model}", "-a", "good=course"],
    )
    assert result.returncode == 0, result.log[-3000:]
    ok = [r for r in result.history if r["status"] == 200]
    assert len(result.history) >= 40 and ok
    assert all(r["relevance"] == 0.0 for r in ok)  # recorded, with relevance 0
    assert result.summary["focused"]["classify/errors"] >= len(ok)
    assert result.log.count("further failures are counted in focus/classify/errors") == 1


def test_a_good_category_whose_name_holds_a_comma_is_one_category(tmp_path: Path, webkb_replay: Any) -> None:
    # -a good= is a comma list: "teaching/course, lab and seminar pages" was
    # split into two categories the model does not know, and the crawl refused.
    category = "teaching/course, lab and seminar pages"
    lines = WEBKB_LABELS.read_text(encoding="utf-8").splitlines()[::12]  # a small model is enough
    labels = tmp_path / "labels.tsv"
    labels.write_text(
        "".join(f"{url}\t{category if label.startswith('course') else label}\n" for url, label in (
            line.split("\t") for line in lines
        )),
        encoding="utf-8",
    )
    model = tmp_path / "model.npz"
    completed = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "scrapy", "train", "--labels", str(labels), "--warc", str(WEBKB_WARC), "-o", str(model)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    result = run_crawl(
        "focused", tmp_path / "crawl", ["http://www.cs.washington.edu/"], webkb_replay.proxy_url,
        settings={"CLOSESPIDER_ITEMCOUNT": 20, "FOCUS_LABELS": labels, "FOCUS_RELEVANT": category},
        extra_args=["-a", f"model={model}", "-a", f"good={category}"],
    )
    assert result.returncode == 0, result.log[-3000:]
    assert len(result.history) >= 20
