"""The refresh simulation on a small dated web made by hand: the
week-0 repository is what a crawl from the root reaches, a workload built
from a past window knows nothing of later weeks, Q is 1 when every page is
refreshed every week, a budget search may stop a run early, and the
user-centric runs index what they refresh into a real search collection."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from io import BytesIO
from pathlib import Path

import numpy as np
import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from crawlproject.refresh.gain import GainMeter
from crawlproject.refresh.policies import policy_named
from crawlproject.refresh.quality import QualityMeter, VersionIndex
from crawlproject.refresh.simulate import RefreshSimulation, load_evolving_web
from crawlproject.refresh.web_workloads import changing_workload, window_workload
from crawlproject.refresh.workload import Query
from crawlproject.search.collection import IndexedCollection
from crawlproject.web.text import TermAnalyzer

START = datetime(2004, 6, 7, tzinfo=UTC)
SITE = "http://manual.test/"


def page(name: str, text: str, links: tuple[str, ...] = ()) -> bytes:
    anchors = "".join(f'<a href="{SITE}{target}.html">{target}</a> ' for target in links)
    head = f"<html><head><title>{name} manual</title></head>"
    return f"{head}<body><h1>{name}</h1><p>{text}</p>{anchors}</body></html>".encode()


@pytest.fixture(scope="module")
def warc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Eight pages over ten weeks: a root, two books, four functions (one
    changing weekly, one deleted at week 3), an orphan, and a page created at
    week 6 whose name ("zebra") is everywhere after it."""
    versions: list[tuple[int, str, int, bytes]] = [  # (week, page, status, body)
        (0, "home", 200, page("home", "the manual", ("strings", "arrays"))),
        (0, "strings", 200, page("strings", "string functions", ("strlen", "substr"))),
        (0, "arrays", 200, page("arrays", "array functions", ("sort", "count"))),
        (0, "strlen", 200, page("strlen", "length of a string strlen")),
        (0, "substr", 200, page("substr", "part of a string substr")),
        (0, "sort", 200, page("sort", "sort an array in place")),
        (0, "count", 200, page("count", "count the elements of an array")),
        (0, "orphan", 200, page("orphan", "nobody links here")),
        (3, "substr", 404, b"gone"),
        (6, "zebra", 200, page("zebra", "zebra zebra zebra stripes")),
        (6, "home", 200, page("home", "the manual zebra", ("strings", "arrays", "zebra"))),
    ]
    versions += [(week, "sort", 200, page("sort", f"sort an array in place version {week} " + "stable " * week))
                 for week in range(1, 10)]
    path = tmp_path_factory.mktemp("dated") / "dated.warc.gz"
    with path.open("wb") as f:
        writer = WARCWriter(f, gzip=True)
        for week, name, status, body in sorted(versions, key=lambda version: version[0]):
            when = (START + timedelta(weeks=week)).strftime("%Y-%m-%dT%H:%M:%SZ")
            headers = StatusAndHeaders(
                f"{status} X", [("Content-Type", "text/html"), ("Content-Length", str(len(body)))], protocol="HTTP/1.0"
            )
            writer.write_record(writer.create_warc_record(f"{SITE}{name}.html", "response", payload=BytesIO(body),
                                                          length=len(body), http_headers=headers,
                                                          warc_headers_dict={"WARC-Date": when}))
    return path


@pytest.fixture(scope="module")
def simulation(warc: Path, tmp_path_factory: pytest.TempPathFactory) -> RefreshSimulation:
    web = load_evolving_web(
        warc, cache_dir=tmp_path_factory.mktemp("cache"), text="whole"
    )  # a toy web: its pages are all "template"
    analyzer = TermAnalyzer()
    index = VersionIndex(web.texts, analyzer)
    workload = [
        Query("sort", 10.0),
        Query("string", 5.0),
        Query("array", 3.0),
        Query("zebra", 8.0),
        Query("count array", 2.0),
    ]
    held = web.reachable(web.start, [f"{SITE}home.html"])
    return RefreshSimulation(web, index, QualityMeter(index, workload), GainMeter(index, workload), 0.1, held)


def test_the_repository_is_what_a_week_0_crawl_reaches(simulation: RefreshSimulation) -> None:
    web = simulation.web
    held = {web.urls[page].removeprefix(SITE) for page in simulation.held}
    assert held == {f"{name}.html" for name in ("home", "strings", "arrays", "strlen", "substr", "sort", "count")}
    assert web.names[web.urls.index(f"{SITE}strlen.html")] == "strlen"  # the page's h1
    with pytest.raises(ValueError, match="not in the corpus"):
        web.reachable(web.start, ["http://elsewhere.test/"])


def test_a_window_workload_knows_nothing_of_later_weeks(simulation: RefreshSimulation) -> None:
    early = {query.text for query in window_workload(simulation.web, 4, TermAnalyzer(), size=20, head=5)}
    late = {query.text for query in window_workload(simulation.web, 8, TermAnalyzer(), size=20, head=5)}
    assert "zebra" not in early and "stripes" not in early  # created at week 6
    assert "zebra" in late


