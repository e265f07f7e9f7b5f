"""Watch and steer a running crawl: the live dashboard in a real
headless Chromium, labels that change the crawl's model, Prometheus metrics
scraped by a real Prometheus server, the dashboard attached to a crawl's
folder, and labels that are refused."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from crawlproject.replay.process import ReplayProcess
from tests.conftest import (
    FAST_REPLAY_SETTINGS,
    ROOT,
    UNIVERSITY_HOMES,
    WEBKB_LABELS,
    WEBKB_WARC,
    chromium,
    log_stat,
)

QUERY = "course syllabus lecture homework"
TIMEOUT = 120


def start_crawl(folder: Path, proxy: str, spider: str = "linklearner", **settings: Any) -> subprocess.Popen[str]:
    merged = {
        **FAST_REPLAY_SETTINGS, "FOCUS_REPLAY_PROXY": proxy, "FOCUS_OUTPUT_DIR": str(folder),
        "LOG_FILE": str(folder.with_suffix(".log")), "FOCUS_DASHBOARD_PORT": -1,
        "FOCUS_LABELS": str(WEBKB_LABELS), "FOCUS_RELEVANT": "course", **settings,
    }
    command = [sys.executable, "-m", "scrapy", "crawl", spider, "-a", f"seeds={','.join(UNIVERSITY_HOMES)}",
               "-a", f"query={QUERY}"]
    for name, value in merged.items():
        command += ["-s", f"{name}={value}"]
    return subprocess.Popen(command, cwd=ROOT, text=True)  # noqa: S603


def until(condition: Any, what: str, timeout: float = TIMEOUT) -> Any:
    """Wait for *condition()* to be true (polling), at most *timeout* seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def dashboard_url(folder: Path, crawl: subprocess.Popen[str]) -> str:
    def found() -> str:
        assert crawl.poll() is None, "the crawl ended before its dashboard was up"
        marker = folder / "dashboard.json"
        return json.loads(marker.read_text())["url"] if marker.is_file() else ""

    return str(until(found, "the dashboard's address"))


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 (loopback)
        body = response.read()
    return json.loads(body) if response.headers.get_content_type() == "application/json" else body.decode()


def post(url: str, body: dict[str, Any]) -> tuple[int, Any]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",  # noqa: S310
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.fixture(scope="module")
def slow_replay() -> Any:
    """A replay answering 15 ms late: a crawl that lasts long enough to watch."""
    with ReplayProcess(str(WEBKB_WARC), latency_ms=15) as replay:
        yield replay


