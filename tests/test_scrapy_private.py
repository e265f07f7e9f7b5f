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
