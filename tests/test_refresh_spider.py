"""Refresh crawling for real: a repository crawled at week 0 of
the PHP manual's history, refreshed a year later through the replay with
conditional GETs — what it finds is checked against versions.tsv."""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
from collections import defaultdict
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from crawlproject.replay.archive import parse_time
from crawlproject.replay.process import ReplayProcess
from tests.conftest import run_crawl
from tests.test_refresh_simulation import SITE, sidebar_web
from tests.test_refresh_simulation import START as SIDEBAR_START
from tests.test_replay_time import EVOLVING, START, WARC

LATER = "2021-10-18T00:00:00Z"


@pytest.fixture(scope="module")
def replay() -> Iterator[ReplayProcess]:
    with ReplayProcess(str(WARC), as_of=START) as process:
        yield process


@pytest.fixture(scope="module")
def truth() -> dict[str, list[dict[str, str]]]:
    by_url: dict[str, list[dict[str, str]]] = defaultdict(list)
    with (EVOLVING / "versions.tsv").open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            by_url[row["url"]].append(row)
    return by_url


def live_version(rows: list[dict[str, str]], at: str) -> dict[str, str] | None:
    """The version live at *at*, None when the page is gone (or not yet there)."""
    moment = parse_time(at)
    live = [row for row in rows if parse_time(row["live_from"]) <= moment]
    if not live or (live[-1]["live_until"] and parse_time(live[-1]["live_until"]) <= moment):
        return None
    return live[-1]