def test_a_running_crawl_watched_and_steered_in_a_real_browser(slow_replay: Any, tmp_path: Path) -> None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    folder = tmp_path / "crawl"
    crawl = start_crawl(folder, slow_replay.proxy_url, CLOSESPIDER_ITEMCOUNT=700, CONCURRENT_REQUESTS=4,
                        FOCUS_METRICS_LINGER=60)
    driver = chromium()
    try:
        url = dashboard_url(folder, crawl)
        driver.get(url)
        # The page re-renders its tables on every poll: an element found may be replaced before it is
        # read or clicked (stale); the wait then looks again.
        wait = WebDriverWait(driver, TIMEOUT, poll_frequency=0.1, ignored_exceptions=(StaleElementReferenceException,))

        def click_first(xpath: str) -> str | None:
            """Click the first button *xpath* finds; its page's URL, or None while there is none."""
            buttons = driver.find_elements(By.XPATH, xpath)
            if not buttons:
                return None
            clicked = buttons[0].get_attribute("data-url")
            buttons[0].click()
            return clicked

        def fetched() -> int:
            return int(driver.find_element(By.ID, "status").get_attribute("data-fetched") or 0)

        first = wait.until(lambda _: fetched() > 0 and fetched())
        # the page names the crawl: spider, strategy, judge and topic, not the machine
        named = f"linklearner · link-learner · judge query-tf+labels · “{QUERY}”"
        assert driver.find_element(By.ID, "crawl").text == named and driver.title.startswith(named)
        wait.until(lambda _: fetched() > first)  # the counters move while it runs, without a reload
        points = driver.execute_script("return document.getElementById('harvest').data[0].x.length")
        wait.until(
            lambda _: driver.execute_script("return document.getElementById('harvest').data[0].x.length") > points
        )
        # A relevant page listed, labelled irrelevant in the page: the crawl's model learns it.
        labelled = wait.until(lambda _: click_first("//button[@data-relevant='false']"))
        effect = wait.until(lambda _: driver.find_elements(By.XPATH, f"//div[@id='effects']//td[text()='{labelled}']"))
        assert effect
        state = get(url + "api/state")
        applied = next(e for e in state["labels"]["effects"] if e["url"] == labelled)
        assert applied["learnt"] is True and applied["label"] == 0.0 and "links_rescored" in applied
        # The judge shows how sure it is and asks about pages; answering one of its questions
        # "relevant" gives it both kinds of label: it learns.
        assert state["judge"]["judge"] == "query-tf+labels" and "called_relevant" in state["judge"]
        asked = wait.until(lambda _: click_first("//div[@id='judge']//button[@data-relevant='true']"))
        assert asked != labelled
        answered = until(
            lambda: next((e for e in get(url + "api/state")["labels"]["effects"] if e["url"] == asked), None),
            "the answer to the judge's question",
        )
        assert answered["judge"]["learnt"] is True
        driver.save_screenshot(str(tmp_path / "dashboard.png"))
        # The final view is the crawl's summary.
        wait.until(lambda _: "finished" in driver.find_element(By.ID, "status").text)
        summary = json.loads(
            until(lambda: (folder / "summary.json").is_file() and (folder / "summary.json").read_text(), "summary.json")
        )
        wait.until(lambda _: fetched() == summary["pages_fetched"])
        shown = driver.find_element(By.ID, "figures").text
        assert f"{summary['relevant_pages']}\nrelevant (labels)" in shown
        left = summary["remaining"]  # what is left, as the summary says it
        shown_as = {key: int(left[key] + 0.5) for key in ("expected", "low", "high")}  # JavaScript's Math.round
        assert f"{shown_as['expected']} ({shown_as['low']}–{shown_as['high']})" in shown, shown
        get(url + "metrics")  # the final scrape: the crawl may end now
    except BaseException:
        crawl.kill()  # not left to be reaped (and warned about) in a later test
        crawl.wait(timeout=TIMEOUT)
        raise
    finally:
        driver.quit()
    assert crawl.wait(timeout=TIMEOUT) == 0
    log = folder.with_suffix(".log").read_text()
    assert log_stat(log, "focus/learner/user_labels") in (1, 2) and "'focus/dashboard/labels': 2" in log
    assert (folder / "user-labels.tsv").read_text() == f"{labelled}\tirrelevant\n{asked}\trelevant\n"


def test_labels_are_checked_and_reach_a_crawl_through_its_folder(slow_replay: Any, tmp_path: Path) -> None:
    folder = tmp_path / "crawl"
    crawl = start_crawl(folder, slow_replay.proxy_url, CLOSESPIDER_ITEMCOUNT=900, CONCURRENT_REQUESTS=2,
                        FOCUS_METRICS_LINGER=0)
    attach = None
    try:
        url = dashboard_url(folder, crawl)
        status, body = post(url + "api/labels", {"url": "http://www.nowhere.test/", "relevant": True})
        assert status == 400 and body == {
            "error": "this crawl has not fetched http://www.nowhere.test/ (answered 2xx): "
            "only its own pages can be labelled"
        }
        assert post(url + "api/labels", {"url": UNIVERSITY_HOMES[0]})[0] == 400  # no label given
        # `scrapy dashboard` attached to the crawl's folder: its label reaches the running crawl.
        attach = subprocess.Popen(  # noqa: S603
            [sys.executable, "-m", "scrapy", "dashboard", "--crawl", str(folder), "--port", "0"],
            cwd=ROOT, stdout=subprocess.PIPE, text=True,
        )
        line = attach.stdout.readline()  # type: ignore[union-attr]
        assert line.startswith("Dashboard: "), line + attach.stdout.read()  # type: ignore[union-attr]
        attached = line.split()[1]
        page = until(lambda: [r for r in map(json.loads, (folder / "history.jsonl").read_text().splitlines()[:40])
                              if r["status"] == 200 and r["order"] > 4], "a fetched page")[0]["canonical_url"]
        status, body = post(attached + "api/labels", {"url": page, "relevant": True})
        assert status == 200, body
        until(lambda: any(e["url"] == page for e in get(url + "api/state")["labels"]["effects"]),
              "the crawl to take in the label given elsewhere", timeout=30)
        assert get(attached + "api/state")["pages"]["fetched"] > 0
    finally:
        if attach is not None:
            attach.terminate()
            attach.wait(timeout=30)
            attach.stdout.close()  # type: ignore[union-attr]
        crawl.terminate()
        crawl.wait(timeout=TIMEOUT)


