"""The symbiosis benchmark runs as BENCHMARKS gives it, and its evaluation
cannot leak: a night's queries are never measured on, no query is drawn twice,
a query's source page never counts for it."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from typing import TYPE_CHECKING

from bench.symbiosis import CRAWLED_ARMS, PRIMARY, Query, sample_days
from tests.conftest import CORPUS, ROOT

if TYPE_CHECKING:
    from pathlib import Path


def test_no_query_is_drawn_twice_and_a_night_s_queries_are_never_measured_on() -> None:
    pool = {category: [Query(f"{category} {n}", category, frozenset({f"http://x/{category}{n}"}))
                       for n in range(30)] for category in ("a", "b")}
    days = sample_days(pool, 5, 4, 2, random.Random(3))
    drawn = [query for day in days for query in day.representative + day.held_back]
    assert len(drawn) == len(set(drawn)) == 5 * 6
    assert all({q.category for q in day.representative} == {"a", "b"} for day in days)  # half per category
    assert not {q for day in days for q in day.representative} & {q for day in days for q in day.held_back}


def test_the_benchmark_runs_as_written_with_every_arm_on_the_same_queries(tmp_path: Path) -> None:
    out = tmp_path / "run"
    finished = subprocess.run(
        [sys.executable, "-m", "bench.symbiosis", "--corpus", str(CORPUS), "--communities", "2", "--nights", "1",
         "--max-index", "30", "--representative", "2", "--held-back", "4", "--repeats", "1", "--no-write",
         "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert "**Primary metric, named before the run:** P@10" in finished.stdout
    assert "Holm over the 8 tests" in finished.stdout
    results = json.loads((out / "results.json").read_text())
    assert results["primary"] == list(PRIMARY)
    for community in results["communities"]:
        assert not set(community["categories"]) & set(community["other"])
        rows = community["rows"]
        assert set(rows) == {"initial", "size-matched", *CRAWLED_ARMS}
        assert all(len(arm) == 1 for arm in rows.values())  # one night, every arm measured after it
        loop = rows["loop"][0]
        assert 0 < loop["size"] <= 30  # MAX_INDEX holds
        assert rows["size-matched"][0]["size"] == loop["size"]  # the control matches the loop's size
        assert all(0 <= arm[0]["p_at_10"] <= 1 and 0 <= arm[0]["self_retrieval"] <= 1 for arm in rows.values())
    assert (out / "p_at_10.png").stat().st_size > 0