def test_refreshing_every_page_every_week_keeps_q_at_one(simulation: RefreshSimulation) -> None:
    everything = simulation.run(policy_named("uniform"), len(simulation.held), 9)
    assert [week.quality for week in everything.weeks] == pytest.approx([1.0] * 9)
    assert all(week.stale == 0 for week in everything.weeks)
    assert everything.weeks[5].quality_web < 1.0  # zebra, created at week 6, is on the web only
    assert sum(week.deleted for week in everything.weeks) == 1  # substr, found gone at week 3
    nothing = simulation.run(policy_named("uniform"), 0, 9)
    assert nothing.weeks[0].stale > 0  # sort changed at week 1 (its rank for "sort" did not: Q stays 1)
    assert nothing.weeks[1].quality == pytest.approx(1.0)
    assert nothing.weeks[2].quality < 1.0  # substr, gone at week 3, still answers "string" from the repository
    assert nothing.chosen == [[]] * 9
    assert nothing.mean_stale() > 0 and nothing.lowest_quality(3) < nothing.mean_quality(1, 2) == pytest.approx(1.0)
    stopped = simulation.run(policy_named("uniform"), 0, 9, stop_below=(2, 0.9999))
    assert stopped.stopped == 3 and len(stopped.weeks) == 3  # the first week below
    later = simulation.run(policy_named("uniform"), 0, 9, stop_below=(5, 0.9999))
    assert later.stopped == 5  # weeks before the reported ones do not stop it


def test_the_paper_s_protocol_fits_every_page_on_the_trace_and_schedules_from_it(simulation: RefreshSimulation) -> None:
    fitted = simulation.fit_on_trace(9, 0.1)
    name = {
        simulation.web.urls[page].removeprefix(SITE): state for page, state in zip(simulation.held, fitted, strict=True)
    }
    assert len(name["sort.html"].history) == 9 and all(
        gain > 0 for gain in name["sort.html"].gains
    )  # every update seen
    assert name["strlen.html"].updates == 0 and not any(name["strlen.html"].gains)
    assert len(name["substr.html"].history) == 3  # found gone at week 3: no later observation
    assert all(state.fitted and state.last_refresh == 0 for state in fitted)
    paper = simulation.run(policy_named("user-centric"), 1, 9, fitted=fitted)
    online = simulation.run(policy_named("user-centric"), 1, 9)
    chosen = {simulation.web.urls[simulation.held[i]].removeprefix(SITE) for week in paper.chosen for i in week}
    assert chosen == {"home.html", "sort.html"}  # only the pages whose refreshes gained, from week 1
    assert {simulation.web.urls[simulation.held[i]].removeprefix(SITE) for i in online.chosen[0]} == {"arrays.html"}
    assert paper.mean_quality() > online.mean_quality()  # knowing the trace helps on this web
    assert [state.gains for state in paper.states] == [state.gains for state in fitted]  # a fitted run learns nothing
    assert -1 <= simulation.forecastability(fitted, 9) <= 1


def test_user_centric_runs_index_their_refreshes_into_a_collection(
    simulation: RefreshSimulation, tmp_path: Path
) -> None:
    collection = IndexedCollection(tmp_path / "collection", create=True)
    outcome = simulation.run(policy_named("user-centric"), 2, 9, collection)
    assert outcome.indexing_seconds > 0 and outcome.measuring_seconds > 0 and outcome.refits > 0
    sort_url = f"{SITE}sort.html"
    stored = collection.page(sort_url)
    assert stored is not None and stored["title"] == "sort"
    repository = outcome.final
    assert repository is not None
    sort_page = simulation.web.urls.index(sort_url)
    assert stored["text"] == simulation.web.texts[int(repository[sort_page])]  # the version it last fetched
    assert int(repository[sort_page]) != simulation.web.timeline[sort_page][0][1]  # a refreshed one
    assert collection.page(f"{SITE}orphan.html") is None  # never crawled, never indexed
    assert sorted(np.unique([page for week in outcome.chosen for page in week]).tolist()) == list(
        range(len(simulation.held))
    )
    collection.close()


def sidebar_web(path: Path, weeks: int = 4) -> Path:
    """A dated WARC of one article whose only change, week by week, is its
    "recent posts" sidebar (~98.5 % of the news webs' changes were such)."""
    article = " ".join(["The harbour council approved the new ferry timetable after a long debate."] * 6)

    def post(week: int) -> bytes:
        recent = "".join(
            f"<li><a href='{SITE}post{n}.html'>Ferry news number {n}</a></li>" for n in range(week, week + 5)
        )
        return (f"<html><head><title>Ferry timetable</title></head><body><aside><h2>Recent posts</h2><ul>{recent}"
                f"</ul></aside><article><h1>Ferry timetable</h1><p>{article}</p></article>"
                "<footer>Harbour news, every week</footer></body></html>").encode()

    with path.open("wb") as f:
        writer = WARCWriter(f, gzip=True)
        for week in range(weeks):
            body = post(week)
            when = (START + timedelta(weeks=week)).strftime("%Y-%m-%dT%H:%M:%SZ")
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(body)))],
                                       protocol="HTTP/1.0")
            writer.write_record(writer.create_warc_record(f"{SITE}timetable.html", "response", payload=BytesIO(body),
                                                          length=len(body), http_headers=headers,
                                                          warc_headers_dict={"WARC-Date": when}))
    return path


