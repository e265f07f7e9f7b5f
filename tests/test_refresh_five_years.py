"""The refresh spider against the simulation: the PHP manual's
five years (phpdoc-5y) replayed as of a week; at sample weeks the
simulation's state is handed to ``scrapy crawl refresh``, which must fetch
exactly the pages the simulation's policy chose that week, record a 304 for
each whose copy was still the live version, and find the others changed or
gone as the corpus says."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from crawlproject.refresh.estimate import ChangeHistory
from crawlproject.refresh.gain import GainMeter
from crawlproject.refresh.policies import PageState, policy_named
from crawlproject.refresh.quality import QualityMeter, VersionIndex
from crawlproject.refresh.simulate import (
    WEEK,
    RefreshSimulation,
    Snapshot,
    load_evolving_web,
)
from crawlproject.refresh.state import DAY, RefreshState
from crawlproject.refresh.web_workloads import window_workload
from crawlproject.refresh.workload import write_workload
from crawlproject.replay.archive import format_time, parse_time
from crawlproject.replay.process import ReplayProcess
from crawlproject.web.text import TermAnalyzer
from crawlproject.web.urls import canonicalize
from tests.conftest import ROOT, run_crawl

FIVE_YEARS = ROOT.parent / "shared" / "corpora" / "phpdoc-5y"
WARC = FIVE_YEARS / "evolving.warc.gz"
HOME = "http://www.php.net/manual/en/index.php"
SAMPLE_WEEKS = (9, 23)
BUDGET = 25

Record = tuple[bytes, str | None, str | None]  #: body, ETag, Last-Modified


@pytest.fixture(scope="module")
def workload_file(simulation: RefreshSimulation, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The workload the simulation's meters were built from, for the spider's ``-a workload``."""
    path = tmp_path_factory.mktemp("workload") / "workload.tsv"
    write_workload(window_workload(simulation.web, 52, simulation.index.analyzer, size=200, seed=1), path)
    return path


@pytest.fixture(scope="module")
def simulation() -> RefreshSimulation:
    if not WARC.is_file():
        pytest.fail(f"the phpdoc-5y corpus is missing at {FIVE_YEARS}; put ../shared beside the repo")
    # The whole text, on both sides (the spider's -a indexed=whole): 12,000 versions' main text
    # would cost make test a minute, and what is compared here is the choice, not the text.
    web = load_evolving_web(WARC, cache_dir=ROOT / ".cache", text="whole")
    analyzer = TermAnalyzer()
    index = VersionIndex(web.texts, analyzer)
    workload = window_workload(web, 52, analyzer, size=200, seed=1)
    return RefreshSimulation(web, index, QualityMeter(index, workload), GainMeter(index, workload), 0.1,
                             web.reachable(web.start, [HOME]))


@pytest.fixture(scope="module")
def records() -> dict[tuple[str, float], Record]:
    """Every version's response as the replay serves it, by (URL, live from)."""
    found: dict[tuple[str, float], Record] = {}
    with WARC.open("rb") as f:
        for record in ArchiveIterator(f):
            if record.rec_type == "response" and record.http_headers.get_statuscode() == "200":
                key = (canonicalize(record.rec_headers.get_header("WARC-Target-URI")),
                       parse_time(record.rec_headers.get_header("WARC-Date")))
                found[key] = (record.content_stream().read(), record.http_headers.get_header("ETag"),
                              record.http_headers.get_header("Last-Modified"))
    return found


@pytest.fixture(scope="module")
def replay(simulation: RefreshSimulation) -> Iterator[ReplayProcess]:
    with ReplayProcess(str(WARC), as_of=format_time(simulation.web.start)) as process:
        yield process


