"""The look-ahead strategies' pieces on hand-made graphs: context-graph
layers, Q-value targets computed by hand, the two models, and InfoSpiders'
energy accounting, reproduction, death and learning."""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest
from scrapy.settings import Settings
from sklearn.linear_model import SGDClassifier

from crawlproject.models.graph import (
    discounted_targets,
    discounted_targets_by_site,
    layers,
    reverse,
)
from crawlproject.models.layer_classifier import ContextGraphModel
from crawlproject.models.link_value_model import (
    LEARN_BATCH,
    LinkFeatures,
    LinkValueModel,
    link_tokens,
    value_bins,
)
from crawlproject.models.page_classifier import TargetPageClassifier
from crawlproject.models.taxonomy_classifier import ModelError
from crawlproject.models.training_graph import LinkRecord, TrainingGraph
from crawlproject.policy.scope import HomeSites
from crawlproject.spiders import LinkValueSpider
from crawlproject.strategies.base import Topic
from crawlproject.strategies.context_graph import ContextGraphStrategy
from crawlproject.strategies.infospiders import DEAD_PENALTY, INITIAL_ENERGY, InfoSpidersStrategy
from crawlproject.strategies.link_value import LinkValueStrategy
from crawlproject.web import meta as keys
from crawlproject.web.page import Link, Page
from crawlproject.web.text import TermAnalyzer
from tests.conftest import bound_to, judge_and_learn, open_scheduler

#   s → h → c1, c2 (targets);  h → x;  s → y → z;  x → c1
OUTLINKS = {"s": ["h", "y"], "h": ["c1", "c2", "x"], "x": ["c1"], "y": ["z"], "c1": [], "c2": [], "z": []}


def test_layers_are_shortest_link_distances_before_the_targets() -> None:
    inlinks = reverse(OUTLINKS)
    assert layers(["c1", "c2"], inlinks, depth=3) == {"c1": 0, "c2": 0, "h": 1, "x": 1, "s": 2}
    assert layers(["c1", "c2"], inlinks, depth=1) == {"c1": 0, "c2": 0, "h": 1, "x": 1}
    assert "y" not in layers(["c1", "c2"], inlinks, depth=5)  # y leads nowhere near a target


def test_q_value_targets_by_hand() -> None:
    # γ = 0.5: V(u) = Σ_t γ^d(u,t)
    # c1, c2: 1 each (themselves); x: c1 one link away = 0.5;
    # h: c1 and c2 one link away = 1.0; s: both two links away = 0.5;
    # y, z: no target reachable: absent (value 0)
    value = discounted_targets(["c1", "c2"], reverse(OUTLINKS), gamma=0.5, horizon=5)
    assert value == {"c1": 1.0, "c2": 1.0, "x": 0.5, "h": 1.0, "s": 0.5}
    # a horizon of 1 link: s is two links away from every target
    assert "s" not in discounted_targets(["c1", "c2"], reverse(OUTLINKS), 0.5, horizon=1)
    assert discounted_targets(["c1"], reverse(OUTLINKS), 0.0, 5) == {"c1": 1.0, "x": 0.0, "h": 0.0, "s": 0.0}


def hand_graph(copies: int = 4) -> TrainingGraph:
    """Course sites: a department page links to a course index (anchor
    "courses"), which links to course pages; people pages are elsewhere."""
    graph = TrainingGraph(window=10)
    for i in range(copies):
        dept, index, people = f"http://u{i}.test/", f"http://u{i}.test/courses/", f"http://u{i}.test/people/"
        graph.text[dept] = "department of computer science welcome news"
        graph.text[index] = "list of courses offered this semester undergraduate graduate"
        graph.text[people] = "faculty staff students directory phone"
        graph.links[dept] = [LinkRecord(index, "courses", "teaching"), LinkRecord(people, "people", "directory")]
        graph.links[index] = []
        graph.links[people] = []
        for j in range(3):
            course = f"http://u{i}.test/courses/cs{j}/"
            graph.text[course] = "syllabus lecture homework exam grading"
            graph.links[course] = []
            graph.links[index].append(LinkRecord(course, f"cs{j} lecture", "syllabus"))
            graph.targets.add(course)
        for j in range(3):
            person = f"http://u{i}.test/people/p{j}/"
            graph.text[person] = "home page research interests publications hobbies"
            graph.links[person] = []
            graph.links[people].append(LinkRecord(person, f"person {j}", "home"))
    return graph


def test_context_graph_model_places_pages_in_their_layer(tmp_path: Path) -> None:
    model = ContextGraphModel(depth=2, features=100).fit(hand_graph())
    assert model.report["pages_per_layer"] == {"0": 12, "1": 4, "2": 4, "3": 16}
    placed = model.place([
        "lecture homework syllabus", "courses offered this semester", "department computer science", "research hobbies",
    ])
    assert [p.layer for p in placed] == [0, 1, 2, 3]  # 3 = "other"
    assert placed[0].target > 0.5 > placed[3].target
    model.save(tmp_path / "cg.npz")
    again = ContextGraphModel.load(tmp_path / "cg.npz")
    assert [p.layer for p in again.place(["courses offered"])] == [1]
    strict = ContextGraphModel(depth=2, features=100, threshold=0.999999).fit(hand_graph())
    assert strict.place(["courses department people"])[0].layer == strict.other  # unsure: "other"


