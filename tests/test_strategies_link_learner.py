"""The online link learner by hand, on small made-up pages: a
link's features, one online update, the prior before any update is
SharkSearch's order, dead-end accounting, the exploration share, the
experiences that carry learning between workers."""

from __future__ import annotations

import numpy as np
import pytest
from scrapy import Request
from scrapy.http import HtmlResponse

from crawlproject.judges.query import TfQueryJudge as QueryJudge
from crawlproject.models.link_features import link_tokens, path_cells
from crawlproject.models.online_link_model import Experience, LinkLearner, pack_all, unpack_all
from crawlproject.models.path_history import PathHistory
from crawlproject.strategies.base import Topic
from crawlproject.strategies.link_learner import LinkLearnerStrategy
from crawlproject.strategies.ports import DetachedFrontier
from crawlproject.strategies.shark_search import SharkSearchStrategy
from crawlproject.web.page import Page
from crawlproject.web.text import TermAnalyzer
from tests.conftest import judge_and_learn

ANALYZER = TermAnalyzer(stem=False)
SHARK = {"gamma": 0.7, "delta": 0.5, "beta": 0.8, "depth": 3, "context_words": 3}
QUERY = "jazz music concerts"


def make_page(body: str, url: str = "http://club.test/", meta: dict[str, object] | None = None) -> Page:
    request = Request(url, meta=meta or {})
    response = HtmlResponse(url, body=f"<html><body>{body}</body></html>".encode(), request=request)
    return Page.from_response(response, meta=response.meta)


#: the crawl's judge: sim(q, p)
JUDGE = QueryJudge(ANALYZER.vector(QUERY), ANALYZER)


def learner_strategy(explore: float = 0.0, **kwargs: object) -> LinkLearnerStrategy:
    return LinkLearnerStrategy(Topic(QUERY), ANALYZER, LinkLearner(batch=4), explore=explore, **SHARK, **kwargs)  # type: ignore[arg-type]


HUB = make_page(
    "jazz club news: <a href='/jazz/concerts.html'>jazz concerts</a> and "
    "<a href='/music/'>music</a> or <a href='/tickets.html'>tickets</a> and "
    "<a href='http://elsewhere.test/about.html'>about us</a>"
)


def test_a_links_features_say_what_it_says_of_its_target() -> None:
    tokens = link_tokens(["jazz", "concerts"], ["club", "news"], "http://club.test/jazz/concerts.html",
                         "http://club.test/", 0.3)
    assert tokens == ["a:jazz", "a:concerts", "c:club", "c:news", "u:jazz", "u:concerts", "u:html",
                      "h:club.test", "x:html", "d:1", "s:same", "p:0.2", "k:1"]
    learner = LinkLearner()
    features = learner.featurizer.featurize(tokens, prior=0.25, parent=0.3, cells=path_cells("http://club.test/jazz/a"))
    assert features.prior == 0.25 and features.parent == 0.3
    assert np.isclose(np.linalg.norm(features.values), 1.0)
    assert len(features.indices) == len(set(features.indices.tolist())) <= len(tokens)
    # The same host, the same first directory: the same history cells.
    assert path_cells("http://club.test/jazz/b.html")[:2] == features.cells[:2]


def test_a_pages_links_featurized_together_are_featurized_as_each_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """A page's links are featurized in one pass with a token cache: the
    features (and the tokens' names) are those of each link featurized
    alone by a featurizer that caches nothing, a cache that overflows
    included; links without a token get an empty row."""
    from crawlproject.models import link_features as model

    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(300)]
    pages = [
        [
            link_tokens(
                rng.choice(words, 3).tolist(),
                rng.choice(words, 8).tolist(),
                f"http://h{n % 7}.test/d{n % 5}/{n}.html",
                "http://h0.test/",
                float(rng.random()),
            )
            if n % 9
            else []
            for n in range(size)
        ]
        for size in rng.integers(1, 30, 40)
    ]
    monkeypatch.setattr(model, "TOKENS_CACHED", 50)  # the cache is cleared many times over
    monkeypatch.setattr(model, "NAMES_KEPT", 200)  # and names are forgotten and given again
    together, alone = model.LinkFeaturizer(), model.LinkFeaturizer()
    for page in pages:
        cells = [path_cells(f"http://h.test/{n}.html") for n in range(len(page))]
        batch = together.featurize_many(page, [0.1 * n for n in range(len(page))], 0.3, cells)
        for n, tokens in enumerate(page):
            one = alone.featurize(tokens, 0.1 * n, 0.3, cells[n])
            alone._known.clear()  # noqa: SLF001 (a featurizer that caches nothing)
            assert batch[n].indices.tolist() == one.indices.tolist() and batch[n].values.tolist() == one.values.tolist()
            assert (batch[n].prior, batch[n].parent, batch[n].cells) == (one.prior, one.parent, one.cells)
            assert batch[n].indices.dtype == np.int32 and batch[n].values.dtype == np.float32
            assert len(one.indices) == 0 if not tokens else np.isclose(np.linalg.norm(one.values), 1.0)
    assert list(together.names.items()) == list(alone.names.items())


