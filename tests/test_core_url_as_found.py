"""The URL fetched is the URL found: robots.txt judges the link as written,
and a redirect to the same page's other spelling is followed."""

from __future__ import annotations

import json
from pathlib import Path

from protego import Protego

from crawlproject.replay.process import ReplayProcess
from tests.conftest import html, run_crawl, served, write_warc

ROBOTS = "User-agent: *\nDisallow: /find?q=\nDisallow: /docs/index.html\n"
HTML = [("Content-Type", "text/html")]


def _site(tmp_path: Path) -> Path:
    return write_warc(
        tmp_path / "site.warc.gz",
        [
            ("http://site.test/", 200, HTML, html(
                '<a href="/find?q=x&amp;lang=en">search</a> <a href="/docs/index.html">docs</a>'
                ' <a href="/docs/guide.html">guide</a> <a href="/gallery/">gallery</a>'
                ' <a href="/About.html#team">about</a>'
            )),
            # Both spellings exist on the server; only the one linked may be judged.
            ("http://site.test/find?q=x&lang=en", 200, HTML, html("results")),
            ("http://site.test/find?lang=en&q=x", 200, HTML, html("results")),
            ("http://site.test/docs/index.html", 200, HTML, html("docs index")),
            ("http://site.test/docs/", 200, HTML, html("docs index")),
            ("http://site.test/docs/guide.html", 200, HTML, html('<a href="/docs/">up</a>')),
            ("http://site.test/gallery/", 301, [("Location", "http://site.test/gallery/index.html")], b""),
            ("http://site.test/gallery/index.html", 200, HTML, html(
                '<a href="a.html">a</a> <a href="b.html">b</a>'
            )),
            ("http://site.test/gallery/a.html", 200, HTML, html("a")),
            ("http://site.test/gallery/b.html", 200, HTML, html("b")),
            ("http://site.test/About.html", 200, HTML, html("about")),
        ],
    )


def test_robots_judges_links_as_found_and_same_page_redirects_are_followed(tmp_path: Path) -> None:
    robots = tmp_path / "robots.txt"
    robots.write_text(ROBOTS)
    log = tmp_path / "access.log"
    with ReplayProcess(str(_site(tmp_path)), robots=str(robots), access_log=str(log)) as replay:
        result = run_crawl("breadthfirst", tmp_path / "out", ["http://site.test/"], replay.proxy_url)
    assert result.returncode == 0, result.log[-3000:]
    fetched = [url for _, url, _ in served(log) if not url.endswith("/robots.txt")]
    parser = Protego.parse(ROBOTS)
    assert [url for url in fetched if not parser.can_fetch(url, "crawlproject")] == []
    # Neither the disallowed links nor their canonical spellings were fetched.
    assert "http://site.test/find?lang=en&q=x" not in fetched
    assert "http://site.test/docs/index.html" not in fetched
    # Every allowed page was reached, the gallery through its redirect.
    assert {
        "http://site.test/docs/", "http://site.test/docs/guide.html",
        "http://site.test/gallery/", "http://site.test/gallery/index.html",
        "http://site.test/gallery/a.html", "http://site.test/gallery/b.html",
        "http://site.test/About.html",
    } <= set(fetched)
    assert len(fetched) == len(set(fetched)), "a URL was fetched twice"
    by_url = {record["url"]: record for record in result.history}
    gallery = by_url["http://site.test/gallery/index.html"]
    assert gallery["canonical_url"] == "http://site.test/gallery/"
    assert gallery["requested_url"] == "http://site.test/gallery/"
    # The case of the path is the server's business: the link is fetched as written.
    assert by_url["http://site.test/About.html"]["canonical_url"] == "http://site.test/About.html"


def test_robots_json_rules_key_by_host(tmp_path: Path) -> None:
    rules = tmp_path / "robots.json"
    rules.write_text(json.dumps({"site.test": ROBOTS}))
    log = tmp_path / "access.log"
    with ReplayProcess(str(_site(tmp_path)), robots=str(rules), access_log=str(log)) as replay:
        result = run_crawl("bestfirst", tmp_path / "out", ["http://site.test/"], replay.proxy_url, "gallery")
    assert result.returncode == 0, result.log[-3000:]
    fetched = {url for _, url, _ in served(log)}
    assert "http://site.test/gallery/b.html" in fetched
    assert "http://site.test/docs/index.html" not in fetched