def test_a_dashboard_off_loopback_wants_a_token(tmp_path: Path) -> None:
    done = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "scrapy", "crawl", "breadthfirst", "-a", f"seeds={UNIVERSITY_HOMES[0]}",
         "-s", "FOCUS_DASHBOARD_PORT=8799", "-s", "FOCUS_DASHBOARD_HOST=0.0.0.0",
         "-s", f"FOCUS_OUTPUT_DIR={tmp_path / 'out'}"],
        cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "scrapy crawl: error: FOCUS_DASHBOARD_HOST='0.0.0.0' is not loopback: anyone who reaches it could steer "
        "the crawl; set FOCUS_DASHBOARD_TOKEN too (the page and API then ask for it)"
    )


PROMETHEUS = shutil.which("prometheus")


@pytest.mark.skipif(PROMETHEUS is None, reason="Debian's prometheus is installed by make setup")
def test_a_real_prometheus_scrapes_three_workers(slow_replay: Any, redis_server: Any, tmp_path: Path) -> None:
    from bench.servers import free_port

    targets = tmp_path / "targets"
    targets.mkdir()
    port = free_port()
    (tmp_path / "prometheus.yml").write_text(
        # a scrape may take 2 s on a busy machine: one Prometheus drops (past its timeout) is the final one a
        # worker waited for, and the test then reads earlier figures (it failed so beside other tests)
        "global: {scrape_interval: 2s, scrape_timeout: 2s, evaluation_interval: 2s}\n"
        "scrape_configs:\n  - job_name: crawls\n    file_sd_configs:\n"
        f"      - files: ['{targets}/*.json']\n        refresh_interval: 1s\n"
    )
    prometheus = subprocess.Popen(  # noqa: S603
        [str(PROMETHEUS), f"--config.file={tmp_path / 'prometheus.yml'}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )

    def query(expression: str) -> list[Any]:
        encoded = urllib.parse.urlencode({"query": expression})
        found: list[Any] = get(f"http://127.0.0.1:{port}/api/v1/query?{encoded}")["data"]["result"]
        return found

    import urllib.parse

    crawls = []
    try:
        until(lambda: _answers(f"http://127.0.0.1:{port}/-/ready"), "prometheus to start")
        for i in range(3):
            crawls.append(start_crawl(  # a few seconds each: several scrapes while they run
                tmp_path / f"w{i}", slow_replay.proxy_url, "bestfirst", CLOSESPIDER_ITEMCOUNT=250,
                CONCURRENT_REQUESTS=2, DOWNLOAD_DELAY=0.03, CONCURRENT_REQUESTS_PER_DOMAIN=1,
                FOCUS_WORKER_NAME=f"worker-{i}", FOCUS_METRICS_TARGETS=str(targets),
                FOCUS_METRICS_LINGER=60, FOCUS_FRONTIER_BACKEND="crawlproject.distributed.frontier.RedisFrontier",
                REDIS_URL=redis_server.url, FOCUS_REDIS_KEY="prometheus:frontier",
            ))
        for process in crawls:  # each ends once Prometheus has scraped its final figures
            assert process.wait(timeout=TIMEOUT) == 0
        # Pages increased between two scrapes of one worker (its raw samples, in order).
        samples = query('crawl_pages_ok_total[5m]')
        assert {r["metric"]["worker"] for r in samples} == {"worker-0", "worker-1", "worker-2"}
        assert any(len({float(v) for _, v in r["values"]}) >= 2 for r in samples), samples
        totals = {}
        for i in range(3):
            summary = json.loads((tmp_path / f"w{i}" / "summary.json").read_text())
            totals[f"worker-{i}"] = summary["pages_fetched"]
        final = {r["metric"]["worker"]: float(r["value"][1])
                 for r in query("sum by (worker) (max_over_time(crawl_pages_total[5m]))")}
        assert final == {name: float(count) for name, count in totals.items()}
        together = query("sum(max_over_time(crawl_pages_total[5m]))")
        assert float(together[0]["value"][1]) == sum(totals.values())
        assert list(targets.iterdir()) == []  # each worker removed its target at the end
    finally:
        for process in crawls:
            if process.poll() is None:
                process.terminate()
        prometheus.terminate()
        prometheus.wait(timeout=30)
        import redis

        client = redis.Redis.from_url(redis_server.url)
        client.delete(*client.keys("prometheus:frontier*") or ["none"])


def _answers(url: str) -> bool:
    try:
        get(url)
        return True
    except OSError:
        return False


def test_metrics_read_the_crawls_figures_without_what_only_the_page_shows() -> None:
    """/metrics is scraped every few seconds: its state leaves out the
    queue's scores, what was learnt and the judge's questions (the judge
    vectorized up to 1,000 pages' texts for them on every scrape), and
    still has every figure the metrics export."""
    from scrapy.utils.test import get_crawler

    from crawlproject.dashboard.metrics import CrawlCollector
    from crawlproject.extensions.dashboard import CrawlDashboard

    class Strategy:
        def describe_learning(self) -> dict[str, Any]:
            raise AssertionError("asked what was learnt")

    class Judge:
        def questions(self, count: int) -> list[dict[str, Any]]:
            raise AssertionError("asked for the judge's questions")

    class Frontier:
        def sample(self, count: int) -> list[float]:
            raise AssertionError("asked for the queue's scores")

    crawler = get_crawler()
    crawler.spider = type("Spider", (), {"strategy": Strategy(), "judge": Judge(), "name": "s"})()
    dashboard = CrawlDashboard(crawler, 0, "127.0.0.1", "", 0.0, "", "w")
    dashboard.frontier = Frontier()  # type: ignore[assignment]
    state = dashboard.snapshot(full=False)
    names = {family.name for family in CrawlCollector(lambda: [state], "s").collect()}
    assert {"crawl_frontier_queued", "crawl_relevant_pages", "crawl_judged_harvest_ratio"} <= names
    with pytest.raises(AssertionError, match="asked"):  # the page's state asks for them all
        dashboard.snapshot()


def test_the_dashboard_counts_the_pages_its_judge_calls_relevant() -> None:
    """The dashboard counted and listed as relevant the pages whose
    relevance was ≥ 0.5, whatever the judge called them: a calibrated query
    judge calls relevant pages of relevance 0.3, and none reach 0.5."""
    from crawlproject.dashboard.watch import CrawlWatch

    watch = CrawlWatch("w")
    for n, (relevance, relevant) in enumerate([(0.3, True), (0.35, True), (0.6, False), (0.1, False)]):
        watch.page({"url": f"http://h.test/{n}", "canonical_url": f"http://h.test/{n}", "status": 200,
                    "relevance": relevance, "relevant": relevant, "order": n + 1})
    assert watch.judged_relevant == 2
    assert [page["url"] for page in watch.latest_relevant] == ["http://h.test/1", "http://h.test/0"]