def hand_over(simulation: RefreshSimulation, snapshot: Snapshot, week: int, folder: Path,
              records: dict[tuple[str, float], Record]) -> None:
    """Write the simulation's repository at the start of *week* as a crawl's
    folder with its refresh state (the simulation counts weeks from the
    start; the spider days since the epoch)."""
    web, start = simulation.web, simulation.web.start
    live_from = {version: when for versions in web.timeline for when, version in versions if version >= 0}
    (folder / "pages").mkdir(parents=True)
    listing, validators = [], {}
    for page in simulation.held.tolist():
        url, version = web.urls[page], int(snapshot.repository[page])
        body, etag, modified = (
            records[(url, live_from[version])] if version != simulation.index.absent else (b"", None, None)
        )
        name = f"pages/{hashlib.md5(url.encode()).hexdigest()}.html"  # noqa: S324 (a file name)
        (folder / name).write_bytes(body)
        listing.append(
            json.dumps({"url": url, "file": name, "fetched_at": format_time(start), "last_modified": modified})
        )
        validators[url] = (etag, modified)
    (folder / "pages.jsonl").write_text("\n".join(listing) + "\n")
    state = RefreshState(folder)
    in_days = WEEK / DAY
    for position, page in enumerate(simulation.held.tolist()):
        own, url = snapshot.states[position], web.urls[page]
        refreshed = state.pages[url]
        refreshed.etag, refreshed.last_modified = validators[url]
        refreshed.deleted = position not in snapshot.candidates
        refreshed.state = PageState(
            (start + own.last_refresh * WEEK) / DAY,
            ChangeHistory([t * in_days for t in own.history.intervals], list(own.history.changed)),
            own.updates,
            own.big_updates,
            [g / in_days for g in own.gains],
            own.exposure,
        )
    state.runs = [(start + (week - 1) * WEEK) / DAY] if week > 1 else []
    state.save()


# Two policies: the spider's path is one whatever the policy (uniform's choices are the simulation
# tests'); each policy here costs two crawls of the five-year web.
@pytest.mark.parametrize("policy", ["staleness", "user-centric"])
def test_the_spider_fetches_what_the_simulation_chose(policy: str, simulation: RefreshSimulation, replay: ReplayProcess,
                                                      records: dict[tuple[str, float], Record], workload_file: Path,
                                                      tmp_path: Path) -> None:
    web = simulation.web
    outcome = simulation.run(policy_named(policy), BUDGET, max(SAMPLE_WEEKS), snapshots=SAMPLE_WEEKS)
    statuses_seen: set[int] = set()
    for week in SAMPLE_WEEKS:
        snapshot = outcome.snapshots[week]
        folder = tmp_path / f"repository-{week}"
        hand_over(simulation, snapshot, week, folder, records)
        now = format_time(web.start + week * WEEK)
        replay.clock(now)
        extra = ["-a", f"repository={folder}", "-a", f"policy={policy}", "-a", f"budget={BUDGET}", "-a", f"now={now}",
                 "-a", f"workload={workload_file}", "-a", "indexed=whole"]
        run = run_crawl("refresh", tmp_path / f"run-{week}", "", replay.proxy_url, extra_args=extra)
        assert run.returncode == 0, run.log[-3000:]
        chosen = [int(simulation.held[position]) for position in outcome.chosen[week - 1]]
        fetched = {row["canonical_url"]: row["status"] for row in run.history}
        assert set(fetched) == {web.urls[page] for page in chosen}, (policy, week)  # exactly the simulation's choice
        live = web.live(web.start + week * WEEK, simulation.index.absent)
        changes = {
            line["url"]: line
            for line in map(json.loads, (folder / "refresh" / "changes.jsonl").read_text().splitlines())
        }
        for page in chosen:
            url, old, new = web.urls[page], int(snapshot.repository[page]), int(live[page])
            if new == simulation.index.absent:
                expected, status = "deleted", 404
            elif new == old:
                expected, status = "unchanged", 304  # If-None-Match with the stored copy's ETag
            else:
                expected, status = "changed", 200
            assert (changes[url]["outcome"], fetched[url]) == (expected, status), (policy, week, url)
            statuses_seen.add(status)
    assert {304, 200} <= statuses_seen, statuses_seen  # both kinds met, so both were checked