def test_a_page_is_placed_once_by_the_strategys_judge_and_the_model_keeps_no_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The model remembered the last page it placed, so that the judge and the
    # strategy placed a page once "whichever asks first": a call-order cache
    # that missed as soon as a second page was judged before the first's links.
    model = ContextGraphModel(depth=2, features=100).fit(hand_graph())
    strategy = ContextGraphStrategy(Topic(), TermAnalyzer(stem=True), model)
    judge = strategy.own_judge()
    placed: list[str] = []
    place = model.place
    monkeypatch.setattr(model, "place", lambda texts: placed.extend(texts) or place(texts))
    state = set(vars(model))
    index = Page("http://u9.test/courses/", "list of courses offered this semester", [Link("http://u9.test/c/", "cs")])
    course = Page(
        "http://u9.test/courses/cs1/", "syllabus lecture homework exam grading", [Link("http://u9.test/x/", "x")]
    )
    judged = [judge.relevance(index), judge.relevance(course)]  # a batch judged before any page's links
    scores = [strategy.score_links(index, judged[0]), strategy.score_links(course, judged[1])]
    assert placed == [index.text, course.text]  # each page placed once
    assert -1 <= scores[0][0] < 0 <= scores[1][0] + 1e-9 < 1  # layer 1, then layer 0
    assert set(vars(model)) == state  # no page kept in the model


def linked_universities_graph() -> TrainingGraph:
    """:func:`hand_graph`, each university also having a page of links to
    the next university's course index: course pages it leads to lie on
    another site."""
    graph = hand_graph()
    for i in range(4):
        links = f"http://u{i}.test/links/"
        graph.text[links] = "other universities elsewhere on the web"
        graph.links[links] = [LinkRecord(f"http://u{(i + 1) % 4}.test/courses/", "courses", "elsewhere")]
    return graph


def test_a_site_bound_context_graph_counts_layers_to_its_own_sites_targets(tmp_path: Path) -> None:
    anywhere = ContextGraphModel(depth=2, features=100).fit(linked_universities_graph())
    own_site = ContextGraphModel(depth=2, features=100, value_scope="domain").fit(linked_universities_graph())
    # the links pages are two links before course pages — of another site
    assert anywhere.report["pages_per_layer"] == {"0": 12, "1": 4, "2": 8, "3": 16}
    assert own_site.report["pages_per_layer"] == {"0": 12, "1": 4, "2": 4, "3": 20}
    assert anywhere.place(["other universities elsewhere"])[0].layer == 2
    assert own_site.place(["other universities elsewhere"])[0].layer == own_site.other
    own_site.home = ["http://new.test/"]
    own_site.save(tmp_path / "cg.npz")
    again = ContextGraphModel.load(tmp_path / "cg.npz")
    assert again.value_scope == "domain" and again.home == ["http://new.test/"]
    with pytest.raises(ValueError, match="value_scope must be one of"):
        ContextGraphModel(value_scope="site")


def test_a_site_bound_context_graph_crawl_puts_pages_away_from_home_last() -> None:
    model = ContextGraphModel(depth=2, features=100, value_scope="domain").fit(linked_universities_graph())
    model.home = ["http://www.new.edu/"]
    strategy = ContextGraphStrategy(Topic(), TermAnalyzer(stem=True), model)
    focus = bound_to(strategy, HomeSites("domain", model.home))
    index_text = "list of courses offered this semester"
    links = [Link("http://new.edu/courses/cs1/", "cs1"), Link("http://other.edu/courses/cs1/", "cs1")]
    at_home = Page("http://cs.new.edu/courses/", index_text, links)  # a subdomain of home: home
    away = Page("http://other.edu/courses/", index_text, links)
    course = "syllabus lecture homework exam grading"
    assert judge_and_learn(strategy, Page("http://new.edu/cs1/", course, [])) > 0.5
    assert judge_and_learn(strategy, Page("http://other.edu/cs1/", course, [])) == 0.0  # away: a page of no layer
    stays, leaves = focus.score_links(at_home, None)
    assert -1 <= stays < 0  # the index is in layer 1
    assert leaves == -model.other  # its page is away: "other", below every link at home
    assert focus.score_links(away, None) == [-model.other, -model.other]
    # a model that counts every target has no home: the same page ranks by what it says
    open_crawl = ContextGraphStrategy(Topic(), TermAnalyzer(stem=True), ContextGraphModel(depth=2, features=100).fit(
        linked_universities_graph()))
    assert open_crawl.score_links(away, None)[1] > -1


