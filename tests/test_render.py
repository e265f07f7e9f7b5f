"""Rendering where scripts build the page (issue 52 §2): a site whose
navigation and text are written by JavaScript, served by our replay — a
plain crawl finds none of its pages, a rendered one all; auto renders only
the pages that need it, none of WebKB's; rendered fetches count against the
budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawlproject.replay.process import ReplayProcess
from tests.conftest import UNIVERSITY_HOMES, WEBKB_WARC, log_stat, run_crawl, write_warc

HTML = [("Content-Type", "text/html")]
PROSE = " ".join(["The gnuplot terminal driver writes each plot to an output device of its own."] * 8)


def _built_by_script(title: str, inner: str) -> bytes:
    """A page whose body a script writes (as a single-page application's)."""
    escaped = inner.replace("'", "\\'")
    return (f"<html><head><title>{title}</title></head><body><div id='app'>Loading…</div>"
            f"<script>document.getElementById('app').innerHTML = '{escaped}';</script></body></html>").encode()


def _script_site(tmp_path: Path) -> Path:
    return write_warc(tmp_path / "js.warc.gz", [
        ("http://js.test/", 200, HTML, _built_by_script(
            "App", " ".join(f'<a href="/{name}">{name}</a>' for name in ("one", "two", "three")))),
        *[(f"http://js.test/{name}", 200, HTML, _built_by_script(name, f'<p>{PROSE}</p><a href="/plain">more</a>'))
          for name in ("one", "two", "three")],
        ("http://js.test/plain", 200, HTML,
         f"<html><head><title>plain</title><script>var x = 1;</script></head><body><p>{PROSE}</p>"
         f"<a href='/'>home</a></body></html>".encode()),
    ])


@pytest.mark.parametrize(("render", "pages", "rendered"), [
    ("never", {"/"}, set()),
    ("always", {"/", "/one", "/two", "/three", "/plain"}, {"/", "/one", "/two", "/three", "/plain"}),
    ("auto", {"/", "/one", "/two", "/three", "/plain"}, {"/", "/one", "/two", "/three"}),
])
def test_pages_built_by_scripts_are_found_only_when_rendered(
    tmp_path: Path, render: str, pages: set[str], rendered: set[str]
) -> None:
    with ReplayProcess(str(_script_site(tmp_path))) as replay:
        result = run_crawl("breadthfirst", tmp_path / "out", ["http://js.test/"], replay.proxy_url,
                           settings={"FOCUS_RENDER": render, "CLOSESPIDER_TIMEOUT": 120})
    assert result.returncode == 0, result.log[-3000:]
    assert result.summary["finish_reason"] == "finished"
    fetched = {r["url"].removeprefix("http://js.test") or "/" for r in result.history}
    assert fetched == pages
    assert {r["url"].removeprefix("http://js.test") or "/" for r in result.history if r["rendered"]} == rendered
    assert (log_stat(result.log, "focus/render/pages") or 0) == len(rendered)
    if render == "auto":
        # chosen by their HTML: the plain page (text and a link) was not rendered
        assert log_stat(result.log, "focus/render/auto") == len(rendered)
        # a rendered page is fetched twice (plain, then by the browser) and counts as two fetches against
        # a page budget, as any fetch (robots.txt aside)
        answered = log_stat(result.log, "response_received_count") - (log_stat(result.log, "robotstxt/response_count") or 0)
        assert answered == len(pages) + len(rendered)


def test_auto_renders_none_of_webkb(tmp_path: Path) -> None:
    with ReplayProcess(str(WEBKB_WARC)) as replay:
        result = run_crawl("breadthfirst", tmp_path / "out", UNIVERSITY_HOMES, replay.proxy_url,
                           settings={"FOCUS_RENDER": "auto", "CLOSESPIDER_PAGECOUNT": 150})
    assert result.returncode == 0, result.log[-3000:]
    assert len(result.history) >= 140
    assert log_stat(result.log, "focus/render/auto") is None and not any(r["rendered"] for r in result.history)