def test_predictions_take_the_same_product_as_the_learning_matrix() -> None:
    """Predictions take rows @ weights from flat arrays (FlatRows), learning
    from the sparse matrix: the two agree to the last bit."""
    from crawlproject.models.online_link_model import FlatRows

    learner = LinkLearner()
    rng = np.random.default_rng(2)
    links = learner.featurizer.featurize_many(
        [[f"a:t{n}", f"u:w{n % 7}", "h:x.test"][: n % 4] for n in range(60)], [0.2] * 60, 0.1, [(1, 2, 3, 4, 5)] * 60
    )
    weights = rng.normal(size=learner.relevance.weights.shape)
    assert np.array_equal(FlatRows(links).dot(weights), learner.rows(links) @ weights)
    assert FlatRows([]).dot(weights).shape == (0,)


def test_before_any_update_the_order_is_sharksearchs() -> None:
    learner = learner_strategy()
    shark = SharkSearchStrategy(Topic(QUERY), ANALYZER, **SHARK)  # type: ignore[arg-type]
    relevance = JUDGE.score(HUB)
    expected = shark.score_links(HUB, relevance)
    found = learner.score_links(HUB, judge_and_learn(learner, HUB, JUDGE))
    assert (
        np.argsort(-np.array(found), kind="stable").tolist() == np.argsort(-np.array(expected), kind="stable").tolist()
    )
    assert found == pytest.approx(expected, abs=1e-5)  # the prior itself, but for a 1e-6 tie


def test_links_sharksearch_would_drop_are_queued_last() -> None:
    spent = make_page("nothing of the topic <a href='/x'>x</a> <a href='/y'>jazz</a>",
                      meta={"focus_inherited": 0.0, "focus_depth_budget": 1})
    shark = SharkSearchStrategy(Topic(QUERY), ANALYZER, **SHARK)  # type: ignore[arg-type]
    assert shark.score_links(spent, 0.0) == [None, None]  # depth spent: SharkSearch stops
    found = learner_strategy().score_links(spent, 0.0)
    assert all(score is not None and 0 <= score < 1e-6 for score in found)


def test_one_online_update_moves_the_links_like_the_example() -> None:
    strategy = learner_strategy()
    learner = strategy.learner
    before = dict(zip([link.key for link in HUB.links], strategy.score_links(HUB, 0.2), strict=True))
    # /jazz/concerts.html turns out highly relevant, /tickets.html not at all.
    strategy._learn("http://club.test/jazz/concerts.html", 0.9)
    strategy._learn("http://club.test/tickets.html", 0.0)
    learner.flush()
    assert learner.learned == 2 and learner.relevance.updates == 1
    again = make_page(HUB.text and str(HUB._response.body, "utf-8"), url="http://club.test/index2.html")  # type: ignore[union-attr]
    after = dict(zip([link.key for link in again.links], strategy.score_links(again, 0.2), strict=True))
    gain = {key: after[key] - before[key] for key in after}
    assert gain["http://club.test/jazz/concerts.html"] > gain["http://club.test/tickets.html"]
    # the directory's history is evidence at once
    assert learner.history.counts(path_cells("http://club.test/jazz/")[1])[:2] == (1.0, 0.9)


