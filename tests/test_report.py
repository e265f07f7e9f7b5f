"""The crawl report: written at a crawl's end (its path the
last line of the summary), made again by `scrapy report`, one file that
renders in a real browser with its plot and tables."""

from __future__ import annotations

from pathlib import Path

from crawlproject.replay.process import ReplayProcess
from tests.conftest import UNIVERSITY_HOMES, WEBKB_WARC, chromium, run_crawl
from tests.test_collection import QUERY, _site
from tests.test_first_hour import last_line, scrapy


def test_a_crawl_ends_with_a_report_that_renders_in_a_browser(tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    folder = tmp_path / "crawl"
    with ReplayProcess(str(_site(tmp_path))) as replay:
        result = run_crawl("bestfirst", folder, ["http://docs.test/"], replay.proxy_url, query=QUERY,
                           settings={"FOCUS_JUDGE": "query-tf", "FOCUS_REPORT": True})
    assert result.returncode == 0, result.log[-3000:]
    report = folder / "report.html"
    assert f"Crawl report: {report}" in result.log
    relevant = [r for r in result.history if r["relevant"]]
    assert relevant, "the judge called no page relevant: nothing to list"
    assert (
        result.summary["relevant_called"] == len(relevant) and result.summary["judge"]["judge"] == "query-tf+labels"
    )  # the dashboard's labels can teach it

    driver = chromium("1200,1600")
    try:
        driver.get(report.as_uri())
        title = driver.find_element(By.TAG_NAME, "h1").text
        assert title.startswith(f"bestfirst · best-first · judge query-tf+labels · “{QUERY}”"), title
        figures = driver.find_element(By.ID, "figures").text
        assert f"relevant, as the judge called them {len(relevant)}" in figures
        assert "stopped because finished" in figures
        # the plot is drawn (inline SVG, its lines there) and has a size on the page
        plot = driver.find_element(By.CSS_SELECTOR, "#harvest svg")
        assert plot.size["width"] > 300 and plot.size["height"] > 100
        assert driver.find_elements(By.CSS_SELECTOR, "#harvest svg path")
        rows = driver.find_elements(By.CSS_SELECTOR, "#pages tr")[1:]
        assert len(rows) == len(relevant)
        best = max(relevant, key=lambda r: r["relevance"])
        first = rows[0].find_elements(By.TAG_NAME, "td")
        assert first[0].text == (best["title"] or best["url"]) and float(first[1].text) == round(best["relevance"], 3)
        assert "→" in first[3].text or best["parent_url"] is None  # the path that led there
        hosts = driver.find_elements(By.CSS_SELECTOR, "#hosts tr")[1:]
        assert len(hosts) == len({r["url"].split("/")[2] for r in result.history})
        driver.save_screenshot(str(tmp_path / "report.png"))
    finally:
        driver.quit()
    assert (tmp_path / "report.png").stat().st_size > 10_000


def test_scrapy_report_makes_it_again_and_says_what_is_wrong(tmp_path: Path) -> None:
    folder = tmp_path / "crawl"
    with ReplayProcess(str(WEBKB_WARC)) as replay:
        result = run_crawl("breadthfirst", folder, UNIVERSITY_HOMES[:1], replay.proxy_url,
                           settings={"CLOSESPIDER_PAGECOUNT": 20, "FOCUS_REPORT": False})
    assert result.returncode == 0, result.log[-3000:]
    assert not (folder / "report.html").exists()
    completed = scrapy("report", str(folder), "-o", str(tmp_path / "r.html"))
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert completed.stdout.strip() == f"Crawl report: {tmp_path / 'r.html'}"
    text = (tmp_path / "r.html").read_text()
    assert "no judge" in text and "<svg" in text  # breadth-first has no judge: said, not a table of nothing
    empty = tmp_path / "empty"
    empty.mkdir()
    completed = scrapy("report", str(empty))
    assert completed.returncode == 2
    assert (
        last_line(completed)
        == f"scrapy report: error: {empty} holds no crawl (no history.jsonl): name a crawl's output folder"
    )