def test_a_main_text_index_ignores_a_sidebars_churn(tmp_path: Path) -> None:
    # The repository indexed each page's whole text, template included; ~98.5 % of the
    # news webs' changes were a "recent posts" sidebar's, whose terms are the workload's own.
    path = sidebar_web(tmp_path / "sidebar.warc.gz")
    whole = load_evolving_web(path, cache_dir=None, text="whole")
    main = load_evolving_web(path, cache_dir=None, text="main")
    assert len(set(whole.texts)) == 4  # every week's sidebar a change
    assert len(set(main.texts)) == 1 and "ferry timetable" in main.texts[0].lower()
    assert "recent posts" not in main.texts[0].lower() and "recent posts" in whole.texts[0].lower()


def test_the_benchmarks_workloads_are_drawn_from_the_repositorys_own_pages(simulation: RefreshSimulation,
                                                                          tmp_path: Path) -> None:
    # The generated workload drew the headings of every page of the web, pages created
    # after week 0 included — queries the repository cannot answer, where the paper draws from its own.
    from argparse import Namespace

    from bench.refresh import build_workloads

    args = Namespace(workload=None, workloads="generated,first-year", queries=40, seed=1, tune_weeks=8, head=5)
    workloads = build_workloads(args, simulation.web, simulation.index.analyzer, tmp_path, simulation.held)
    terms = {term for workload in workloads.values() for query in workload
             for term in simulation.index.analyzer.terms(query.text)}
    assert terms and "zebra" not in terms and "orphan" not in terms, terms  # created at week 6; never reached
    assert {"sort", "count"} <= terms  # the repository's own pages are drawn


def test_a_changing_workload_asks_about_what_changed_in_its_window(simulation: RefreshSimulation) -> None:
    early = {query.text for query in changing_workload(simulation.web, 4, TermAnalyzer(), size=10)}
    late = [query.text for query in changing_workload(simulation.web, 8, TermAnalyzer(), size=10)]
    assert "stable" in early and "stable sort" in early  # sort's versions add "stable" weekly
    assert not early & {"strlen", "string", "zebra"}  # pages that never changed; home's zebra comes at week 6
    assert "zebra" in late and "zebra home" in late


def test_a_change_seen_on_more_pages_is_asked_more() -> None:
    from crawlproject.refresh.workload import change_workload

    queries = change_workload([({"final", "accepted"}, "Dataclasses"), ({"final"}, "Pattern matching"),
                               ({"final", "draft"}, "Walrus")], TermAnalyzer(), size=20, single_term_share=0.5)
    assert queries[0].text == "final" and queries[0].frequency > queries[1].frequency
    assert {query.text for query in queries} == {
        "final",
        "accepted",
        "draft",
        "final dataclasses",
        "accepted dataclasses",
        "final pattern",
        "final matching",
        "final walrus",
        "draft walrus",
    }


def test_the_in_link_variant_ranks_by_in_links_and_sees_a_lost_or_gained_term(simulation: RefreshSimulation) -> None:
    web, index, absent = simulation.web, simulation.index, simulation.index.absent
    in_links = web.in_link_scores(web.start, absent)
    named = {web.urls[page].removeprefix(SITE): score for page, score in enumerate(in_links.tolist())}
    assert (named["home.html"], named["strings.html"], named["sort.html"], named["orphan.html"]) == (1, 2, 2, 1)
    workload = [Query("stable", 1.0)]
    meter = QualityMeter(index, workload, static=web.by_version(in_links, absent))
    held = simulation.held
    gains = GainMeter(index, workload, static=in_links[held])
    inlinked = RefreshSimulation(web, index, meter, gains, 0.1, held)
    stale = inlinked.run(policy_named("uniform"), 0, 3)
    fresh = inlinked.run(policy_named("uniform"), len(held), 3)
    assert stale.weeks[0].quality == 0.0  # only sort's live page holds "stable" (from week 1); its copy does not
    assert [week.quality for week in fresh.weeks] == pytest.approx([1.0] * 3)
    sort = int(np.flatnonzero(held == web.urls.index(f"{SITE}sort.html"))[0])
    gains.track(web.live(web.start, absent)[held])
    assert gains.refresh(sort, index.matrix[int(web.live(web.start + 7 * 24 * 3600.0, absent)[held[sort]])]) > 0
    assert gains.terms.scores(sort) == {
        int(index.vectorizer.vocabulary_[index.analyzer.terms("stable")[0]]): 2.0
    }  # S = its in-link score