def test_dead_ends_are_counted_and_lower_their_directory() -> None:
    strategy = learner_strategy()
    learner = strategy.learner
    page = make_page(" ".join(f"<a href='/gone/{i}.html'>jazz {i}</a>" for i in range(8))
                     + " <a href='/jazz/live.html'>jazz live</a> <a href='/jazz/more.html'>jazz more</a>")
    strategy.score_links(page, 0.3)
    for i in range(8):
        strategy.dead_end(f"http://club.test/gone/{i}.html", {}, 404)
    strategy._learn("http://club.test/jazz/live.html", 0.4)
    learner.flush()
    assert learner.dead_ends == 8 and learner.learned == 9
    assert learner.history.alive_rate == pytest.approx(2 / 10)  # (1 page + 1) / (9 tries + 1)
    pages, _, dead = learner.history.counts(path_cells("http://club.test/gone/x.html")[1])
    assert (pages, dead) == (0.0, 8.0)
    # A new link under /gone/ is now less likely alive than one under /jazz/.
    fresh = make_page("<a href='/gone/9.html'>jazz 9</a> <a href='/jazz/more2.html'>jazz 9</a>")
    features = [learner.featurizer.featurize(link_tokens(["jazz", "9"], [], link.key, fresh.url, 0.3), 0.2, 0.3,
                                             path_cells(link.key)) for link in fresh.links]
    _, alive = learner.expected(features)
    assert alive[0] < alive[1]


def test_exploration_keeps_a_fixed_share_on_the_prior() -> None:
    strategy = learner_strategy(explore=0.2, seed=7)
    keys = [f"http://club.test/{i}.html" for i in range(5000)]
    exploring = strategy.exploring(keys)
    assert 0.18 < exploring.mean() < 0.22
    assert (strategy.exploring(keys) == exploring).all()  # the same links every time: repeatable
    assert not learner_strategy(explore=0.0).exploring(keys).any()
    # An exploring link keeps its prior, whatever the correction learnt.
    learner = strategy.learner
    learner.relevance.weights[:] = -1.0  # a correction that writes every link off …
    learner.relevance.loss_without, learner.relevance.loss_with = 1.0, 0.5  # … and has earned full trust
    page = make_page(" ".join(f"<a href='/{i}.html'>jazz {i}</a>" for i in range(40)))
    scores = np.array(strategy.score_links(page, 0.3))
    chosen = strategy.exploring([link.key for link in page.links])
    assert chosen.any() and (scores[chosen] > 0).all() and (scores[~chosen] < 1e-5).all()


@pytest.mark.parametrize(("rescore_links", "whole_rescores"), [(100, 5), (50, 2), (400, 20)])
def test_the_whole_queue_is_rescored_queue_over_rescore_links_fetches_apart(
    rescore_links: int, whole_rescores: int
) -> None:
    frontier = DetachedFrontier()
    strategy = learner_strategy(rescore_every=1, rescore_links=rescore_links, frontier=frontier)
    page = make_page(" ".join(f"<a href='/jazz/{i}.html'>jazz {i}</a>" for i in range(400)))
    strategy.score_links(page, 0.3)
    assert len(strategy.pending) == 400
    for i in range(20):  # fetches the learner did not queue: the queue stays 400 long
        strategy.dead_end(f"http://elsewhere.test/{i}.html", {}, 404)
    assert strategy._rescores == whole_rescores  # 400 ÷ rescore_links fetches apart
    assert all(len(keys) == 400 for keys in frontier.rescores if keys is not None)


def test_experiences_travel_between_workers_and_teach_the_same() -> None:
    one, two = LinkLearner(batch=100), LinkLearner(batch=100)
    strategy = learner_strategy()
    strategy.learner = one
    strategy.score_links(HUB, 0.2)
    examples = [
        Experience(features, 0.5 if i % 2 else None) for i, (features, _) in enumerate(strategy.pending.values())
    ]
    for experience in unpack_all(pack_all(examples)):
        two.add(experience)
    for experience in examples:
        one.add(experience)
    one.flush()
    two.flush()
    assert np.allclose(one.relevance.weights, two.relevance.weights)
    assert np.allclose(one.alive.weights, two.alive.weights)
    assert one.history.cells == two.history.cells


