"""bench.long_crawl's own bookkeeping: a re-run measures a new crawl, and a
crawl whose first window has no CPU samples is reported, not a crash."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

from bench import long_crawl

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def test_a_finished_crawl_is_made_anew_and_a_stopped_one_resumed(tmp_path: Path) -> None:
    finished, stopped = tmp_path / "bestfirst", tmp_path / "linklearner"
    for folder in (finished, stopped):
        (folder / "crawl").mkdir(parents=True)
        (folder / "job").mkdir()
        (folder / "crawl" / "history.jsonl").write_text('{"order": 1}\n')
    (finished / "crawl" / "summary.json").write_text("{}")
    # A finished crawl resumed from its JOBDIR appended a second crawl to the
    # first one's history (the last section's run failed on it).
    assert long_crawl.prepare_folder(finished) is False
    assert not (finished / "crawl").exists() and finished.is_dir()
    assert long_crawl.prepare_folder(stopped) is True
    assert (stopped / "crawl" / "history.jsonl").exists()


def test_a_window_without_cpu_samples_gives_no_ratio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(long_crawl, "WINDOW", 2)
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    (crawl / "history.jsonl").write_text("".join(
        json.dumps({"fetched_at": f"2026-11-27T10:00:0{i}+00:00"}) + "\n" for i in range(4)))
    (crawl / "summary.json").write_text(json.dumps({"pages_fetched": 4, "finish_reason": "closespider_itemcount"}))
    (tmp_path / "crawl.log").write_text("")
    # every sample taken after the last page: no CPU time between the first window's ends
    samples = [(1.0, 2**20, 4, 0.5), (3.0, 2**20, 4, 0.9)]
    result = long_crawl.analyse("bestfirst", tmp_path, samples)
    assert result["pages"] == 4 and len(result["windows"]) == 2
    assert math.isnan(result["cpu_ratio"])
