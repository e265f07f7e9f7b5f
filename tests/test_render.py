"""Rendering where scripts build the page (issues 52 and 59): a site whose
pages are shells that fetch their links and text as JSON after load
(crawlproject.replay.script_site) — a plain crawl finds none of its
articles; a render that waits for the scripts finds every one with its
text, decoded in the page's own charset; a render that still shows its
placeholder is said once, counted and kept as not rendered; auto renders
the later pages of a host that needed it without fetching them twice, and
none of WebKB's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crawlproject.replay import script_site
from crawlproject.replay.process import ReplayProcess
from tests.conftest import UNIVERSITY_HOMES, WEBKB_WARC, log_stat, run_crawl

ARTICLES = 12
BROKEN = 5  # its script fetches JSON that is not there: "Loading…" stays


@pytest.mark.parametrize("render", ["never", "always", "auto"])
def test_pages_scripts_build_after_load_are_rendered_with_their_text(tmp_path: Path, render: str) -> None:
    site = script_site.write(tmp_path / "site.warc.gz", ARTICLES, broken=[BROKEN])
    with ReplayProcess(str(site)) as replay:
        result = run_crawl("breadthfirst", tmp_path / "out", [f"{script_site.HOST}/"], replay.proxy_url,
                           settings={"FOCUS_RENDER": render, "FOCUS_COLLECTION": True, "CLOSESPIDER_TIMEOUT": 150})
    assert result.returncode == 0, result.log[-3000:]
    assert result.summary["finish_reason"] == "finished"
    pages = {json.loads(line)["url"].removeprefix(script_site.HOST): json.loads(line)
             for line in (tmp_path / "out/collection/pages.jsonl").read_text().splitlines()}
    if render == "never":
        assert set(pages) == {"/"} and log_stat(result.log, "focus/render/pages") is None
        return
    articles = {f"/articles/{n}" for n in range(1, ARTICLES + 1)}
    assert set(pages) == {"/"} | articles
    # every article its script could build, with the text the script wrote, in the page's own charset
    for n in range(1, ARTICLES + 1):
        page = pages[f"/articles/{n}"]
        assert page["title"] == script_site.article_title(n)
        if n != BROKEN:
            assert page["rendered"] and script_site.article_text(n) in page["text"], page
    # the placeholder never passes for a render: kept as fetched, counted, said once
    broken = pages[f"/articles/{BROKEN}"]
    assert not broken["rendered"] and script_site.article_text(BROKEN) not in broken["text"]
    assert log_stat(result.log, "focus/render/failed") == 1
    assert log_stat(result.log, "focus/render/pages") == ARTICLES  # the front page and 11 articles
    said = [line for line in result.log.splitlines() if "WARNING" in line and "Rendering" in line]
    assert len(said) == 1 and f"/articles/{BROKEN} failed (a loading placeholder was still shown)" in said[0]
    answered = log_stat(result.log, "response_received_count") - (log_stat(result.log, "robotstxt/response_count") or 0)
    if render == "auto":
        # the front page was fetched plainly, then rendered; every later page of its host went to the browser once
        assert log_stat(result.log, "focus/render/auto") == 1 and log_stat(result.log, "focus/render/hosts") == 1
        assert answered == 1 + len(pages)
    else:
        assert answered == len(pages)


def test_auto_renders_none_of_webkb(tmp_path: Path) -> None:
    with ReplayProcess(str(WEBKB_WARC)) as replay:
        result = run_crawl("breadthfirst", tmp_path / "out", UNIVERSITY_HOMES, replay.proxy_url,
                           settings={"FOCUS_RENDER": "auto", "CLOSESPIDER_PAGECOUNT": 150})
    assert result.returncode == 0, result.log[-3000:]
    assert len(result.history) >= 140
    assert log_stat(result.log, "focus/render/auto") is None and not any(r["rendered"] for r in result.history)
