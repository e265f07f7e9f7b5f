"""The three scoring ports, each alone: a page judge, a link
scorer given a judge, a strategy against a frontier port with no crawl
behind it; the topic-from-examples model's negatives and report; and the
one spider of every strategy crawling as the aliases do."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
from scipy.special import expit
from scrapy.http import HtmlResponse, Request
from scrapy.settings import Settings

from crawlproject import config, config_check
from crawlproject.judges import judge_from_settings
from crawlproject.judges.base import CallTally, PageJudge
from crawlproject.judges.classifier import ExamplesJudge
from crawlproject.judges.learning import LabelTaughtJudge
from crawlproject.judges.query import QueryJudge, TermRarity, TfQueryJudge
from crawlproject.models.modelfile import load_model, save_model
from crawlproject.models.topic_page import TopicPageModel, reliable_negatives
from crawlproject.strategies.base import Topic
from crawlproject.strategies.baselines import PathOracleStrategy
from crawlproject.strategies.best_first import BestFirstStrategy
from crawlproject.strategies.factory import Focus
from crawlproject.strategies.infospiders import InfoSpidersStrategy
from crawlproject.strategies.link_learner import LinkLearnerStrategy
from crawlproject.strategies.ports import DetachedFrontier
from crawlproject.web.page import Page
from crawlproject.web.text import TermAnalyzer
from tests.conftest import run_crawl

ANALYZER = TermAnalyzer(stem=True)
CORNELL = "http://www.cs.cornell.edu/"


def page(url: str, body: str, links: int = 2, meta: dict[str, Any] | None = None) -> Page:
    anchors = "".join(f"<a href='{url}l{i}'>link {i}</a>" for i in range(links))
    request = Request(url, meta=meta or {})
    response = HtmlResponse(url, body=f"<html><body>{body} {anchors}</body></html>".encode(), request=request)
    return Page.from_response(response, meta=response.meta)


class FixedJudge(PageJudge):
    """A judge whose verdicts the test sets."""

    name: ClassVar[str] = "fixed"

    def __init__(self, verdicts: dict[str, float]):
        super().__init__()
        self.verdicts = verdicts

    def score(self, page: Page) -> float:
        return self.verdicts[page.url]


# -- the page judge alone -----------------------------------------------------------------

def test_the_query_judge_stops_counting_a_word_every_page_of_the_crawl_has() -> None:
    query = ANALYZER.vector("postgresql select statement")
    rarity = TermRarity(stem=True)
    judge = QueryJudge(query, ANALYZER, rarity)
    site = [page(f"http://docs/{i}", f"postgresql manual chapter {i} postgresql documentation") for i in range(60)]
    target = page("http://docs/select", "select statement syntax for rows")
    decoy = page("http://docs/about", "postgresql postgresql postgresql about the postgresql project")
    before = judge.score(decoy)
    for seen in site:
        judge.relevance(seen)  # the crawl meets the site: "postgresql" is on every page
    assert judge.score(decoy) < before  # its one shared word now says little
    assert judge.score(target) > judge.score(decoy)
    # docs/methods.md §2's TF cosine cannot tell: the decoy repeats a query word, the target has two once
    tf = TfQueryJudge(query, ANALYZER)
    assert tf.score(decoy) > tf.score(target)


def test_a_judge_knows_its_precision_from_the_labels_of_its_calls() -> None:
    tally = CallTally()
    assert tally.estimate() is None  # an uncalibrated judge, no labels: unknown
    for called_right in (True, True, True, False, True, True):
        tally.record(True, None)
        tally.label(True, called_right)
    estimate = tally.estimate()
    assert estimate is not None and estimate.basis == "labels"
    assert estimate.value == pytest.approx(5 / 6) and estimate.low < 5 / 6 < estimate.high


def test_labels_teach_the_judge_and_it_asks_where_it_is_least_sure() -> None:
    base = FixedJudge({})
    judge = LabelTaughtJudge(base, ANALYZER)
    pages = [page(f"http://h/{i}", ("jazz concert saxophone" if i % 2 else "tax form filing") + f" item{i}")
             for i in range(20)]
    for p in pages:
        base.verdicts[p.url] = 0.3  # the wrapped judge cannot tell them apart
        assert judge.relevance(p) == 0.3
    first = judge.questions(4)
    assert len(first) == 4 and {q["url"] for q in first} <= {p.url for p in pages}
    assert judge.label(pages[1].key, True)["learnt"] is False  # one kind of label only
    assert judge.label(pages[0].key, False)["learnt"] is True
    judge.label(pages[3].key, True)
    judge.label(pages[2].key, False)
    jazz, tax = judge.current([pages[5].key, pages[4].key])
    assert jazz is not None and tax is not None and jazz > 0.5 > tax
    asked = judge.questions(3)
    assert not {q["url"] for q in asked} & {pages[i].key for i in range(4)}  # never a page labelled
    assert judge.describe()["labels"] == 4


def test_the_judge_follows_the_settings_and_names_what_is_missing() -> None:
    settings = Settings({"FOCUS_JUDGE": "query", "FOCUS_JUDGE_LABELS": False})
    assert isinstance(judge_from_settings(settings, "jazz", "", (), ANALYZER, "x"), QueryJudge)
    settings = Settings({"FOCUS_JUDGE_LABELS": True})
    wrapped = judge_from_settings(settings, "jazz", "", (), ANALYZER, "x")
    assert isinstance(wrapped, LabelTaughtJudge) and isinstance(wrapped.base, TfQueryJudge)
    with pytest.raises(config.SettingsError, match="the best-first crawler needs a topic"):
        judge_from_settings(Settings(), "the and of", "", (), ANALYZER, "the best-first crawler")


# -- the link scorer, given a judge --------------------------------------------------------

def test_best_first_scores_every_link_with_its_judges_relevance() -> None:
    p = page("http://h/", "anything", links=3)
    focus = Focus(FixedJudge({"http://h/": 0.42}), BestFirstStrategy(Topic(), ANALYZER))
    relevance = focus.on_page(p)
    assert relevance == 0.42 and list(focus.strategy.score_links(p, relevance)) == [0.42] * 3


# -- a strategy against a frontier port -----------------------------------------------------

def test_the_link_learner_rescores_through_the_port_it_was_given() -> None:
    frontier = DetachedFrontier()
    judge = FixedJudge({})
    learner = LinkLearnerStrategy(Topic("jazz"), ANALYZER, rescore_every=2, frontier=frontier)
    focus = Focus(judge, learner)
    root = page("http://h/", "jazz", links=4)
    judge.verdicts[root.url] = 1.0
    scores = learner.score_links(root, focus.on_page(root))
    frontier.queued.update({link.key: (score, {}) for link, score in zip(root.links, scores, strict=True)})
    for i, link in enumerate(root.links[:3]):
        child = page(link.url, "jazz" if i else "nothing", links=0)
        judge.verdicts[child.url] = 1.0 if i else 0.0
        focus.on_page(child)
        learner.after_page(child, judge.verdicts[child.url])
    assert frontier.rescores and frontier.stats["focus/learner/examples"] == 3
    assert frontier.rescores[-1] is not None and root.links[3].key in frontier.rescores[-1]  # the queued one


def test_infospiders_and_the_path_oracle_reach_the_queue_only_through_the_port() -> None:
    frontier = DetachedFrontier({"http://h/x": (1.0, {"focus_agent": 0}), "http://h/y": (1.0, {"focus_agent": 1})})
    spiders = InfoSpidersStrategy(Topic("jazz"), ANALYZER, agents=2, seed=1, frontier=frontier)
    spiders._bury(0)
    assert frontier.queued["http://h/x"][0] < 1.0 == frontier.queued["http://h/y"][0]
    oracle_port = DetachedFrontier({"http://a/": (0.0, None)})
    oracle = PathOracleStrategy(Topic("x"), ANALYZER, {"http://t/"}, {"http://t/": ["http://a/"], "http://a/": []},
                                frontier=oracle_port)
    oracle.page_arrived(page("http://t/", "found", links=0), 1.0)  # the target is fetched: distances change
    oracle.score_links(page("http://t/", "found", links=0), 1.0)
    assert oracle_port.rescores == [None] and oracle_port.queued["http://a/"][0] < -1000


# -- a topic from examples: negatives and report -----------------------------------------------

def test_the_examples_model_takes_negatives_from_the_pages_near_the_seeds_and_estimates_its_precision() -> None:
    rng = np.random.default_rng(3)
    jazz = ["jazz", "saxophone", "trumpet", "swing", "bebop", "concert", "quartet", "improvisation"]
    tax = ["tax", "form", "income", "filing", "deduction", "refund", "audit", "return"]
    shared = ["page", "home", "news", "contact", "about"]

    def text(words: list[str]) -> str:
        return " ".join(rng.choice(words, 12).tolist() + rng.choice(shared, 6).tolist())

    examples = [text(jazz) for _ in range(10)]
    near = [text(jazz) for _ in range(20)] + [text(tax) for _ in range(80)]  # a fifth relevant, as a crawl meets
    model = TopicPageModel().fit(examples, [], near)
    report = model.report
    negatives = reliable_negatives(model.features(examples), model.features(near))
    assert report["reliable_negatives"] == len(negatives)
    assert (negatives >= 20).sum() >= 72 and (negatives < 20).sum() <= 2  # the pages unlike the examples
    estimate = report["on_unlabelled"]
    assert 0.1 <= estimate["relevant_share"] <= 0.35  # about the fifth that is relevant
    relevance = model.relevance([text(jazz) for _ in range(20)] + [text(tax) for _ in range(20)])
    called = relevance >= 0.5
    measured = called[:20].sum() / max(called.sum(), 1)
    # the report says what the crawl will see: an interval that holds it
    assert estimate["precision_low"] <= measured <= estimate["precision_high"]
    assert called[:20].mean() >= 0.7 and called[20:].mean() <= 0.1
    # The dashboard shows a precision for a crawl judged by the model, as
    # docs/dashboard.md says: it said "precision unknown until you label"
    # (the labels' judge wrapping it kept its own, empty, tally); now
    # it is told by its examples among the crawl's own pages, not the training's.
    judge = LabelTaughtJudge(ExamplesJudge(model), ANALYZER)
    for i, page_text in enumerate([text(jazz) for _ in range(5)] + [text(tax) for _ in range(5)]):
        judge.relevance(Page(f"http://h/{i}", page_text, []))
    shown = judge.describe()["precision"]
    assert shown is not None and shown["basis"] == "examples" and shown["calls"] == 5
    assert shown["low"] <= 1.0 <= shown["high"] and shown["low"] <= shown["value"]  # its 5 calls are right


@pytest.mark.parametrize("seed", [5, 6])
def test_the_examples_model_reports_the_share_and_recall_it_will_see_where_relevant_pages_are_rare(seed: int) -> None:
    # Where few of the pages near the seeds are relevant and the examples are varied (each
    # shares few words with another), Elkan & Noto's c (how well held-out examples score) made the
    # report's share of relevant pages 2-3 times the truth and its recall a third of the measured.
    rng = np.random.default_rng(seed)
    topic, other = [f"jazz{i}" for i in range(80)], [f"word{i}" for i in range(400)]
    shared = ["page", "home", "news", "contact", "about", "music", "band"]

    def relevant() -> str:
        return " ".join(
            rng.choice(topic, 10).tolist() + rng.choice(shared, 6).tolist() + rng.choice(other, 10).tolist()
        )

    def irrelevant() -> str:
        return " ".join(rng.choice(other, 20).tolist() + rng.choice(shared, 6).tolist())

    near = [relevant() for _ in range(4)] + [irrelevant() for _ in range(196)]  # 2 % relevant
    model = TopicPageModel().fit([relevant() for _ in range(10)], [], near)
    estimate = model.report["on_unlabelled"]
    assert estimate["relevant_share"] == pytest.approx(4 / 200, abs=0.01)
    called = model.relevance([relevant() for _ in range(20)] + [irrelevant() for _ in range(380)]) >= 0.5
    assert abs(called[:20].mean() - estimate["recall"]) <= 0.2  # the recall a crawl will see
    assert called[20:].sum() == 0 and estimate["precision_low"] <= 1.0 <= estimate["precision_high"]


def test_a_topic_model_saved_before_judges_as_it_was_trained(tmp_path: Path) -> None:
    # models saved with Elkan & Noto's calibration (no "calibration" in the file) keep it
    rng = np.random.default_rng(2)
    words, other = ["jazz", "swing", "bebop", "quartet"], ["tax", "form", "refund", "audit"]
    model = TopicPageModel().fit([" ".join(rng.choice(words, 8)) for _ in range(10)], [],
                                 [" ".join(rng.choice(other, 8)) for _ in range(40)])
    model.calibration, model.c = "elkan-noto", 0.5
    model.save(tmp_path / "old.npz")
    meta, arrays = load_model(tmp_path / "old.npz", "topic-page", "")
    meta.pop("calibration")
    save_model(tmp_path / "old.npz", "topic-page", meta, arrays)
    loaded = TopicPageModel.load(tmp_path / "old.npz")
    assert loaded.calibration == "elkan-noto"
    scores = np.array([-2.0, 0.0, 2.0])
    assert np.allclose(loaded._probability(scores), np.clip(expit(model.slope * scores + model.offset) / 0.5, 0, 1))


def test_reliable_negatives_are_the_pages_less_like_the_examples_than_any_example() -> None:
    from scipy.sparse import csr_matrix

    examples = csr_matrix(np.array([[1.0, 0.1, 0.0], [0.9, 0.2, 0.0], [1.0, 0.0, 0.1]]))
    near = csr_matrix(np.array([[1.0, 0.1, 0.0], [0.0, 0.0, 1.0], [0.1, 0.0, 1.0]]))
    assert reliable_negatives(examples, near).tolist() == [1, 2]


def test_the_calibration_divides_by_the_labelled_share_of_the_relevant_pages() -> None:
    model = TopicPageModel()
    # held-out examples score high, the unlabelled pages in two groups: a third like the examples
    positive = np.array([2.0, 2.1, 1.9, 2.2, 1.8, 2.0])
    unlabelled = np.r_[np.full(10, 2.0), np.full(20, -2.0)]
    model.calibrate(positive, unlabelled)
    like, unlike = model._probability(np.array([2.0, -2.0]))
    assert like > 0.9 and unlike < 0.05  # Pr(labelled | x) / c: the pages like the examples are relevant
    expected = model.expectations(unlabelled)
    assert expected.called == pytest.approx(1 / 3) and expected.relevant_share == pytest.approx(1 / 3, abs=0.05)


# -- the one spider of every strategy ---------------------------------------------------------

def test_the_renamed_focus_mode_setting_still_works_with_a_warning() -> None:
    settings = Settings({"FOCUS_FOCUS_MODE": "hard"})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        config_check.check_settings(settings)
    assert any("FOCUS_FOCUSED_MODE" in str(w.message) for w in caught)
    assert config.get_choice(settings, "FOCUS_FOCUSED_MODE") == "hard"


@pytest.mark.parametrize(("alias", "strategy"), [("bestfirst", "best-first"), ("sharksearch", "shark-search"),
                                                 ("linklearner", "link-learner")])
def test_the_focus_spider_crawls_as_the_alias_of_each_strategy(
    webkb_replay: Any, tmp_path: Any, alias: str, strategy: str,
) -> None:
    settings = {"FOCUS_REPEATABLE": True, "CLOSESPIDER_ITEMCOUNT": 40}
    by_alias = run_crawl(alias, tmp_path / "alias", [CORNELL], webkb_replay.proxy_url, "course syllabus", settings)
    by_name = run_crawl("focus", tmp_path / "focus", [CORNELL], webkb_replay.proxy_url, "course syllabus", settings,
                        extra_args=["-a", f"strategy={strategy}"])
    assert by_alias.returncode == 0 == by_name.returncode, by_name.log[-2000:]
    assert len(by_alias.history) >= 30
    assert [r["url"] for r in by_alias.history] == [r["url"] for r in by_name.history]
    assert [r["relevance"] for r in by_alias.history] == [r["relevance"] for r in by_name.history]


def test_before_any_label_the_judge_asks_from_its_verdicts_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Until a label teaches it, the judge's questions (shown on the
    dashboard) are pages ranked high and in the middle by the wrapped
    judge: nothing to vectorize, scikit-learn not imported."""
    base = FixedJudge({})
    judge = LabelTaughtJudge(base, ANALYZER)
    for i in range(10):
        p = page(f"http://h/{i}", f"text {i}")
        base.verdicts[p.url] = i / 10
        judge.relevance(p)
    monkeypatch.setattr(LabelTaughtJudge, "vectorizer", property(lambda self: pytest.fail("vectorized")))
    asked = judge.questions(4)
    assert [(q["url"], q["why"]) for q in asked] == [
        ("http://h/9", "ranked high"), ("http://h/4", "ranked in the middle"),
        ("http://h/8", "ranked high"), ("http://h/3", "ranked in the middle"),
    ]


def test_a_model_file_s_judge_follows_the_format_the_file_names(tmp_path: Path) -> None:
    from crawlproject.config import SettingsError
    from crawlproject.judges import model_judge
    from crawlproject.models.modelfile import model_format

    rng = np.random.default_rng(3)
    words, other = ["jazz", "swing", "bebop", "quartet"], ["tax", "form", "refund", "audit"]
    TopicPageModel().fit([" ".join(rng.choice(words, 8)) for _ in range(10)], [],
                         [" ".join(rng.choice(other, 8)) for _ in range(40)]).save(tmp_path / "topic.npz")
    (tmp_path / "notes.txt").write_text("not a model")
    assert model_format(tmp_path / "topic.npz") == "topic-page"
    assert model_format(tmp_path / "notes.txt") is None and model_format(tmp_path / "missing.npz") is None
    assert isinstance(model_judge(str(tmp_path / "topic.npz"), (), "best-first"), ExamplesJudge)
    with pytest.raises(SettingsError, match="is not a crawlproject model file"):
        model_judge(str(tmp_path / "notes.txt"), (), "best-first")  # said by the loader, one line