def test_link_value_model_learns_which_links_lead_to_targets(tmp_path: Path) -> None:
    model = LinkValueModel(gamma=0.5, horizon=3).fit(hand_graph())
    # training values: a course link 1, the index link 3 × 0.5 = 1.5, people links 0
    assert model.report["links"] == 4 * (2 + 3 + 3)
    assert model.report["links_per_bin"][0] == 4 * (1 + 3)  # the people and person links
    values = model.predict([
        link_tokens("courses", "teaching", "http://new.test/courses/", False, False),
        link_tokens("people", "directory", "http://new.test/people/", False, False),
        link_tokens("cs5 lecture", "syllabus", "http://new.test/courses/cs5/", False, False),
    ])
    assert values[0] > values[1] and values[2] > values[1]
    model.save(tmp_path / "lv.npz")
    again = LinkValueModel.load(tmp_path / "lv.npz")
    assert np.allclose(again.predict([link_tokens("courses", "", "http://a.test/courses/", False, False)]),
                       model.predict([link_tokens("courses", "", "http://a.test/courses/", False, False)]))
    # online: a link unlike any seen, learnt valuable, is then predicted higher
    new = link_tokens("seminar", "talks", "http://new.test/talks/", True, False)
    before = again.predict([new])[0]
    for _ in range(LEARN_BATCH - 1):
        again.learn(new, 1.5)
    assert again.predict([new])[0] == before  # waiting for a whole batch
    again.learn(new, 1.5)
    assert again.predict([new])[0] > before and again.learned == LEARN_BATCH
    # the kept transpose of the weights answers as sklearn's own product, after learning too
    features = again.link_hasher.transform([new, link_tokens("courses", "", "http://a.test/courses/", False, False)])
    assert again.links is not None
    assert np.allclose(again.links.decision_function(features), SGDClassifier.decision_function(again.links, features))


def test_a_one_word_anchor_weighs_as_much_as_a_long_context_window() -> None:
    """Each kind of link feature weighs the same in the classifier's input:
    the anchor "Classes" beside 20 menu words of context is 1/√4 of the
    row (anchor, context, URL, parent class), not 1/√25 as when every token
    weighed alike and the menu drowned the one word that tells."""
    menu = " ".join(f"item{i}" for i in range(20))
    tokens = link_tokens("Classes", menu, "http://www.cs.example.edu/docs/classes.html", False, False)
    assert [t.partition(":")[0] for t in tokens].count("c") == 20
    row = LinkFeatures().transform([tokens])
    anchor = LinkFeatures().transform([["a:class"]]).indices[0]
    assert row[0, anchor] == pytest.approx(1 / math.sqrt(4))
    assert np.linalg.norm(row.toarray()) == pytest.approx(1.0)
    # the context's 20 words share one block's weight: each 1/√20 of it
    item = LinkFeatures().transform([["c:item0"]]).indices[0]
    assert row[0, item] == pytest.approx(1 / math.sqrt(4) / math.sqrt(20))


def test_the_page_classifier_finds_rare_targets_on_a_site_it_never_saw(tmp_path: Path) -> None:
    """6 targets among 406 training pages (a topic's few examples), each page
    full of its site's own names: pages of a new site that say what the
    targets say are targets. (Naive Bayes, the classifier before, called
    none of them a target: the training graph's prior and the new site's
    unseen names outweighed the telling words.)"""
    rng = random.Random(0)
    common = [f"word{i}" for i in range(300)]
    course = ["syllabus", "lecture", "homework", "exam", "grading", "assignment", "midterm"]

    def page(site: str, telling: int) -> str:
        words = [rng.choice(common) for _ in range(150)] + [f"{site}name{rng.randrange(40)}" for _ in range(50)]
        return " ".join(words + [rng.choice(course) for _ in range(telling)])

    graph = TrainingGraph(window=10)
    for i in range(406):
        url = f"http://s{i % 4}.test/{i}"
        graph.text[url], graph.links[url] = page(f"s{i % 4}", 8 if i >= 400 else 0), []
        if i >= 400:
            graph.targets.add(url)
    graph.links["http://s0.test/0"] = [LinkRecord("http://s0.test/400", "a course", "")]  # every link: a target
    model = LinkValueModel(gamma=0.5, horizon=3).fit(graph)
    assert model.edges.tolist() == [1.0] and model.links is None  # no "no value" bin: nothing to tell apart
    targets = [model.page_probability(page("new", 8)) for _ in range(20)]
    others = [model.page_probability(page("new", 0)) for _ in range(20)]
    assert min(targets) > 0.5 > max(others)
    model.save(tmp_path / "lv.npz")
    text = page("new", 8)
    assert LinkValueModel.load(tmp_path / "lv.npz").page_probability(text) == pytest.approx(
        model.page_probability(text)
    )
    with pytest.raises(ValueError, match="target pages and other pages"):
        TargetPageClassifier().fit(model.hasher.transform([["a"], ["b"]]), np.array([True, True]))


