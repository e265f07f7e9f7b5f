"""Real crawls of the replayed WebKB corpus with the real `scrapy crawl`."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from crawlproject.replay.archive import WarcArchive
from crawlproject.replay.process import ReplayProcess
from tests.conftest import UNIVERSITY_HOMES, WEBKB_LABELS, WEBKB_WARC, run_crawl

QUERY = "course syllabus lecture homework"
LABELS = {"FOCUS_LABELS": str(WEBKB_LABELS), "FOCUS_RELEVANT": "course"}


def test_bestfirst_crawl_leaves_history_pages_links_and_summary(
    webkb_replay: ReplayProcess, tmp_path: Path
) -> None:
    result = run_crawl(
        "bestfirst", tmp_path, UNIVERSITY_HOMES, webkb_replay.proxy_url, QUERY,
        {"CLOSESPIDER_ITEMCOUNT": 120, "FOCUS_WARC_OUTPUT": True, **LABELS},
    )
    assert result.returncode == 0, result.log[-3000:]
    history = result.history
    assert len(history) >= 120
    assert [r["order"] for r in history] == list(range(1, len(history) + 1))
    seeds = [r for r in history if r["depth"] == 0]
    assert {r["url"] for r in seeds} == set(UNIVERSITY_HOMES)
    assert all(r["score"] is None and r["parent_url"] is None for r in seeds)
    followed = [r for r in history if r["depth"] > 0]
    assert all(r["parent_url"] and r["score"] is not None for r in followed)
    assert len({r["canonical_url"] for r in history}) == len(history)  # nothing twice
    for field in ("status", "fetched_at", "content_type", "size", "relevance"):
        assert field in history[0]
    # Page repository: MD5 of the canonical URL, bytes as served.
    ok = [r for r in history if r["status"] == 200]
    pages = [json.loads(line) for line in (tmp_path / "pages.jsonl").read_text().splitlines()]
    assert len(pages) == len(ok)
    archive = WarcArchive(WEBKB_WARC)
    for page in pages[:10]:
        name = hashlib.md5(page["url"].encode()).hexdigest() + ".html"  # noqa: S324
        assert page["file"] == f"pages/{name}"
        archived = archive.lookup(page["url"])
        assert archived is not None
        assert (tmp_path / page["file"]).read_bytes() == archived.body[: 100 * 1024]
    archive.close()
    # Link graph: every outlink of every ok page, sources in the history.
    links = result.links()
    assert links and {source for source, _, _ in links} <= {r["canonical_url"] for r in ok}
    # WARC of the crawl, readable by warcio.
    with (tmp_path / "crawl.warc.gz").open("rb") as f:
        records = [(rec.rec_type, rec.rec_headers.get_header("WARC-Target-URI")) for rec in ArchiveIterator(f)]
    uris = [uri for kind, uri in records if kind == "response"]
    assert len(uris) == len([r for r in history if r["status"] is not None])
    # each response followed by its metadata record (the page's verdict and the link that led there)
    assert [uri for kind, uri in records if kind == "metadata"] == uris
    # Summary with the harvest rate from labels.
    summary = result.summary
    assert summary["pages_fetched"] == len(history)
    assert 0 <= summary["harvest_rate"] <= 1
    assert "Crawl summary" in result.log
    # No field without a value (topic_id: None, task: None), no estimate's history in the log
    logged = result.log[result.log.index("Crawl summary"):].split("\n\n")[0]
    assert not re.search(r"^  \w+: None$", logged, re.MULTILINE) and "remaining_history" not in logged, logged
    assert "topic_id" not in summary and "remaining_history" in summary


def test_breadthfirst_visits_in_depth_order(webkb_replay: ReplayProcess, tmp_path: Path) -> None:
    result = run_crawl(
        "breadthfirst", tmp_path, ["http://www.cs.washington.edu/"], webkb_replay.proxy_url,
        settings={"CLOSESPIDER_ITEMCOUNT": 150, "CONCURRENT_REQUESTS": 1},
    )
    assert result.returncode == 0, result.log[-3000:]
    depths = [r["depth"] for r in result.history]
    assert len(depths) >= 150 and depths == sorted(depths)
    assert max(depths) >= 2


def test_bestfirst_harvests_more_course_pages_than_breadthfirst(
    webkb_replay: ReplayProcess, tmp_path: Path
) -> None:
    # One download at a time makes both orders deterministic: with 16 in
    # flight, which host answers first decides where breadth-first goes.
    harvest = {}
    for spider in ("breadthfirst", "bestfirst"):
        result = run_crawl(
            spider, tmp_path / spider, UNIVERSITY_HOMES, webkb_replay.proxy_url, QUERY,
            {"CLOSESPIDER_ITEMCOUNT": 400, "CONCURRENT_REQUESTS": 1, **LABELS},
        )
        assert result.returncode == 0, result.log[-3000:]
        harvest[spider] = result.summary["relevant_pages"]
    assert harvest["bestfirst"] > harvest["breadthfirst"] + 5, harvest


def test_no_crash_over_every_page_of_webkb(webkb_replay: ReplayProcess, tmp_path: Path) -> None:
    archive = WarcArchive(WEBKB_WARC)
    urls = list(archive.urls())
    archive.close()
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("\n".join(urls) + "\n")
    result = run_crawl(
        "bestfirst", tmp_path / "out", str(seeds), webkb_replay.proxy_url, QUERY,
        {"FOCUS_STORE_PAGES": False, "CONCURRENT_REQUESTS": 32},
        extra_args=["-a", "follow_links=no"],
    )
    assert result.returncode == 0, result.log[-3000:]
    assert "Traceback" not in result.log and " ERROR: " not in result.log
    from crawlproject.web.urls import canonicalize

    requested = {canonicalize(r["requested_url"]) for r in result.history}
    landed = {r["canonical_url"] for r in result.history}
    archive = WarcArchive(WEBKB_WARC)
    redirected = []
    for url in urls:
        if canonicalize(url) in requested:
            continue
        redirected.append(url)
        # A redirect (HTTP or <meta http-equiv=refresh>) to a page reached
        # another way: fetched once, as that page, so no record of its own.
        archived = archive.lookup(url)
        assert archived is not None, url
        is_refresh = re.search(rb"http-equiv=.?refresh", archived.body, re.IGNORECASE)
        assert 300 <= archived.status < 400 or is_refresh, url
    archive.close()
    assert len(redirected) < len(urls) / 100
    assert len(landed) > 0.95 * len(urls)
    assert all(r["status"] is not None for r in result.history)


def test_a_seeds_file_whose_path_holds_a_comma_is_read_as_a_file(webkb_replay: ReplayProcess, tmp_path: Path) -> None:
    # A topic named after its category ("php/IMAP, POP3 and NNTP") gives its
    # crawl folder a comma; the seeds file in it was taken for a URL list.
    folder = tmp_path / "IMAP, POP3 and NNTP"
    folder.mkdir()
    seeds = folder / "seeds.txt"
    seeds.write_text("# the Texas department\nhttp://www.cs.utexas.edu/\n", encoding="utf-8")
    result = run_crawl(
        "breadthfirst", folder / "out", str(seeds), webkb_replay.proxy_url, QUERY, {"CLOSESPIDER_ITEMCOUNT": 3},
    )
    assert result.returncode == 0, result.log[-3000:]
    assert result.history and result.history[0]["requested_url"] == "http://www.cs.utexas.edu/"


def test_a_category_whose_name_holds_a_comma_is_one_relevant_category(
    webkb_replay: ReplayProcess, tmp_path: Path
) -> None:
    # phpdoc's "php/IMAP, POP3 and NNTP": FOCUS_RELEVANT was split at the comma
    # into two categories that label nothing, and the crawl refused to start.
    category = "teaching/course, lab and seminar pages"
    labels = tmp_path / "labels.tsv"
    with WEBKB_LABELS.open(encoding="utf-8") as source, labels.open("w", encoding="utf-8") as renamed:
        for line in source:
            url, label = line.rstrip("\n").split("\t")
            renamed.write(f"{url}\t{category if label.startswith('course') else label}\n")
    result = run_crawl(
        "oracle", tmp_path / "out", ["http://www.cs.washington.edu/"], webkb_replay.proxy_url, None,
        {"FOCUS_LABELS": str(labels), "FOCUS_RELEVANT": category, "FOCUS_OK_PAGECOUNT": 60, "CONCURRENT_REQUESTS": 1},
    )
    assert result.returncode == 0, result.log[-3000:]
    assert result.summary["relevant_pages"] >= 10, result.summary


def test_best_n_first_fetches_batch_by_batch(webkb_replay: ReplayProcess, tmp_path: Path) -> None:
    n = 16
    result = run_crawl(
        "bestfirst", tmp_path, ["http://www.cs.washington.edu/"], webkb_replay.proxy_url, QUERY,
        {"CLOSESPIDER_ITEMCOUNT": 200, "FOCUS_BATCH_SIZE": n, "FOCUS_FRONTIER_MAX": 256},
    )
    assert result.returncode == 0, result.log[-3000:]
    order_of = {r["url"]: r["order"] for r in result.history}
    for record in result.history[1:]:
        batch_start = ((record["order"] - 2) // n) * n + 2  # the seed is a batch of its own
        parent_order = order_of[record["parent_url"]]
        assert parent_order < batch_start, (record, parent_order, batch_start)
    assert "frontier/batches" in result.log


def test_an_ok_page_budget_counts_pages_answered_2xx_not_dead_links(webkb_replay, tmp_path) -> None:
    # From Cornell's department page most links are dead (the 1997 crawl did not keep them):
    # a budget of 40 fetches would hold few pages; FOCUS_OK_PAGECOUNT=40 holds 40.
    result = run_crawl("breadthfirst", tmp_path / "crawl", ["http://www.cs.cornell.edu/"], webkb_replay.proxy_url,
                       settings={"FOCUS_OK_PAGECOUNT": 40})
    assert result.returncode == 0, result.log[-2000:]
    ok = [row for row in result.history if 200 <= row["status"] < 300]
    assert 40 <= len(ok) <= 40 + 16  # requests in flight finish
    assert len(result.history) > len(ok)  # dead links were fetched too, and did not count
    assert json.loads((tmp_path / "crawl" / "summary.json").read_text())["finish_reason"] == "closespider_okpagecount"
    # the progress line counts against the budget: pages answered 2xx, its tenth logged once passed
    lines = re.findall(r"Progress: (\d+)/40 pages \(\d+%\), [\d.]+ pages/s, (\d+) ok", result.log)
    assert lines and all(done == ok for done, ok in lines), lines


def test_a_progress_line_from_the_timer_and_one_from_the_budget_are_never_both_logged(caplog, monkeypatch) -> None:
    # A budget's tenth and the LOGSTATS_INTERVAL timer each logged a line, so two came
    # out in the same second ("15/150 pages (10%)", then "16/150 pages (11%)").
    import logging
    from types import SimpleNamespace

    from scrapy import Spider
    from scrapy.utils.test import get_crawler

    from crawlproject.extensions import progress as module

    clock = [100.0]
    monkeypatch.setattr(module, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    crawler = get_crawler(Spider, {"ADDONS": {}})
    crawler.stats.open_spider()
    progress = module.CrawlProgress(crawler, interval=10.0, labels=None, relevant=(), budget=150)
    steps = ((1.0, 15, progress.log_step_line), (1.2, 16, progress.log_timer_line),  # a step, then the timer
             (1.4, 30, progress.log_step_line),  # the next step, at once in a fast crawl
             (11.0, 40, progress.log_timer_line), (11.3, 45, progress.log_step_line))  # the timer, then a step
    with caplog.at_level(logging.INFO, logger="crawlproject.extensions.progress"):
        for seconds, fetched, log in steps:
            clock[0], progress.fetched = 100.0 + seconds, fetched
            log()
    lines = [record.getMessage() for record in caplog.records if record.getMessage().startswith("Progress:")]
    assert [line.split(",")[0].removeprefix("Progress: ") for line in lines] == [
        "15/150 pages (10%)", "30/150 pages (20%)", "40/150 pages (27%)"]


def test_a_page_item_logs_as_one_short_line() -> None:
    # Scrapy logs every scraped item at DEBUG (its template's level); a page's body,
    # text and links made a 300-page log 40,000 lines.
    from crawlproject.items import PageItem

    item = PageItem(url="http://a.test/", status=200, title="A", relevance=0.5, body=b"<p>x</p>" * 10_000,
                    text="word " * 5_000, outlinks=[(f"http://a.test/{n}", "anchor") for n in range(500)])
    shown = repr(item)
    assert "\n" not in shown and len(shown) < 200 and "http://a.test/" in shown and "'status': 200" in shown


def test_the_page_budget_is_the_crawl_s_closespider_extension(webkb_replay, tmp_path) -> None:
    # The budget is the CloseSpider extension's, found through the crawler: a project that puts
    # Scrapy's own back gets Scrapy's page count, and the scheduler, holding no budget of its
    # own, never holds a request back for one (before, a budget kept in a module-level registry
    # held the requests while no extension closed the crawl: it ended only at its timeout).
    result = run_crawl("breadthfirst", tmp_path / "crawl", ["http://www.cs.cornell.edu/"], webkb_replay.proxy_url,
                       settings={"CLOSESPIDER_PAGECOUNT": 20, "CLOSESPIDER_TIMEOUT": 90, "EXTENSIONS": json.dumps(
                           {"crawlproject.frontier.budget.CloseSpider": None,
                            "scrapy.extensions.closespider.CloseSpider": 0})})
    assert result.returncode == 0, result.log[-2000:]
    assert result.summary["finish_reason"] == "closespider_pagecount"  # Scrapy's count closed it
    assert len(result.history) >= 20


def test_each_crawl_finds_its_own_budget_through_its_crawler() -> None:
    from scrapy.utils.test import get_crawler

    from crawlproject.frontier.budget import CloseSpider, page_budget

    extensions = {"crawlproject.frontier.budget.CloseSpider": 0}
    crawlers = [get_crawler(settings_dict={"CLOSESPIDER_PAGECOUNT": pages, "CLOSESPIDER_TIMEOUT": 60,
                                           "EXTENSIONS": extensions}) for pages in (5, 0)]
    first, second = (crawler.get_extension(CloseSpider) for crawler in crawlers)
    assert first is not None and page_budget(crawlers[0]) is first.budget and first.budget.pages == 5
    assert second is not None and page_budget(crawlers[1]) is None  # no page limit: no budget
