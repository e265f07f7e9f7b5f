"""What crawlproject.scrapy_private relies on in Scrapy: if an upgrade moves
it, these fail here, loudly, before any crawl loses track of its leases."""

from __future__ import annotations

import inspect

from scrapy.core.downloader import Downloader, Slot
from scrapy.core.engine import ExecutionEngine, _Slot


def test_the_engine_removes_every_finished_request_from_its_slot() -> None:
    assert callable(getattr(_Slot, "remove_request", None))
    source = inspect.getsource(ExecutionEngine)
    # a scheduled request, after its output was handled (or it was turned into another)
    assert "_handle_downloader_output" in source and "self._slot.remove_request(request)" in source
    assert "partial(self._remove_request, request=request)" in source


def test_download_slots_are_where_autothrottle_finds_them() -> None:
    assert callable(getattr(Downloader, "get_slot_key", None))
    assert "self.slots" in inspect.getsource(Downloader.__init__)
    slot = Slot(concurrency=1, delay=0.5, jitter=0.0)
    assert (slot.delay, slot.jitter) == (0.5, 0.0)
    assert "self.jitter" in inspect.getsource(Slot.download_delay)


def test_a_slot_tells_its_load_where_the_slot_watch_reads_it() -> None:
    slot = Slot(concurrency=2, delay=0.0, jitter=0.0)
    assert slot.concurrency == 2 and isinstance(slot.active, set)
    assert "slot.active.add(request)" in inspect.getsource(Downloader)  # active: queued in the slot or transferring
    assert "slot.lastseen = now" in inspect.getsource(Downloader) and "now = monotonic()" in inspect.getsource(
        Downloader
    )
    assert Downloader.DOWNLOAD_SLOT == "download_slot"
    # a request is in its slot, named in its meta, when request_reached_downloader is sent
    enqueue = inspect.getsource(Downloader._enqueue_request)
    assert enqueue.index("request.meta[self.DOWNLOAD_SLOT] = key") < enqueue.index("slot.active.add(request)") \
        < enqueue.index("signals.request_reached_downloader")
    # lastseen moves only as a queued request (one in slot.active) starts its download
    process = inspect.getsource(Downloader._process_queue)
    assert process.index("while slot.queue") < process.index("slot.lastseen = now")


def test_scrapy_internals_are_touched_only_in_scrapy_private() -> None:
    """Private attributes of Scrapy's engine, downloader, slots, middleware
    managers and robots parsers are read or written in one module only, so
    that a Scrapy upgrade that moves them breaks one pinned place."""
    import re
    from pathlib import Path

    import crawlproject

    internals = re.compile(
        r"\._stats\b|_parserimpl|\.rp\b|downloader\.active|middleware\.middlewares"
        r"|\bslots?\.(delay|jitter|lastseen|queue|active|transferring|latercall)\b|\._slot\b|\.slots\b"
        r"|_robotstxt_useragent|_default_useragent|\bengine\._\w+|\bcrawler\._\w+|\bdownloader\._\w+"
        r"|\bscraper\.|\.spidermw\b|\.downloadermw\b|\b_Slot\b"
    )
    package = Path(crawlproject.__file__).parent
    found = []
    for path in sorted(package.rglob("*.py")):
        if path.name == "scrapy_private.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if internals.search(line.split("#", 1)[0]):
                found.append(f"{path.relative_to(package)}:{number}: {line.strip()}")
    assert found == []