def test_q_value_targets_per_site_by_hand() -> None:
    # Two sites: a.edu/p → a.edu/t (target), b.edu/t (target), a.edu/x;  a.edu/x → b.edu/t
    inlinks = reverse({"a.edu/p": ["a.edu/t", "b.edu/t", "a.edu/x"], "a.edu/x": ["b.edu/t"]})
    by_site = discounted_targets_by_site(["a.edu/t", "b.edu/t"], inlinks, 0.5, 5, lambda page: page.split("/")[0])
    # site a counts a.edu/t only: itself 1, p one link before it 0.5; x leads to b's target only
    assert by_site["a.edu"] == {"a.edu/t": 1.0, "a.edu/p": 0.5}
    # site b: b.edu/t 1; x one link before it 0.5; p one link before it 0.5 (the nearer path)
    assert by_site["b.edu"] == {"b.edu/t": 1.0, "a.edu/x": 0.5, "a.edu/p": 0.5}
    # summed over sites they are the values that count every target
    everywhere = discounted_targets(["a.edu/t", "b.edu/t"], inlinks, 0.5, 5)
    for page, value in everywhere.items():
        assert value == sum(site.get(page, 0.0) for site in by_site.values())


def cross_site_graph() -> TrainingGraph:
    """:func:`hand_graph`, each department also linking to the next
    university's course index (anchor "courses" too): a link that leads to
    course pages, of another site."""
    graph = hand_graph()
    for i in range(4):
        graph.links[f"http://u{i}.test/"].append(
            LinkRecord(f"http://u{(i + 1) % 4}.test/courses/", "courses", "teaching")
        )
    return graph


def test_link_values_of_a_site_bound_topic_count_their_own_sites_targets() -> None:
    anywhere = LinkValueModel(gamma=0.5, horizon=3).fit(cross_site_graph())
    own_site = LinkValueModel(gamma=0.5, horizon=3, value_scope="domain").fit(cross_site_graph())
    # 4 × 9 links; worth nothing: the people (1) and person (3) links, and — counted
    # per site only — the 4 course-index links that leave their university
    assert anywhere.report["links_per_bin"][0] == 4 * 4
    assert own_site.report["links_per_bin"][0] == 4 * 4 + 4
    assert own_site.report["value_scope"] == "domain"
    home = own_site.link_home("http://new.test/", ["new.test"])
    stays = own_site.features("courses", "teaching", "http://new.test/courses/", False, home)
    leaves = own_site.features("courses", "teaching", "http://other.test/courses/", False, home)
    assert leaves[-1] == "s:out" and "s:out" not in stays
    assert own_site.predict([stays])[0] > 2 * own_site.predict([leaves])[0]
    # counting every target, leaving pays
    assert anywhere.predict([leaves])[0] > 2 * own_site.predict([leaves])[0]
    # a site-bound model's links leave the crawl's home; any other model's, the page's site
    assert own_site.link_home("http://other.test/", ["new.test"]) == ["new.test"]
    assert anywhere.link_home("http://other.test/", ["new.test"]) == ("other.test",)
    # the crawl's home: the model's own, else FOCUS_HOME, else (site-bound only) the seeds'
    own_site.home = ["u0.test"]
    focus_home = Settings({"FOCUS_HOME": "http://u1.test/"})
    assert HomeSites.of_model(own_site, focus_home).sites() == {"u0.test"}
    assert HomeSites.of_model(anywhere, focus_home).sites() == {"u1.test"}
    assert HomeSites.of_model(anywhere, None).sites() == set() and HomeSites.of_model(own_site, None).seeds_are_home
    with pytest.raises(ValueError, match="value_scope must be one of"):
        LinkValueModel(value_scope="site")


def test_a_site_bound_link_value_crawl_stays_home_and_learns_that_away_is_worth_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    LinkValueModel(gamma=0.5, horizon=3, value_scope="domain").fit(cross_site_graph()).save(tmp_path / "lv.npz")
    model = LinkValueModel.load(tmp_path / "lv.npz")
    assert model.value_scope == "domain" and model.home == []  # kept in the model file; home: the seeds'
    learnt: list[tuple[list[str], float]] = []
    learn = model.learn
    monkeypatch.setattr(model, "learn", lambda tokens, value: (learnt.append((tokens, value)), learn(tokens, value)))
    strategy = LinkValueStrategy(Topic(query="course"), TermAnalyzer(stem=True), model)
    seed = Page("http://new.test/", "department of computer science", [
        Link("http://new.test/courses/", "courses"), Link("http://other.test/courses/", "courses"),
    ], meta={keys.SEED: True})
    at_home, to_away = strategy.score_links(seed, judge_and_learn(strategy, seed))
    assert at_home > 2 * to_away
    course_page = "syllabus lecture homework exam grading"
    scores = {}
    for url in ("http://new.test/courses/", "http://other.test/courses/"):
        fetched = Page(url, course_page, [Link(url + "cs1/", "cs1 lecture")])
        scores[url] = strategy.score_links(fetched, judge_and_learn(strategy, fetched))[0]
    # away from home, even the away site's own course links lead off home
    assert scores["http://new.test/courses/"] > scores["http://other.test/courses/"]
    (stayed, stayed_value), (left, left_value) = learnt
    assert "s:out" not in stayed and stayed_value >= 1.0  # a course page at home: reward 1
    assert left[-1] == "s:out" and left_value == 0.0  # the same page away from home: nothing