def test_a_correction_is_trusted_as_far_as_it_has_beaten_the_offsets() -> None:
    learner = LinkLearner(batch=8)
    model = learner.relevance
    assert model.trust == 0.0  # nothing learnt: the crawl is the prior's
    # Tokens that tell relevant links from the rest: the correction earns its way in.
    page = make_page("")
    good = learner.featurizer.featurize(["a:jazz", "u:jazz"], 0.1, 0.1, (0, 0, 0, 0, 0))
    bad = learner.featurizer.featurize(["a:news", "u:news"], 0.1, 0.1, (0, 0, 0, 0, 0))
    for _ in range(30):
        for features, relevance in ((good, 0.6), (bad, 0.0)) * 4:
            learner.add(Experience(features, relevance))
    assert page is not None and model.trust == 1.0
    relevance, _ = learner.expected([good, bad])
    assert relevance[0] > 0.3 > 0.1 > relevance[1]
    # Tokens that say nothing (the same link, either outcome): no trust.
    noise = LinkLearner(batch=8)
    for i in range(240):
        noise.add(Experience(good, 0.6 if i % 2 else 0.0))
    assert noise.relevance.trust < 0.5


def test_the_path_history_shrinks_the_prior_toward_each_sibling_group() -> None:
    history = PathHistory(strength=2.0)
    rich, poor = path_cells("http://a.test/rich/x"), path_cells("http://a.test/poor/x")
    for _ in range(6):
        history.observe(0.1, rich, 0.5)
        history.observe(0.1, poor, 0.0)
    assert history.scale == pytest.approx(0.25 / 0.1)  # relevance per unit of prior
    rich_estimate, rich_alive = history.estimate(0.1, rich)
    poor_estimate, _ = history.estimate(0.1, poor)
    assert poor_estimate < 0.25 < rich_estimate  # the prior on the crawl's scale, times each directory's ratio
    assert rich_alive == 1.0  # no dead end yet
    unseen = path_cells("http://b.test/new/x")
    assert history.estimate(0.1, unseen) == pytest.approx((0.25, 1.0))  # only the prior, on the verdicts' scale


def test_the_learners_batch_offsets_are_the_path_historys_own_estimates() -> None:
    """LinkLearner.offsets computes every link's chain at once; it must say
    what PathHistory.estimate says of each link alone."""
    learner = LinkLearner(batch=1000)
    features = []
    for i in range(300):
        url = f"http://h{i % 3}.test/d{i % 7}/e{i % 4}/{i}.html"
        found_on = f"http://h{i % 3}.test/d{i % 7}/" if i % 2 else ""
        tokens = link_tokens(["jazz"], [], url, found_on or "http://h0.test/", 0.2)
        features.append(learner.featurizer.featurize(tokens, (i % 10) / 10, 0.2, path_cells(url, found_on)))
    for i, found in enumerate(features[:120]):
        learner.add(Experience(found, None if i % 5 == 0 else (i % 7) / 7))  # pages and dead ends
    relevance, alive = learner.offsets(features)
    expected = [learner.history.estimate(found.prior, found.cells) for found in features]
    assert relevance == pytest.approx([e[0] for e in expected]) and alive == pytest.approx([e[1] for e in expected])
    assert len(set(np.round(alive, 6))) > 5  # the groups told different things