@pytest.fixture(scope="module")
def repository(replay: ReplayProcess, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("repository") / "crawl"
    replay.clock(START)
    crawl = run_crawl("breadthfirst", folder, ["http://www.php.net/manual/en/index.php"], replay.proxy_url,
                      settings={"FOCUS_OK_PAGECOUNT": 120})
    assert crawl.returncode == 0, crawl.log[-2000:]
    return folder


def refresh(replay: ReplayProcess, repository: Path, folder: Path, *arguments: str) -> Any:
    extra = ["-a", f"repository={repository}", "-a", f"crawled_at={START}"]
    for argument in arguments:
        extra += ["-a", argument]
    return run_crawl("refresh", folder, "", replay.proxy_url, extra_args=extra)


def test_a_year_later_the_refresh_finds_what_changed(replay: ReplayProcess, repository: Path, truth: Any,
                                                     tmp_path: Path) -> None:
    replay.clock(LATER)
    run = refresh(replay, repository, tmp_path / "run1", "policy=uniform", "budget=500", f"now={LATER}")
    assert run.returncode == 0, run.log[-3000:]
    stored = [json.loads(line) for line in (repository / "pages.jsonl").read_text().splitlines()]
    changes = [json.loads(line) for line in (repository / "refresh" / "changes.jsonl").read_text().splitlines()]
    assert {c["url"] for c in changes} == {page["url"] for page in stored}  # the budget covers every page
    state = json.loads((repository / "refresh" / "state.json").read_text())["pages"]
    statuses = {row["canonical_url"]: row["status"] for row in run.history}
    outcomes = {"changed": 0, "unchanged": 0, "deleted": 0}
    for change in changes:
        rows = truth[change["url"]]
        before, after = live_version(rows, START), live_version(rows, LATER)
        assert before is not None
        if after is None:
            expected = "deleted"
        else:
            expected = "unchanged" if after["body_sha1"] == before["body_sha1"] else "changed"
        assert change["outcome"] == expected, change
        outcomes[expected] += 1
        page = state[change["url"]]
        if expected == "changed":
            body = (repository / page["file"]).read_bytes()
            assert hashlib.sha1(body).hexdigest() == after["body_sha1"]  # noqa: S324 (the new version, kept)
            assert page["file"].startswith("refresh/versions/") and page["version"] == 1
            assert 0 <= change["changed_fraction"] <= 1  # 0: only the markup changed
        if expected == "unchanged":
            assert statuses[change["url"]] == 304  # If-Modified-Since from the crawl's Last-Modified
    assert outcomes["changed"] >= 10 and outcomes["unchanged"] >= 10, outcomes
    assert any(c["changed_fraction"] > 0.1 and c["terms_added"] for c in changes if c["outcome"] == "changed")
    for page in stored:  # the crawl's own files are never overwritten
        rows = truth[page["url"]]
        assert (
            hashlib.sha1((repository / page["file"]).read_bytes()).hexdigest() == live_version(rows, START)["body_sha1"]
        )  # noqa: S324
    assert "Refreshed " in run.log and "changed" in run.log

    # A week later, the state carries on: validators are ETags now, nothing changed in between.
    later = "2021-10-25T00:00:00Z"
    run = refresh(replay, repository, tmp_path / "run2", "policy=staleness", "budget=30", f"now={later}")
    assert run.returncode == 0, run.log[-3000:]
    second = [json.loads(line) for line in (repository / "refresh" / "changes.jsonl").read_text().splitlines()][
        len(changes) :
    ]
    assert len(second) == 30 and all(c["outcome"] in ("unchanged", "deleted") for c in second), second
    state = json.loads((repository / "refresh" / "state.json").read_text())["pages"]
    assert all(len(state[c["url"]]["intervals"]) == 2 for c in second if c["outcome"] == "unchanged")
    assert not any(c["url"] in {d["url"] for d in changes if d["outcome"] == "deleted"} for c in second)


def test_user_centric_refresh_measures_its_gains(replay: ReplayProcess, repository: Path, tmp_path: Path) -> None:
    workload = tmp_path / "workload.tsv"
    workload.write_text("array\t50\nstring\t20\nfunction\t10\nreturn values\t5\n")
    replay.clock(LATER)
    copy = tmp_path / "copy"
    import shutil

    shutil.copytree(repository, copy, ignore=shutil.ignore_patterns("refresh"))
    extra = [
        "-a",
        f"repository={copy}",
        "-a",
        f"crawled_at={START}",
        "-a",
        f"workload={workload}",
        "-a",
        f"now={LATER}",
    ]
    run = run_crawl("refresh", tmp_path / "run", "", replay.proxy_url, extra_args=extra,
                    settings={"FOCUS_REFRESH_POLICY": "user-centric", "FOCUS_REFRESH_BUDGET": 60,
                              "FOCUS_INDEX_DIR": str(tmp_path / "index")})
    assert run.returncode == 0, run.log[-3000:]
    assert "(user-centric policy)" in run.log  # chosen by the setting
    from crawlproject.search.collection import IndexedCollection
    from crawlproject.search.engine import IndexHome

    changed = [json.loads(line) for line in (copy / "refresh" / "changes.jsonl").read_text().splitlines()]
    indexed = set(IndexedCollection(IndexHome(tmp_path / "index").current()).keys())
    assert {c["url"] for c in changed if c["outcome"] == "changed"} <= indexed  # the new versions are searchable
    state = json.loads((copy / "refresh" / "state.json").read_text())["pages"]
    refreshed = [page for page in state.values() if page["intervals"]]
    assert len(refreshed) == 60
    assert any(gain > 0 for page in refreshed for gain in page["gains"])  # ΔQ measured for changed pages


@pytest.mark.parametrize(("arguments", "message"), [
    ([], "refresh needs -a repository=CRAWL_DIR"),
    (["repository={missing}"], "is not a crawl's page repository"),
    (["repository={repository}", "policy=user-centric"], "pass -a workload=FILE"),
    (["repository={repository}", "policy=fresh"], "policy='fresh' names no refresh policy"),
    (["repository={repository}", "policy=crawlproject.refresh.policies.freshness"], "is not a RefreshPolicy class"),
    (["repository={repository}", "budget=0"], "budget must be at least 1"),
])
def test_bad_refresh_input_gets_one_line(replay: ReplayProcess, repository: Path, tmp_path: Path,
                                         arguments: list[str], message: str) -> None:
    extra = []
    for argument in arguments:
        extra += ["-a", argument.format(missing=tmp_path / "nowhere", repository=repository)]
    run = run_crawl("refresh", tmp_path / "run", "", replay.proxy_url, extra_args=extra)
    assert run.returncode != 0 and message in run.log, run.log[-2000:]
    assert "Traceback" not in run.log


def test_the_refresh_compares_the_main_text_a_sidebars_churn_is_no_change(tmp_path: Path) -> None:
    # The spider compared (and measured ΔQ on) each page's whole text, so a "recent posts"
    # sidebar that moved made every post look changed; it indexes the main text, as the simulation does.
    warc = sidebar_web(tmp_path / "sidebar.warc.gz")
    start, later = (SIDEBAR_START + timedelta(weeks=week) for week in (0, 3))
    with ReplayProcess(str(warc), as_of=start.strftime("%Y-%m-%dT%H:%M:%SZ")) as sidebar:
        crawl = run_crawl("breadthfirst", tmp_path / "crawl", [f"{SITE}timetable.html"], sidebar.proxy_url)
        assert crawl.returncode == 0, crawl.log[-2000:]
        sidebar.clock(later.strftime("%Y-%m-%dT%H:%M:%SZ"))
        for indexed in ("main", "whole"):  # each refreshes its own copy of the week-0 repository
            repository = shutil.copytree(tmp_path / "crawl", tmp_path / f"crawl-{indexed}")
            run = run_crawl(
                "refresh",
                tmp_path / indexed,
                "",
                sidebar.proxy_url,
                extra_args=[
                    "-a",
                    f"repository={repository}",
                    "-a",
                    "policy=uniform",
                    "-a",
                    "budget=1",
                    "-a",
                    f"indexed={indexed}",
                    "-a",
                    f"now={later.strftime('%Y-%m-%dT%H:%M:%SZ')}",
                    "-a",
                    f"crawled_at={start.strftime('%Y-%m-%dT%H:%M:%SZ')}",
                ],
            )
            assert run.returncode == 0, run.log[-2000:]
    main, whole = (json.loads((tmp_path / f"crawl-{indexed}" / "refresh" / "changes.jsonl").read_text())
                   for indexed in ("main", "whole"))
    assert main["outcome"] == whole["outcome"] == "changed"  # a new body, kept as a version
    assert main["changed_fraction"] == 0 and not main["terms_added"] and not main["terms_removed"], main
    assert whole["changed_fraction"] > 0.3, whole  # the template in: the sidebar's churn a change


def test_a_sitemaps_lastmod_spends_the_budget_on_what_changed(replay: ReplayProcess, repository: Path, truth: Any,
                                                              tmp_path: Path) -> None:
    """The replay of a dated web answers /sitemap.xml with every live page and
    when its version went live; a refresh given the sitemap fetches no page
    that has not changed since its copy and spends its budget on those that did."""
    copy = tmp_path / "repository"
    shutil.copytree(repository, copy, ignore=shutil.ignore_patterns("refresh", ".lock*"))
    replay.clock(LATER)
    run = refresh(replay, copy, tmp_path / "run", "policy=uniform", "budget=10", f"now={LATER}",
                  "sitemaps=http://www.php.net/sitemap.xml")
    assert run.returncode == 0, run.log[-3000:]
    assert any(r["url"] == "http://www.php.net/sitemap.xml" for r in run.history) or "Sitemaps read" in run.log
    changes = [json.loads(line) for line in (copy / "refresh" / "changes.jsonl").read_text().splitlines()]
    skipped = {c["url"] for c in changes if c["outcome"] == "unchanged (sitemap)"}
    fetched = [c for c in changes if c["outcome"] != "unchanged (sitemap)"]
    same = set()
    for change in changes:
        before, after = live_version(truth[change["url"]], START), live_version(truth[change["url"]], LATER)
        if before is not None and after is not None and after["version_index"] == before["version_index"]:
            same.add(change["url"])
    assert skipped and skipped == same  # every page the sitemap shows unchanged, and no other, left unfetched
    assert len(fetched) == 10 and all(c["outcome"] == "changed" for c in fetched), fetched
    assert "unchanged by the sitemaps" in run.log

    # A sitemap that cannot be read: one line, and the policy chooses alone.
    again = refresh(replay, copy, tmp_path / "run2", "policy=uniform", "budget=5", "now=2021-10-25T00:00:00Z",
                    "sitemaps=http://www.php.net/no-such-sitemap.xml")
    assert again.returncode == 0, again.log[-3000:]
    assert "could not be read" in again.log and "Traceback" not in again.log
    after = [json.loads(line) for line in (copy / "refresh" / "changes.jsonl").read_text().splitlines()][len(changes):]
    assert len(after) == 5 and all(c["outcome"] != "unchanged (sitemap)" for c in after)