def test_a_site_bound_link_value_takes_its_home_from_the_spiders_seeds(tmp_path: Path) -> None:
    """Every worker of a distributed crawl has the seed list, but fetches
    only some seed pages: home comes from the list, not from what arrived."""
    LinkValueModel(gamma=0.5, horizon=3, value_scope="domain").fit(cross_site_graph()).save(tmp_path / "lv.npz")
    settings = {"FOCUS_OUTPUT_DIR": str(tmp_path / "out"), "FOCUS_STORE_PAGES": "false"}
    _, _, spider = open_scheduler(
        LinkValueSpider, settings, seeds="http://www.new.test/", model=str(tmp_path / "lv.npz")
    )
    strategy = spider.focus.strategy
    assert isinstance(strategy, LinkValueStrategy)
    away = Page("http://other.test/courses/", "list of courses offered", [
        Link("http://www.new.test/courses/", "courses"), Link("http://other.test/courses/cs1/", "cs1 lecture"),
    ])  # no seed page was fetched here
    back_home, away_link = strategy.score_links(away, None)
    assert back_home > away_link
    assert "s:out" not in strategy._pending["http://www.new.test/courses/"]  # noqa: SLF001
    assert strategy._pending["http://other.test/courses/cs1/"][-1] == "s:out"  # noqa: SLF001


