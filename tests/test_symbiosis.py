"""The search page in a real browser, the JSON API, and the symbiotic loop:
its stopping rules, the new collection it builds, and the swap
that keeps answering queries throughout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crawlproject.search.engine import IndexHome
from crawlproject.search.symbiosis import ERROR_GUARD
from tests.conftest import ROOT

QUERY_FILE = "computer science course\n# a comment\nresearch projects\n"


def copy_index(source: Path, target: Path) -> Path:
    import shutil

    shutil.copytree(source, target, symlinks=True)
    return target


class Served:
    def __init__(self, process: subprocess.Popen[str], url: str):
        self.process, self.url = process, url

    def get(self, path: str, **params: str) -> tuple[int, Any]:
        address = f"{self.url}{path}?{urllib.parse.urlencode(params)}"
        try:
            with urllib.request.urlopen(address, timeout=30) as answer:  # noqa: S310 (loopback)
                status, body = answer.status, answer.read()
        except urllib.error.HTTPError as error:
            status, body = error.code, error.read()
        return status, json.loads(body) if path.startswith("/api/") else body.decode()


@pytest.fixture
def serve() -> Iterator[Any]:
    processes: list[subprocess.Popen[str]] = []

    def start(index: Path) -> Served:
        process = subprocess.Popen(  # noqa: S603
            [sys.executable, "-m", "scrapy", "serve", "--index", str(index), "--port", "0"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        processes.append(process)
        assert process.stdout is not None
        line = process.stdout.readline()  # the first line names the address (or the error)
        assert line.startswith("Search page: http://127.0.0.1:"), line
        return Served(process, line.split()[2].rstrip("/"))

    yield start
    for process in processes:
        process.terminate()
        process.communicate(timeout=30)  # reads and closes its pipe


def symbiosis(index: Path, queries: Path, *options: str) -> subprocess.Popen[str]:
    return subprocess.Popen(  # noqa: S603
        [sys.executable, "-m", "scrapy", "symbiosis", "--index", str(index), "--queries", str(queries), *options],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ},
    )


def night_report(index: Path) -> tuple[dict[str, Any], Path]:
    nights = sorted((index / "nights").iterdir())
    return json.loads((nights[-1] / "report.json").read_text()), nights[-1]


def test_the_json_api(built_index: Path, serve: Any, tmp_path: Path) -> None:
    server = serve(copy_index(built_index, tmp_path / "served"))  # serve writes its query log there
    status, answer = server.get("/api/search", q="computer", size="5", page="2")
    assert status == 200 and answer["page"] == 2 and len(answer["results"]) <= 5 and answer["total"] > 5
    first_page = server.get("/api/search", q="computer", size="5")[1]
    assert {r["url"] for r in first_page["results"]}.isdisjoint(r["url"] for r in answer["results"])
    hit = first_page["results"][0]
    status, links = server.get("/api/backlinks", url=hit["url"])
    assert status == 200 and len(links["backlinks"]) == hit["referrers"]
    assert server.get("/api/search", q="")[0] == 400
    assert server.get("/api/search", q="computer", page="zero") == (
        400,
        {"error": "page must be a whole number, got 'zero'"},
    )
    assert server.get("/api/nothing")[0] == 404
    assert server.get("/api/status")[1]["pages"] > 10


def test_the_search_page_in_a_real_browser(built_index: Path, serve: Any, tmp_path: Path) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    server = serve(copy_index(built_index, tmp_path / "served"))  # serve writes its query log there
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager must not look for drivers online
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        wait = WebDriverWait(driver, 30)
        driver.get(server.url + "/")
        box = driver.find_element(By.ID, "q")
        box.send_keys("computer science", Keys.ENTER)
        summary = wait.until(expected_conditions.presence_of_element_located((By.ID, "summary")))
        assert summary.text.startswith("Results 1–10 of ")
        results = driver.find_elements(By.CSS_SELECTOR, "li.result")
        assert len(results) == 10
        first = results[0]
        assert first.find_element(By.CSS_SELECTOR, "a.title").get_attribute("href").startswith("http://")
        assert first.find_elements(By.CSS_SELECTOR, ".snippet b")  # the matching words in bold
        assert "referring pages" in first.find_element(By.CSS_SELECTOR, ".votes").text
        driver.find_element(By.ID, "next").click()
        wait.until(expected_conditions.text_to_be_present_in_element((By.ID, "summary"), "Results 11–"))
        assert driver.find_elements(By.ID, "previous")
        assert driver.find_element(By.ID, "q").get_attribute("value") == "computer science"
        box = driver.find_element(By.ID, "q")
        box.clear()
        box.send_keys("the of", Keys.ENTER)
        error = wait.until(expected_conditions.presence_of_element_located((By.ID, "error")))
        assert "only stopwords" in error.text
    finally:
        driver.quit()


def test_the_loop_stops_at_max_iter_and_builds_the_new_collection(built_index: Path, webkb_replay: Any,
                                                                  tmp_path: Path) -> None:
    index = copy_index(built_index, tmp_path / "index")
    queries = tmp_path / "queries.txt"
    queries.write_text(QUERY_FILE)
    old = IndexHome(index).current()
    night = symbiosis(index, queries, "--max-iter", "2", "--theta", "1", "--n-hits", "3", "--max-index", "40",
                      "-s", f"FOCUS_REPLAY_PROXY={webkb_replay.proxy_url}", "-s", "DOWNLOAD_DELAY=0",
                      "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=8")
    out, err = night.communicate(timeout=600)
    assert night.returncode == 0, err[-3000:]
    assert "query 2/2 'research projects' · iteration 2/2" in out and "Night done" in out
    report, folder = night_report(index)
    assert report["max_pages_per_crawl"] == 20 and [len(q["iterations"]) for q in report["queries"]] == [2, 2]
    assert IndexHome(index).current() != old  # swapped
    fetched = set()
    for history in folder.glob("crawls/*/crawl/history.jsonl"):
        fetched |= {r["canonical_url"] for r in map(json.loads, history.read_text().splitlines())
                    if r["status"] == 200}
    from crawlproject.search.collection import IndexedCollection

    kept = set(IndexedCollection(IndexHome(index).current()).keys())
    assert kept <= fetched and len(kept) == min(40, len(fetched))  # the night's pages, MAX_INDEX at most
    assert report["new_pages"] == len(kept)
    # MAX_PAGES counts pages for the collection: a crawl stops once it has 20, when it
    # runs dry, or (the error guard) after ERROR_GUARD × 20 fetches that gave fewer pages.
    for crawl in folder.glob("crawls/*/crawl"):
        summary = json.loads((crawl / "summary.json").read_text())
        rows = [json.loads(line) for line in (crawl / "history.jsonl").read_text().splitlines()]
        pages = [r for r in rows if r["status"] == 200 and "html" in (r["content_type"] or "")]
        reason = summary["finish_reason"]
        assert reason in {"symbiosis_max_pages", "finished", "closespider_itemcount"}, reason
        if reason == "symbiosis_max_pages":
            assert len(pages) >= 20
        if reason == "closespider_itemcount":
            assert len(rows) >= ERROR_GUARD * 20 and len(pages) < 20, (len(rows), len(pages))


def test_theta_stops_a_query_when_its_seeds_repeat(built_index: Path, webkb_replay: Any, tmp_path: Path) -> None:
    index = copy_index(built_index, tmp_path / "index")
    queries = tmp_path / "queries.txt"
    queries.write_text(QUERY_FILE)
    night = symbiosis(
        index,
        queries,
        "--max-iter",
        "3",
        "--theta",
        "0",
        "--n-hits",
        "3",
        "--max-index",
        "30",
        "--tfidf",
        "-s",
        f"FOCUS_REPLAY_PROXY={webkb_replay.proxy_url}",
        "-s",
        "DOWNLOAD_DELAY=0",
    )
    _, err = night.communicate(timeout=600)
    assert night.returncode == 0, err[-3000:]
    runs = night_report(index)[0]["queries"]
    # Iteration 2 always runs (its old seeds are iteration 1's: none before it);
    # iteration k + 1 runs only if iterations k - 1 and k overlap by θ or less.
    for run in runs:
        iterations = run["iterations"]
        assert 2 <= len(iterations) <= 3
        assert all(iteration["overlap"] <= 0 for iteration in iterations[1:-1])
        if len(iterations) < 3:
            assert iterations[-1]["overlap"] > 0
    assert any(len(run["iterations"]) == 2 for run in runs)  # θ stopped a query


def test_queries_are_answered_throughout_the_swap(built_index: Path, webkb_replay: Any, serve: Any,
                                                  tmp_path: Path) -> None:
    index = copy_index(built_index, tmp_path / "index")
    server = serve(index)
    before = server.get("/api/status")[1]["collection"]
    queries = tmp_path / "queries.txt"
    queries.write_text("computer science course\n")
    answers: list[tuple[int, int]] = []
    night = symbiosis(index, queries, "--max-iter", "1", "--n-hits", "3", "--max-index", "30",
                      "-s", f"FOCUS_REPLAY_PROXY={webkb_replay.proxy_url}", "-s", "DOWNLOAD_DELAY=0")

    def ask() -> None:
        while night.poll() is None:
            status, answer = server.get("/api/search", q="computer")
            answers.append((status, len(answer.get("results", []))))

    asker = threading.Thread(target=ask)
    asker.start()
    _, err = night.communicate(timeout=600)
    asker.join(timeout=60)
    assert night.returncode == 0, err[-3000:]
    assert len(answers) > 5 and all(status == 200 for status, _ in answers)
    assert all(count > 0 for _, count in answers)  # every query during the night got results
    after = server.get("/api/status")[1]["collection"]
    assert after != before and server.get("/api/search", q="computer")[0] == 200


def test_bad_symbiosis_input(tmp_path: Path, built_index: Path) -> None:
    (tmp_path / "empty.txt").write_text("# nothing\n")
    (tmp_path / "q.txt").write_text("course\n")
    cases = [
        (["--index", str(built_index), "--queries", str(tmp_path / "missing.txt")], "no such file"),
        (["--index", str(built_index), "--queries", str(tmp_path / "empty.txt")], "holds no query"),
        (["--index", str(built_index), "--queries", str(tmp_path / "q.txt"), "--theta", "2"], "--theta"),
        (["--index", str(tmp_path / "none"), "--queries", str(tmp_path / "q.txt")], "no index at"),
    ]
    for arguments, message in cases:
        completed = subprocess.run([sys.executable, "-m", "scrapy", "symbiosis", *arguments], cwd=ROOT,  # noqa: S603
                                   capture_output=True, text=True, timeout=120)
        assert completed.returncode == 2 and message in completed.stderr, (arguments, completed.stderr)


def test_the_readme_search_section_works_as_written(tmp_path: Path) -> None:
    import shutil

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Search engine and symbiosis", 1)[1].split("\n## ", 1)[0]
    script = section.split("```")[1]
    project = tmp_path / "checkout"
    shutil.copytree(ROOT, project, ignore=shutil.ignore_patterns(".venv", ".git", "crawls", ".cache", "bench", "index"))
    (project / ".venv").symlink_to(ROOT / ".venv")
    (project.parent / "shared").symlink_to(ROOT.parent / "shared")
    completed = subprocess.run(["bash", "-e", "-c", script], cwd=project, capture_output=True, text=True,  # noqa: S603,S607
                               timeout=600, env={**os.environ, "PYTHONPATH": ""})
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "pages match 'operating systems'" in completed.stdout
    assert "query 2/2 'compilers' · iteration 1/3" in completed.stdout and "Night done" in completed.stdout
    # The night prints its own lines: only the first crawl's INFO log says "Spider closed", none of the night's.
    assert (completed.stdout + completed.stderr).count("Spider closed") == 1
    # One replay for the whole night, not one started (2 s) by each of its crawls.
    assert completed.stdout.count("Replaying") == 1
