"""Each outlink is canonicalized once per page, whatever reads it after."""

from __future__ import annotations

from pathlib import Path

import pytest
from scrapy.http import HtmlResponse, Request

from crawlproject.middlewares.canonicalize import CanonicalizeMiddleware
from crawlproject.pipelines.linkgraph import LinkGraphPipeline
from crawlproject.spiders import SharkSearchSpider
from crawlproject.web import urls
from tests.conftest import open_scheduler


def test_each_outlink_is_canonicalized_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    crawler, scheduler, spider = open_scheduler(
        SharkSearchSpider, {"FOCUS_OUTPUT_DIR": str(tmp_path / "out")},
        query="course", seeds="http://seed.test/",
    )
    links = [f"http://h{i % 7}.test/course/{i}" for i in range(40)]  # already canonical
    body = "<html><body>" + "".join(f'<p>course {i} <a href="{u}">course {i}</a></p>' for i, u in enumerate(links))
    request = Request("http://seed.test/", meta={"depth": 0})
    response = HtmlResponse("http://seed.test/", body=(body + "</body></html>").encode(), request=request)
    middleware = CanonicalizeMiddleware.from_crawler(crawler)
    pipeline = LinkGraphPipeline.from_crawler(crawler)

    calls = []
    real = urls.canonicalize_url
    monkeypatch.setattr(urls, "canonicalize_url", lambda url, *a, **k: calls.append(url) or real(url, *a, **k))
    outputs = list(middleware.process_spider_output(response, spider.parse(response)))
    for output in outputs:
        if isinstance(output, Request):
            scheduler.enqueue_request(output)
        else:
            pipeline.process_item(output, spider)
    pipeline.close_spider(spider)
    assert sum(isinstance(o, Request) for o in outputs) == 40
    assert len(calls) <= len(links) + 2, f"{len(calls)} canonicalizations for {len(links)} links"


def test_links_scrapy_s_extractor_ignores_are_ignored_and_only_those() -> None:
    """The page drops the links Scrapy's own extractor drops for their
    extension (``IGNORED_EXTENSIONS``), looked up its faster way."""
    from scrapy.linkextractors import IGNORED_EXTENSIONS
    from scrapy.utils.url import url_has_any_extension

    from crawlproject.web.page import Page, _ignored_extension

    hrefs = [
        "/a.pdf", "/A.PDF", "/b.tar.gz", "/b.gz", "/c.html", "/d", "/e/", "/f.pdf/", "/v1.2/readme", "/g.pdf?x=1",
        "/h.pdf;jsessionid=9", "/i.jpg#top", "/.zip", "/j.docx", "/k.pdf.html", "/l.PdF?download", "/m.tar",
    ]
    expected = [
        h for h in hrefs if not url_has_any_extension(f"http://s.test{h}", {f".{e}" for e in IGNORED_EXTENSIONS})
    ]
    assert [h for h in hrefs if not _ignored_extension(f"http://s.test{h}")] == expected
    assert "/c.html" in expected and "/b.tar.gz" not in expected and "/h.pdf;jsessionid=9" not in expected
    body = "<html><body>" + "".join(f'<a href="{h}">{h}</a>' for h in hrefs) + "</body></html>"
    page = Page.from_response(HtmlResponse("http://s.test/", body=body.encode()))
    assert [link.anchor for link in page.links] == expected
