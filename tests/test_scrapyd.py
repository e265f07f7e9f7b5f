"""Deploying to a real Scrapyd as a user would (issue 12 §3): scrapyd-deploy
builds a working egg, schedule.json runs our spiders with their arguments
and settings, and logs and items come back through Scrapyd's HTTP API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from crawlproject.replay.process import ReplayProcess
from crawlproject.servers import ScrapydServer
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


def test_deploy_schedule_and_read_results_through_scrapyd(tmp_path: Path) -> None:
    before = untracked()
    with ScrapydServer(tmp_path / "scrapyd") as scrapyd, ReplayProcess(str(WEBKB_WARC)) as replay:
        deployed = subprocess.run(
            [sys.executable, "-m", "scrapyd_client.deploy", "env", "-p", "crawlproject", "-v", "1"],
            cwd=ROOT, capture_output=True, text=True, timeout=180, env={**os.environ, "SCRAPYD_URL": scrapyd.url},
        )
        assert deployed.returncode == 0, deployed.stderr[-3000:]
        assert untracked() == before  # no setup.py or build files left behind
        spiders = api(scrapyd, "listspiders.json?project=crawlproject")
        assert spiders["status"] == "ok" and "bestfirst" in spiders["spiders"] and "focused-base" not in spiders["spiders"]
        scheduled = api(scrapyd, "schedule.json", [
            ("project", "crawlproject"), ("spider", "bestfirst"),
            ("query", "course syllabus lecture homework"), ("seeds", "http://www.cs.cornell.edu/"),
            ("setting", f"FOCUS_REPLAY_PROXY={replay.proxy_url}"), ("setting", "CLOSESPIDER_ITEMCOUNT=25"),
            ("setting", "DOWNLOAD_DELAY=0"), ("setting", "CONCURRENT_REQUESTS_PER_DOMAIN=8"),
        ])
        assert scheduled["status"] == "ok", scheduled
        job = scheduled["jobid"]
        deadline = time.monotonic() + 180
        while not any(j["id"] == job for j in api(scrapyd, "listjobs.json?project=crawlproject")["finished"]):
            assert time.monotonic() < deadline, "the job did not finish"
            time.sleep(0.2)
        log = api(scrapyd, f"logs/crawlproject/bestfirst/{job}.log")
        items = api(scrapyd, f"items/crawlproject/bestfirst/{job}.jl")
    assert "Crawl summary" in log and "Traceback" not in log
    pages = [json.loads(line) for line in items.splitlines()]
    assert len(pages) >= 25 and pages[0]["url"] == "http://www.cs.cornell.edu/"
    assert any(page["relevance"] for page in pages)  # the query reached the spider
    output = tmp_path / "scrapyd" / "crawls" / f"bestfirst-{job}"  # the crawl's own folder, named by its job
    assert len((output / "history.jsonl").read_text().splitlines()) == len(pages)