@pytest.mark.parametrize("siblings_moved", [0.02, 0.0])
def test_a_big_directory_is_re_scored_when_its_evidence_moved_not_after_every_verdict(siblings_moved: float) -> None:
    """Siblings are re-scored every few verdicts (FOCUS_LEARNER_SIBLINGS_EVERY), but a
    group whose history says less than FOCUS_LEARNER_SIBLINGS_MOVED (2 %) more or less of its
    links than when they were last re-scored is skipped: a directory of
    hundreds of queued links cost a re-score of all of them every 4
    verdicts, long after one more verdict could move it."""
    frontier = DetachedFrontier()
    strategy = LinkLearnerStrategy(  # rate 0: no token correction, only the path history moves scores
        Topic(QUERY), ANALYZER, LinkLearner(rate=0.0, batch=4),
        explore=0.0, rescore_every=0, siblings_moved=siblings_moved, frontier=frontier, **SHARK,  # type: ignore[arg-type]
    )
    page = make_page(" ".join(f"<a href='/jazz/{i}.html'>jazz {i}</a>" for i in range(600)), url="http://club.test/jazz/")
    strategy.score_links(page, 0.3)

    def verdicts(numbers: range, relevance: float | None) -> int:
        """Verdicts on /jazz/<n>.html; the links re-scored meanwhile."""
        sent = len(frontier.rescores)
        for i in numbers:
            if relevance is None:
                strategy.dead_end(f"http://club.test/jazz/{i}.html", {}, 404)
            else:
                strategy._learn(f"http://club.test/jazz/{i}.html", relevance)
                strategy._outcome()
        return sum(len(keys) for keys in frontier.rescores[sent:] if keys is not None)

    assert verdicts(range(0, 8), 0.2) > 0  # the group's first evidence: re-scored
    verdicts(range(8, 200), 0.2)  # a long, even history: the group says the same after each verdict …
    if not siblings_moved:  # (0: the old rule, re-scored every few verdicts)
        assert verdicts(range(200, 208), 0.2) >= 400 and not frontier.stats["focus/learner/sibling_rescores_skipped"]
        return
    assert frontier.stats["focus/learner/sibling_rescores_skipped"] > 20
    assert verdicts(range(200, 208), 0.2) == 0  # … and its 400 queued links are left as they are
    assert verdicts(range(208, 240), None) > 0  # dead ends move what it says: re-scored
    # What the queue holds is what a re-score would give, within the tolerance.
    keys = list(strategy.pending)
    stored = np.array([strategy.pending[key][1] for key in keys])
    fresh = strategy._scores(keys, [strategy.pending[key][0] for key in keys])
    assert np.allclose(stored, fresh, rtol=2 * 0.02)


@pytest.mark.parametrize("every", [1, 4])
def test_siblings_are_re_scored_after_every_so_many_verdicts(every: int) -> None:
    """FOCUS_LEARNER_SIBLINGS_EVERY: the queued links of a verdict's
    directory are re-scored after that many verdicts (1: as each arrives)."""
    frontier = DetachedFrontier()
    strategy = LinkLearnerStrategy(
        Topic(QUERY), ANALYZER, LinkLearner(batch=4), explore=0.0,
        rescore_every=0, siblings_moved=0.0, siblings_every=every, frontier=frontier, **SHARK,  # type: ignore[arg-type]
    )
    strategy.score_links(make_page(" ".join(f"<a href='/jazz/{i}.html'>jazz {i}</a>" for i in range(10)),
                                   url="http://club.test/jazz/"), 0.3)
    after = []
    for i in range(4):
        strategy._learn(f"http://club.test/jazz/{i}.html", 0.5)
        strategy._outcome()
        after.append(len(frontier.rescores))
    assert after == ([1, 2, 3, 4] if every == 1 else [0, 0, 0, 1])
    assert set(frontier.rescores[-1]) == {f"http://club.test/jazz/{i}.html" for i in range(4, 10)}


def test_an_unexplored_directory_sends_one_probe_and_holds_the_rest_until_its_verdict() -> None:
    """FOCUS_LEARNER_PROBE_HOLD: of a directory nothing has been learnt of,
    its best link keeps its score and the others are held, so that the top
    of the queue — what many requests in flight take at once — spreads over
    directories; the probe's verdict frees its siblings (re-scored with it)."""
    body = " ".join([*(f"<a href='/jazz/{i}.html'>jazz concerts {i}</a>" for i in range(6)),
                     *(f"<a href='/rock/{i}.html'>jazz rock {i}</a>" for i in range(6))])

    def top(strategy: LinkLearnerStrategy, frontier: DetachedFrontier, count: int) -> list[str]:
        return sorted(frontier.queued, key=lambda key: -frontier.queued[key][0])[:count]

    orders = {}
    for hold in (1.0, 0.5):
        frontier = DetachedFrontier()
        strategy = learner_strategy(probe_hold=hold, rescore_every=0, frontier=frontier)
        page = make_page(body, url="http://club.test/")
        for link, score in zip(page.links, strategy.score_links(page, 0.3), strict=True):
            frontier.queued[link.key] = (score, {})
        orders[hold] = top(strategy, frontier, 2)
        if hold == 0.5:
            held = {key: score for key, (score, _) in frontier.queued.items()}
            jazz_probe = orders[hold][0]
            # The probe's verdict: its directory is known now, its held siblings are re-scored up.
            strategy._learn(jazz_probe, 0.6)
            for _ in range(4):
                strategy._outcome()
            freed = [key for key in frontier.queued if key.startswith("http://club.test/jazz/") and key != jazz_probe]
            assert all(frontier.queued[key][0] > 1.5 * held[key] for key in freed)
            rock = sorted((score for key, (score, _) in frontier.queued.items() if "/rock/" in key), reverse=True)
            assert rock[0] > 1.5 * rock[1]  # still held, all but its probe
    assert all("/jazz/" in key for key in orders[1.0])  # no hold: the best directory's links, one after another
    assert {key.split("/")[3] for key in orders[0.5]} == {"jazz", "rock"}  # one probe of each directory first


