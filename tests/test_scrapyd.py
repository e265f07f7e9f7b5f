"""Deploying to a real Scrapyd as a user would: scrapyd-deploy
builds a working egg, schedule.json runs our spiders with their arguments
and settings, and logs and items come back through Scrapyd's HTTP API."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from bench.servers import ScrapydServer
from crawlproject.replay.process import ReplayProcess
from tests.conftest import ROOT, WEBKB_WARC


def api(scrapyd: ScrapydServer, path: str, data: dict[str, Any] | list[tuple[str, str]] | None = None) -> Any:
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    with urllib.request.urlopen(f"{scrapyd.url}/{path}", data=body, timeout=30) as answer:  # noqa: S310
        text = answer.read().decode()
    return json.loads(text) if path.endswith(".json") or "json" in path.split("?")[0] else text


def untracked() -> set[str]:
    listed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT,  # noqa: S607
                            capture_output=True, text=True, check=True).stdout
    return {line[3:] for line in listed.splitlines() if line.startswith("??")}


def wait_finished(scrapyd: ScrapydServer, job: str, seconds: float = 180) -> None:
    """Poll Scrapyd's job list (its only way to tell) until *job* has finished."""
    deadline = time.monotonic() + seconds
    while not any(j["id"] == job for j in api(scrapyd, "listjobs.json?project=crawlproject")["finished"]):
        assert time.monotonic() < deadline, "the job did not finish"
        time.sleep(0.2)


def deploy(scrapyd: ScrapydServer) -> None:
    deployed = subprocess.run(
        [sys.executable, "-m", "scrapyd_client.deploy", "env", "-p", "crawlproject", "-v", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=180, env={**os.environ, "SCRAPYD_URL": scrapyd.url},
    )
    assert deployed.returncode == 0, deployed.stderr[-3000:]


def test_deploy_schedule_and_read_results_through_scrapyd(tmp_path: Path) -> None:
    before = untracked()
    with ScrapydServer(tmp_path / "scrapyd") as scrapyd, ReplayProcess(str(WEBKB_WARC)) as replay:
        deploy(scrapyd)
        assert untracked() == before  # no setup.py or build files left behind
        spiders = api(scrapyd, "listspiders.json?project=crawlproject")
        assert (
            spiders["status"] == "ok" and "bestfirst" in spiders["spiders"] and "focused-base" not in spiders["spiders"]
        )
        scheduled = api(scrapyd, "schedule.json", [
            ("project", "crawlproject"), ("spider", "bestfirst"),
            ("query", "course syllabus lecture homework"), ("seeds", "http://www.cs.cornell.edu/"),
            ("setting", f"FOCUS_REPLAY_PROXY={replay.proxy_url}"), ("setting", "CLOSESPIDER_ITEMCOUNT=25"),
            ("setting", "DOWNLOAD_DELAY=0"), ("setting", "CONCURRENT_REQUESTS_PER_DOMAIN=8"),
        ])
        assert scheduled["status"] == "ok", scheduled
        job = scheduled["jobid"]
        wait_finished(scrapyd, job)
        log = api(scrapyd, f"logs/crawlproject/bestfirst/{job}.log")
        items = api(scrapyd, f"items/crawlproject/bestfirst/{job}.jl")
    assert "Crawl summary" in log and "Traceback" not in log
    pages = [json.loads(line) for line in items.splitlines()]
    assert len(pages) >= 25 and pages[0]["url"] == "http://www.cs.cornell.edu/"
    assert any(page["relevance"] for page in pages)  # the query reached the spider
    output = tmp_path / "scrapyd" / "crawls" / f"bestfirst-{job}"  # the crawl's own folder, named by its job
    assert len((output / "history.jsonl").read_text().splitlines()) == len(pages)


def test_weekly_refresh_runs_through_scrapyd_carry_their_state(tmp_path: Path) -> None:
    """A repository crawled at week 0 of the PHP manual, refreshed by two
    Scrapyd jobs a week apart: the second starts from the first's state."""
    from tests.conftest import run_crawl
    from tests.test_replay_time import START, WARC

    with ScrapydServer(tmp_path / "scrapyd") as scrapyd, ReplayProcess(str(WARC), as_of=START) as replay:
        repository = tmp_path / "repository"
        crawl = run_crawl("breadthfirst", repository, ["http://www.php.net/manual/en/index.php"], replay.proxy_url,
                          settings={"FOCUS_OK_PAGECOUNT": 60})
        assert crawl.returncode == 0, crawl.log[-2000:]
        # The crawl stops at 60 good pages but requests in flight still land, so the repository
        # holds 60 or more: a budget over half of it makes the second job refresh some pages again.
        stored = len({json.loads(line)["url"] for line in (repository / "pages.jsonl").read_text().splitlines()})
        budget = stored // 2 + 5
        deploy(scrapyd)
        for week, now in enumerate(("2021-06-01T00:00:00Z", "2021-06-08T00:00:00Z"), 1):
            replay.clock(now)
            scheduled = api(scrapyd, "schedule.json", [
                ("project", "crawlproject"), ("spider", "refresh"), ("repository", str(repository)),
                ("policy", "staleness"), ("budget", str(budget)), ("now", now), ("crawled_at", START),
                ("setting", f"FOCUS_REPLAY_PROXY={replay.proxy_url}"), ("setting", "DOWNLOAD_DELAY=0"),
            ])
            assert scheduled["status"] == "ok", scheduled
            wait_finished(scrapyd, scheduled["jobid"])
            log = api(scrapyd, f"logs/crawlproject/refresh/{scheduled['jobid']}.log")
            assert f"Refreshed {budget} of {stored} pages" in log and "Traceback" not in log, log[-2000:]
            changes = (repository / "refresh" / "changes.jsonl").read_text().splitlines()
            assert len(changes) == budget * week
    state = json.loads((repository / "refresh" / "state.json").read_text())["pages"]
    # Every refresh of both jobs is in the one state; pages the first job refreshed, the second knew.
    visits = [len(page["intervals"]) for page in state.values()]
    assert sum(visits) == 2 * budget and max(visits) == 2
    assert all(page["etag"] for page in state.values() if page["intervals"] and not page["deleted"])


def test_the_cluster_fetches_exactly_the_pages_asked_for(tmp_path: Path) -> None:
    """scripts.cluster: two Scrapyd workers on one Redis frontier share --pages
    exactly (an item count per worker let each run past its share by the
    requests it had in flight: 125 pages for --pages 100)."""
    done = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "scripts.cluster", "--workers", "2", "--pages", "41", "--folder", str(tmp_path),
         "-s", "DOWNLOAD_DELAY=0", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=8"],
        cwd=ROOT, capture_output=True, text=True, timeout=400,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "together: 41 pages, 0 fetched twice" in done.stdout, done.stdout[-2000:]
    shares = sorted(int(n) for n in re.findall(r"worker \d \(job \w+\): (\d+) pages", done.stdout))
    assert shares == [20, 21], done.stdout[-2000:]