def test_a_link_value_model_that_learnt_nothing_ranks_links_by_the_query(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Host-disjoint training of a topic that spans every site can leave a
    graph whose links all lead nowhere: one value bin, every link worth 0.
    The crawl then ranks links as best-first does, not in the order found."""
    graph = hand_graph()
    for i in range(4):
        graph.links[f"http://u{i}.test/courses/"] = []  # the course pages' only inlinks gone
    model = LinkValueModel(gamma=0.5, horizon=3).fit(graph)
    assert model.links is None
    model.save(tmp_path / "lv.npz")
    settings = {"FOCUS_OUTPUT_DIR": str(tmp_path / "out"), "FOCUS_STORE_PAGES": "false"}
    with caplog.at_level("WARNING"):
        _, _, spider = open_scheduler(LinkValueSpider, settings, seeds="http://www.new.test/",
                                      query="syllabus homework", model=str(tmp_path / "lv.npz"))
    assert "learnt no link values" in caplog.text
    strategy = spider.focus.strategy
    assert isinstance(strategy, LinkValueStrategy)
    on_topic = Page("http://a.test/", "homework and syllabus of cs1", [Link("http://a.test/x", "more")])
    off_topic = Page("http://b.test/", "faculty phone directory", [Link("http://b.test/y", "more")])
    assert strategy.score_links(on_topic, None)[0] > strategy.score_links(off_topic, None)[0]
    # a model that learnt values: the query only orders links valued alike
    def learnt(query: str) -> LinkValueStrategy:
        return LinkValueStrategy(Topic(query=query), TermAnalyzer(stem=True), LinkValueModel(0.5, 3).fit(hand_graph()))

    index = Page("http://new.test/", "syllabus syllabus", [Link("http://new.test/courses/", "courses"),
                                                           Link("http://new.test/people/", "people")])
    with_query, without = learnt("syllabus").score_links(index, None), learnt("").score_links(index, None)
    assert with_query[0] > with_query[1] and with_query != without
    assert np.allclose(with_query, without, rtol=0, atol=1.01e-6)


def test_siblings_of_a_link_that_proved_its_worth_are_raised_by_hand() -> None:
    """An index page's links share its fate: once one of them arrives, each
    still queued is re-estimated as (Σ shown + k · predicted) / (n + k), k = 1,
    and pushed again where that is above the score it was queued with."""
    model = LinkValueModel(gamma=0.5, horizon=3).fit(hand_graph())
    strategy = LinkValueStrategy(Topic(), TermAnalyzer(stem=True), model)
    index = Page("http://new.test/teaching/", "teaching at new", [
        Link("http://new.test/a/", "Algebra"), Link("http://new.test/b/", "Biology"),
        Link("http://new.test/c/", "Chemistry"),
    ])  # anchors unlike anything trained on: the model predicts them alike, low
    queued = strategy.score_links(index, None)
    assert strategy.after_page(index, None) == []
    assert max(queued) < 0.5

    def arrive(url: str, text: str) -> list[tuple[str, float]]:
        page = Page(url, text, [], parent_url=index.url)
        judge_and_learn(strategy, page)  # a page without links shows its value here: its reward
        return [(p.key, p.score) for p in strategy.after_page(page, None)]

    # a course page (the page classifier says target: reward 1, nothing beyond it)
    raised = arrive("http://new.test/a/", "syllabus lecture homework exam grading")
    assert raised == [("http://new.test/b/", pytest.approx((1.0 + queued[1]) / 2)),
                      ("http://new.test/c/", pytest.approx((1.0 + queued[2]) / 2))]
    # a page that is not: n = 2, Σ shown = 1 — lower than b's raised score, so nothing is pushed again
    assert arrive("http://new.test/b/", "home page research interests publications hobbies") == []
    assert strategy._pages[index.url].queued == {  # noqa: SLF001
        "http://new.test/c/": ("http://new.test/c/", queued[2], pytest.approx((1.0 + queued[2]) / 2)),
    }
    # the reward reads the page's terms once, for the query's cosine too: the classifier's own verdict
    page = Page("http://new.test/x/", "Syllabus, lectures and homework: the exam grading", [])
    assert judge_and_learn(strategy, page) == pytest.approx(model.page_probability(page.text))
    # a link found here that arrived from another page is not raised again
    other = Page("http://new.test/other/", "more teaching", [Link("http://new.test/c/", "Chemistry")])
    strategy.score_links(other, None)
    judge_and_learn(strategy, Page("http://new.test/c/", "syllabus lecture homework exam grading", [],
                                 parent_url=other.url))
    assert [p.key for p in strategy.after_page(other, None)] == []
    assert arrive("http://new.test/e/", "syllabus lecture homework exam grading") == []  # c: not pushed again
    assert strategy._pages[index.url].queued == {}  # noqa: SLF001  a and b arrived here, c elsewhere
    # a page found elsewhere raises nothing here; off, nothing is ever raised
    assert arrive("http://elsewhere.test/x/", "syllabus lecture homework exam grading") == []
    off = LinkValueStrategy(Topic(), TermAnalyzer(stem=True), model, siblings=False)
    off.score_links(index, None)
    judge_and_learn(off, Page("http://new.test/a/", "syllabus lecture homework exam grading", [], parent_url=index.url))
    assert off.after_page(index, None) == []


def test_a_sibling_shows_the_reward_it_proved_not_what_its_links_promise() -> None:
    """An arrived sibling is evidence by what it is (a target or not), not
    by γ · the best predicted value of its own links. Taken as evidence, that
    guess raised a department's whole student list for a course topic — each
    student page links to something the model likes — and the raised pages
    proved nothing before the next guess raised more."""
    model = LinkValueModel(gamma=0.5, horizon=3).fit(hand_graph())
    strategy = LinkValueStrategy(Topic(), TermAnalyzer(stem=True), model)
    people = Page("http://new.test/people/", "people", [
        Link("http://new.test/ann/", "Ann"), Link("http://new.test/bob/", "Bob"),
    ])
    queued = strategy.score_links(people, None)
    ann = Page("http://new.test/ann/", "home page research interests publications hobbies",
               [Link("http://new.test/courses/", "courses")], parent_url=people.url)
    reward = judge_and_learn(strategy, ann)
    promise = strategy.score_links(ann, reward)
    assert reward < 0.5 and model.gamma * max(promise) > queued[1]  # the guess would have raised Bob
    assert strategy.after_page(ann, None) == []
    assert strategy._pages[people.url].shown == 0.0  # noqa: SLF001


def test_siblings_away_from_home_are_not_raised() -> None:
    """A site-bound model: a page at home that shows its worth raises its
    siblings at home, not those that leave — away from home, a page is worth 0."""
    model = LinkValueModel(gamma=0.5, horizon=3, value_scope="domain").fit(cross_site_graph())
    model.home = ["new.test"]
    strategy = LinkValueStrategy(Topic(), TermAnalyzer(stem=True), model)
    index = Page("http://new.test/projects/", "projects", [
        Link("http://new.test/a/", "Algebra"), Link("http://new.test/b/", "Biology"),
        Link("http://other.test/c/", "Chemistry"),
    ])
    strategy.score_links(index, None)
    judge_and_learn(strategy, Page("http://new.test/a/", "syllabus lecture homework exam grading", [],
                                 parent_url=index.url))
    assert [p.key for p in strategy.after_page(index, None)] == ["http://new.test/b/"]


def test_siblings_are_held_within_the_learning_memory() -> None:
    model = LinkValueModel(gamma=0.5, horizon=3).fit(hand_graph())
    strategy = LinkValueStrategy(Topic(), TermAnalyzer(stem=True), model, memory=5)
    for i in range(4):
        strategy.score_links(Page(f"http://new.test/{i}/", "index", [
            Link(f"http://new.test/{i}/{j}", f"link {j}") for j in range(2)
        ]), None)
    assert list(strategy._pages) == ["http://new.test/2/", "http://new.test/3/"]  # noqa: SLF001  the oldest forgotten
    assert strategy._sibling_links == 4  # noqa: SLF001
    # a page fetched again replaces its own entry instead of counting twice
    strategy.score_links(Page("http://new.test/3/", "index", [Link("http://new.test/3/0", "link 0")]), None)
    assert list(strategy._pages) == ["http://new.test/2/", "http://new.test/3/"]  # noqa: SLF001
    assert strategy._sibling_links == 3  # noqa: SLF001


def test_value_bins_and_bad_model_files(tmp_path: Path) -> None:
    assert value_bins([0, 0]).tolist() == [0.0]
    assert value_bins([0, 1, 1, 1]).tolist() == [0.0, 1.0]
    (tmp_path / "junk.npz").write_bytes(b"not a model")
    with pytest.raises(ModelError, match="is not a crawlproject model file"):
        LinkValueModel.load(tmp_path / "junk.npz")
    ContextGraphModel(depth=1, features=50).fit(hand_graph()).save(tmp_path / "cg.npz")
    with pytest.raises(ModelError, match="not a crawlproject/link-value/5 model"):
        LinkValueModel.load(tmp_path / "cg.npz")
    with pytest.raises(ModelError, match="does not exist"):
        ContextGraphModel.load(tmp_path / "missing.npz")
    with pytest.raises(ValueError, match="no target page"):
        ContextGraphModel().fit(TrainingGraph(text={"a": "words"}, links={"a": []}))


def page(url: str, text: str, links: list[str], agent: int | None = None) -> Page:
    meta = {} if agent is None else {keys.AGENT: agent}
    return Page(url, text, [Link(u, "course" if "c" in u else "other") for u in links], meta=meta)


def test_infospiders_energy_reproduction_and_death() -> None:
    spiders = InfoSpidersStrategy(
        Topic(query="course syllabus"), TermAnalyzer(stem=True), agents=2, max_agents=3, seed=1
    )
    a0, a1 = spiders.agents[0], spiders.agents[1]

    def arrive(fetched: Page) -> float:  # as the spider calls a strategy for each page
        sim = judge_and_learn(spiders, fetched)
        spiders.score_links(fetched, sim)
        return sim

    # seeds are dealt out round-robin; the first page costs nothing (no mean yet)
    relevant = page("http://h.test/0", "course syllabus", ["http://h.test/c1"])
    sim = arrive(relevant)
    assert sim == pytest.approx(1.0) and a0.energy == pytest.approx(INITIAL_ENERGY + 1.0)
    assert spiders.child_state(relevant, sim) == {keys.AGENT: 0}
    # agent 1 fetches an irrelevant page: it pays the mean similarity so far (1.0)
    assert arrive(page("http://h.test/1", "weather news", ["http://h.test/x"])) == 0.0
    assert a1.energy == pytest.approx(INITIAL_ENERGY - 1.0)
    # agent 0 again on a relevant page: it gains sim = 4/(√2·3) = 0.94, pays
    # the mean 0.5, and at 2.44 ≥ 2 × the initial energy it reproduces
    again = page("http://h.test/c1", "course syllabus course syllabus lecture", ["http://h.test/c2"], agent=0)
    sim = arrive(again)
    assert sim == pytest.approx(4 / (math.sqrt(2) * 3))
    energy = INITIAL_ENERGY + 1.0 + sim - 0.5
    child = spiders.agents[2]
    assert a0.energy == pytest.approx(energy / 2) == pytest.approx(child.energy)
    assert child.keywords == [*a0.keywords, "lectur"]  # the page's most frequent new term
    assert child.hidden.shape == (a0.hidden.shape[0], a0.hidden.shape[1] + 1)
    assert spiders.child_state(again, sim) == {keys.AGENT: 2}  # the page's links are the offspring's
    # agent 1 (energy 0) fetches a dull page without links: it dies
    assert not a1.alive or arrive(page("http://h.test/d", "weather", [], agent=1)) == 0.0
    assert not a1.alive and spiders.deaths == 1 and a1.energy <= 0
    assert len(spiders.living()) == 2
    # its links are adopted by the richest living agent; the last agent never dies
    for n in range(200):
        arrive(page(f"http://h.test/e{n}", "weather", [], agent=1))
    assert len(spiders.living()) == 1 and spiders.deaths == 2


def test_infospiders_links_go_to_their_own_pages_agent_whatever_the_order() -> None:
    # The strategy kept only the last page's agent, and a page scored after
    # another arrived "arrived" again: its agent was paid twice, and a sitemap
    # (scored without arriving) took a fetch's energy.
    spiders = InfoSpidersStrategy(
        Topic(query="course syllabus"), TermAnalyzer(stem=True), agents=2, max_agents=2, seed=1
    )
    first = page("http://h.test/a", "course syllabus", ["http://h.test/c1"], agent=0)
    second = page("http://h.test/b", "weather news", ["http://h.test/x"], agent=1)
    sims = [judge_and_learn(spiders, first), judge_and_learn(spiders, second)]  # a batch arrives, then links
    energies = {agent.id: agent.energy for agent in spiders.agents.values()}
    assert spiders.child_state(first, sims[0]) == {keys.AGENT: 0}
    spiders.score_links(first, sims[0])
    assert spiders.child_state(second, sims[1]) == {keys.AGENT: 1}
    sitemap = page("http://h.test/sitemap.xml", "", ["http://h.test/c2"], agent=1)
    spiders.score_links(sitemap, 0.0)
    assert spiders.child_state(sitemap, 0.0) == {keys.AGENT: 1}
    assert {agent.id: agent.energy for agent in spiders.agents.values()} == energies  # scoring pays nothing


def test_infospiders_net_learns_to_predict_page_similarity() -> None:
    spiders = InfoSpidersStrategy(Topic(query="course"), TermAnalyzer(stem=True), agents=1, seed=3, learning_rate=0.5)
    agent = spiders.agents[0]
    x = np.array([1.0])
    errors = [abs(agent.learn(x, 0.9, 0.5)) for _ in range(200)]
    assert errors[-1] < errors[0] / 4
    assert abs(agent.forward(x)[1] - 0.9) < 0.05
    # in a crawl: the link's inputs wait until its page arrives, then the net learns
    parent = page("http://h.test/", "course", ["http://h.test/c"])
    spiders.score_links(parent, judge_and_learn(spiders, parent))
    assert "http://h.test/c" in spiders._pending
    judge_and_learn(spiders, page("http://h.test/c", "course course", [], agent=0))  # no links: learns all the same
    assert "http://h.test/c" not in spiders._pending


def test_infospiders_of_a_site_bound_topic_find_nothing_away_from_home() -> None:
    home = HomeSites("domain", ["http://h.test/"])
    spiders = InfoSpidersStrategy(
        Topic(query="course syllabus"), TermAnalyzer(stem=True), agents=1, max_agents=1, seed=1,
    )
    focus = bound_to(spiders, home)
    agent = spiders.agents[0]
    seed = page("http://h.test/", "course syllabus", ["http://h.test/c1", "http://other.test/c2"])
    stays, leaves = focus.score_links(seed, judge_and_learn(spiders, seed))
    assert leaves < stays - DEAD_PENALTY / 2  # with the dead agents' links: below every link at home
    assert "http://h.test/c1" in spiders._pending  # noqa: SLF001 — a net will learn from it
    assert "http://other.test/c2" not in spiders._pending  # noqa: SLF001 — known to be worth 0: nothing to learn
    energy = agent.energy
    away = page("http://other.test/c2", "course syllabus", [], agent=0)
    assert judge_and_learn(spiders, away) == pytest.approx(1.0)  # the judge reads the same words …
    assert agent.energy == pytest.approx(energy - 1.0)  # … but away from home they earn nothing; it pays the mean (1.0)
    # without a home, the same page feeds the agent
    open_crawl = InfoSpidersStrategy(Topic(query="course syllabus"), TermAnalyzer(stem=True), agents=1, seed=1)
    judge_and_learn(open_crawl, away)
    assert open_crawl.agents[0].energy == pytest.approx(INITIAL_ENERGY + 1.0)


def test_infospiders_selection_is_a_softmax_of_link_worth() -> None:
    # Gumbel-max: the share of first places follows e^{β μ} / Σ e^{β μ'}
    spiders = InfoSpidersStrategy(Topic(query="course"), TermAnalyzer(stem=True), agents=1, beta=2.0, seed=7)
    wins = 0
    trials = 4000
    for _ in range(trials):
        high, low = 2.0 * 0.9 + spiders._gumbel(), 2.0 * 0.4 + spiders._gumbel()
        wins += high > low
    expected = math.exp(1.8) / (math.exp(1.8) + math.exp(0.8))
    assert abs(wins / trials - expected) < 0.03


def test_a_graph_within_sites_keeps_the_links_a_scoped_crawl_follows() -> None:
    a, b, t = "http://www.cs.x.edu/a", "http://www.y.org/b", "http://lab.x.edu/t"
    graph = TrainingGraph(
        text={a: "home", b: "elsewhere", t: "target"},
        links={
            a: [LinkRecord(b, "out", ""), LinkRecord("http://www.x.edu/c", "in", "")],
            b: [LinkRecord(t, "back", "")],
        },
        targets={t},
    )
    assert graph.within_sites("any") is graph
    domain = graph.within_sites("domain")
    assert [link.target for link in domain.links[a]] == ["http://www.x.edu/c"]
    assert domain.links[b] == []
    assert layers(graph.targets, graph.inlinks(), 3)[a] == 2  # through the other site
    assert a not in layers(domain.targets, domain.inlinks(), 3)  # no way inside x.edu
    assert graph.within_sites("host").links[a] == []  # www.x.edu is another host than www.cs.x.edu
