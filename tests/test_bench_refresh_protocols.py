"""bench.refresh_protocols as BENCHMARKS gives it, on a small web whose
answers change (a PEP history of six weeks): both protocols, every policy,
seeded workloads, the targets read off the scan."""

from __future__ import annotations

import json
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest

from bench import refresh_protocols
from crawlproject.replay import pep_history
from tests.test_git_history_web import START, _commit
from tests.test_pep_history_web import _pep


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("peps")
    repo = root / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)  # noqa: S603, S607
    titles = ["Assignment expressions", "Data classes", "Pattern matching", "Type hints", "Walrus operator",
              "Union operator", "Structural typing", "Exception groups"]
    for number, title in enumerate(titles, 600):
        _pep(repo, number, title, "Draft")
    _commit(repo, START - timedelta(days=2), "drafts")
    for week, status in enumerate(("Accepted", "Final", "Rejected", "Withdrawn", "Final"), 1):
        for number in range(600 + week % 3, 608, 2):
            _pep(repo, number, titles[number - 600], status)
        _commit(repo, START + timedelta(days=7 * week - 2), status)
    pep_history.build(repo, root / "web", START, 7, pep_history.HOST, pep_history.pep_site(repo), "PEPs")
    return root / "web"


def test_both_protocols_side_by_side_on_seeded_workloads(web: Path, tmp_path: Path) -> None:
    status = refresh_protocols.main(["--corpus", str(web), "--weeks", "6", "--warmup", "2", "--budgets", "20,50",
                                     "--workload-seeds", "2", "--queries", "20", "--jobs", "1", "--out", str(tmp_path),
                                     "--no-write"])
    assert status == 0
    records = json.loads((tmp_path / "results.json").read_text())
    cells = [r for r in records if "policy" in r]
    assert {r["protocol"] for r in cells if r["policy"] == "user-centric"} == {"paper", "online"}
    assert {r["seed"] for r in cells} == {1, 2} and {r["kind"] for r in cells} == {"generated", "changing"}
    assert len([r for r in records if "forecastability" in r]) == 4
    none = [r["mean_q"] for r in cells if r["budget"] == 0 and r["kind"] == "changing"]
    assert all(q < 1 for q in none)  # the queries aim at what changed: not refreshing loses
    assert (tmp_path / "quality-by-budget-both-protocols.png").stat().st_size > 0


def test_a_target_is_read_off_the_scan_between_its_budgets() -> None:
    assert refresh_protocols.budget_for({0: 0.98, 10: 0.985, 20: 0.995}, 0.99) == pytest.approx(15.0)
    assert refresh_protocols.budget_for({0: 0.98, 10: 0.985}, 0.99) == float("inf")
