"""Fetching a topic's example pages for ``scrapy train --examples`` through
Scrapy itself: the replay (FOCUS_REPLAY_WARC / FOCUS_REPLAY_PROXY) or the
live web, with robots.txt, the network policy and the project's politeness,
as any crawl. Two crawls run side by side in the command's process: the
examples themselves (no link followed), and a breadth-first sample of the
pages near the seeds — what a crawl from them meets: the unlabelled pages
the model is trained and judged on (crawlproject.models.topic_page)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import signals

from crawlproject.models.examples import crawl_pages
from crawlproject.spiders.base import FocusedSpider
from crawlproject.spiders.strategy_spiders import SPIDERS
from crawlproject.web.urls import canonicalize

if TYPE_CHECKING:
    from scrapy.crawler import CrawlerProcessBase


def _spider(name: str, folder: Path, settings: dict[str, Any]) -> type[FocusedSpider]:
    """A breadth-first spider writing its pages into *folder*."""
    breadth_first = SPIDERS["breadth-first"]
    custom = {
        **(breadth_first.custom_settings or {}),
        "FOCUS_OUTPUT_DIR": str(folder), "FOCUS_STORE_PAGES": True, "LOG_LEVEL": "WARNING", **settings,
    }
    return type(f"{name.title()}ExamplesSpider", (breadth_first,), {"name": name, "custom_settings": custom})


def fetch(
    process: CrawlerProcessBase, folder: Path, examples: list[str], near: list[str], sample: int
) -> tuple[dict[str, str | None], dict[str, str | None]]:
    """The example pages (canonical URL → text, None when not fetched or
    not HTML), and, with *near* seeds, up to *sample* pages near them."""
    folder.mkdir(parents=True, exist_ok=True)
    seeds = folder / "examples.txt"
    seeds.write_text("\n".join(examples) + "\n", encoding="utf-8")
    progress = _Progress(len(examples) + (sample if near else 0))
    errors: list[BaseException] = []
    crawler = process.create_crawler(_spider("examples", folder / "examples", {}))
    _watch(process.crawl(crawler, seeds=str(seeds), follow_links="no"), errors)
    crawler.signals.connect(progress.page, signals.response_received)
    if near:
        near_file = folder / "near.txt"
        near_file.write_text("\n".join(near) + "\n", encoding="utf-8")
        settings = {"FOCUS_OK_PAGECOUNT": sample, "FOCUS_SCOPE": "domain"}
        crawler = process.create_crawler(_spider("near", folder / "near", settings))
        _watch(process.crawl(crawler, seeds=str(near_file)), errors)
        crawler.signals.connect(progress.page, signals.response_received)
    delay = process.settings.getfloat("DOWNLOAD_DELAY")
    if delay:
        print(f"  (DOWNLOAD_DELAY={delay:g}: one page every {delay:g} s per host, as the project's settings "
              "ask; -s DOWNLOAD_DELAY=0 for a local replay)", flush=True)
    process.start()
    if errors:
        from crawlproject.commands.crawl import startup_cause

        error = errors[0]
        raise ValueError(f"the example pages could not be fetched: {startup_cause(error) or error}")
    wanted = {canonicalize(url) for url in examples}
    found: dict[str, str | None] = dict.fromkeys(wanted)
    if (folder / "examples" / "pages.jsonl").is_file():
        found.update(crawl_pages(folder / "examples", wanted.__contains__))
    nearby: dict[str, str | None] = {}
    if near and (folder / "near" / "pages.jsonl").is_file():
        nearby = dict(crawl_pages(folder / "near", lambda url: url not in wanted))
    return found, nearby


class _Progress:
    """A line every few pages while the examples and their neighbours are fetched."""

    def __init__(self, expected: int):
        self.expected, self.pages = expected, 0
        self.step = max(10, expected // 10)

    def page(self, response: Any, request: Any, spider: Any) -> None:
        self.pages += 1
        if self.pages % self.step == 0:
            print(f"  fetched {self.pages} pages (of up to {self.expected})", file=sys.stderr, flush=True)


def _watch(crawling: Any, errors: list[BaseException]) -> None:
    """Keep what a crawl failed with (a Deferred, or an asyncio task)."""
    if hasattr(crawling, "add_done_callback"):
        def done(task: Any) -> None:
            if not task.cancelled() and task.exception() is not None:
                errors.append(task.exception())

        crawling.add_done_callback(done)
    else:
        crawling.addErrback(lambda failure: errors.append(failure.value))


def crawl_failures(folder: Path) -> dict[str, str]:
    """Why each example that has no page was not fetched (status or error)."""
    history = folder / "examples" / "history.jsonl"
    found: dict[str, str] = {}
    if history.is_file():
        for line in history.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record.get("status") != 200:
                found[record["canonical_url"]] = str(record.get("error") or record.get("status"))
    return found