def test_links_in_flight_hold_their_directory_back_until_their_verdicts() -> None:
    """FOCUS_LEARNER_IN_FLIGHT: while a directory's links are being fetched
    its queued siblings count what is expected of them as not shown yet, so
    the next requests go elsewhere; each verdict takes its hold back, and
    what is learnt is the verdicts alone."""
    body = " ".join([*(f"<a href='/jazz/{i}.html'>jazz concerts {i}</a>" for i in range(6)),
                     *(f"<a href='/rock/{i}.html'>jazz rock {i}</a>" for i in range(6))])
    estimates = {}
    for in_flight in (0.0, 1.0):
        frontier = DetachedFrontier()
        strategy = learner_strategy(in_flight=in_flight, rescore_every=0, frontier=frontier)
        elsewhere = make_page("<a href='/a.html'>jazz</a>", url="http://other.test/")
        strategy.score_links(elsewhere, 0.3)
        strategy._learn(elsewhere.links[0].key, 0.5)  # a first verdict: the crawl's scale
        page = make_page(body, url="http://club.test/")
        for link, score in zip(page.links, strategy.score_links(page, 0.3), strict=True):
            frontier.queued[link.key] = (score, {})
        before = dict(frontier.queued)
        jazz = sorted((key for key in frontier.queued if "/jazz/" in key), key=lambda key: -before[key][0])
        for key in jazz[:3]:  # three of the best directory's links leave for the downloader
            strategy.fetching(key)
            strategy.fetching(key)  # (a redirect reaches the downloader again: one hold)
            del frontier.queued[key]
        for _ in range(4):
            strategy._outcome()  # the next sibling re-score
        queued_jazz = jazz[3:]
        if in_flight:
            assert all(frontier.queued[key][0] < before[key][0] for key in queued_jazz)
            rock_best = max(score for key, (score, _) in frontier.queued.items() if "/rock/" in key)
            assert rock_best > max(frontier.queued[key][0] for key in queued_jazz)  # rock is next now
        else:
            assert all(frontier.queued[key][0] == before[key][0] for key in queued_jazz)
        for key in jazz[:3]:
            strategy._learn(key, 0.6)
        features = strategy.pending[queued_jazz[0]][0]
        estimates[in_flight] = strategy.learner.history.estimate(features.prior, features.cells)
        assert not strategy._held
    assert estimates[1.0] == pytest.approx(estimates[0.0])  # the holds are gone: the verdicts alone remain


def test_a_hold_lowers_or_raises_its_groups_and_its_release_restores_them() -> None:
    history = PathHistory(strength=1.0)
    history.observe(0.2, [7, 70], 0.3)
    history.observe(0.2, [8, 80], 0.1)
    before = history.estimate(0.2, [7, 71])
    for weight, moved in ((1.0, "down"), (-0.5, "up")):
        held = history.hold(0.2, [7, 70], weight)  # a sibling in flight
        during = history.estimate(0.2, [7, 71])[0]
        assert during < before[0] if moved == "down" else during > before[0]
        history.release(held)
        assert history.estimate(0.2, [7, 71]) == pytest.approx(before)
        assert not history.held
