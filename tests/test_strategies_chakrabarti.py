"""The focused crawler's strategy: soft and hard focus, the distiller, and
online learning that re-scores the frontier."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from scrapy import Request
from scrapy.utils.test import get_crawler

from crawlproject.config import SettingsError
from crawlproject.models.online import OnlineLearner
from crawlproject.models.taxonomy_classifier import TaxonomyClassifier
from crawlproject.policy.scope import HomeSites
from crawlproject.spiders import RandomSpider
from crawlproject.strategies.base import Topic
from crawlproject.strategies.chakrabarti import AWAY, ChakrabartiStrategy
from crawlproject.strategies.factory import Focus, build_focus
from crawlproject.strategies.ports import CrawlerFrontier
from crawlproject.web.meta import PARENT as PARENT_KEY
from crawlproject.web.meta import PROMOTED_BY as PROMOTED_KEY
from crawlproject.web.meta import SCORE as SCORE_KEY
from crawlproject.web.meta import SEED as SEED_KEY
from crawlproject.web.page import Link, Page
from crawlproject.web.text import TermAnalyzer
from tests.conftest import bound_to, judge_and_learn, open_scheduler

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

TRAINING = [
    ("homework lecture syllabus exam ithaca", "course/cornell"),
    ("homework lecture grading austin", "course/texas"),
    ("syllabus exam lecture austin", "course/texas"),
    ("resume hobbies advisor ithaca", "student/cornell"),
    ("resume thesis advisor austin", "student/texas"),
]


def model() -> TaxonomyClassifier:
    texts, categories = zip(*TRAINING, strict=True)
    return TaxonomyClassifier().fit(list(texts), list(categories))


def page(url: str, text: str, links: int = 3, **meta: object) -> Page:
    return Page(url, text, [Link(f"{url}{i}", "") for i in range(links)], meta=dict(meta))


def strategy(good: tuple[str, ...], hard: bool, reserve: bool = False) -> ChakrabartiStrategy:
    return ChakrabartiStrategy(Topic(good=good), TermAnalyzer(), model(), hard=hard, reserve=reserve)


def arrive(focused: ChakrabartiStrategy | Focus, fetched: Page) -> float:
    """The page fetched: its verdict by the focused crawler's own judge (its
    classifier: FOCUS_JUDGE=auto), learnt by the strategy."""
    relevance = focused.on_page(fetched) if isinstance(focused, Focus) else judge_and_learn(focused, fetched)
    assert relevance is not None
    return relevance


def built(crawler: Crawler, topic: Topic) -> ChakrabartiStrategy:
    """The focused crawler the factory builds from the crawler's settings."""
    focused = build_focus(crawler, topic, ChakrabartiStrategy).strategy
    assert isinstance(focused, ChakrabartiStrategy)
    return focused


def test_soft_focus_gives_every_link_the_page_relevance() -> None:
    soft = strategy(("course",), hard=False)
    course, student = page("http://c/", "homework lecture exam"), page("http://s/", "resume advisor thesis")
    r_course, r_student = arrive(soft, course), arrive(soft, student)
    assert r_course > 0.9 > 0.1 > r_student
    assert soft.score_links(course, r_course) == [r_course] * 3
    assert soft.score_links(student, r_student) == [r_student] * 3  # followed, at low priority


def test_hard_focus_expands_only_pages_whose_best_leaf_is_good_or_below_good() -> None:
    hard = strategy(("course",), hard=True)
    course, student = page("http://c/", "homework lecture exam"), page("http://s/", "resume advisor thesis")
    assert hard.score_links(course, arrive(hard, course)) == [arrive(hard, course)] * 3
    assert hard.score_links(student, arrive(hard, student)) == [None] * 3
    seed = page("http://seed/", "resume advisor thesis", **{SEED_KEY: True})
    assert None not in hard.score_links(seed, arrive(hard, seed))  # the user chose it
    # The best leaf must be good or below good: course/texas is not course/cornell.
    cornell_only = strategy(("course/cornell",), hard=True)
    texas = page("http://t/", "homework lecture austin austin grading")
    assert cornell_only.score_links(texas, arrive(cornell_only, texas)) == [None] * 3
    cornell = page("http://i/", "homework syllabus ithaca ithaca")
    assert None not in cornell_only.score_links(cornell, arrive(cornell_only, cornell))


def test_hard_focus_with_a_reserve_keeps_pruned_links_below_every_good_link() -> None:
    hard = strategy(("course",), hard=True, reserve=True)
    course, student = page("http://c/", "homework lecture exam"), page("http://s/", "resume advisor thesis")
    r_student = arrive(hard, student)
    reserved = hard.score_links(student, r_student)
    assert reserved == [pytest.approx(r_student - 1.0)] * 3
    assert max(reserved) < 0.0 <= min(hard.score_links(course, arrive(hard, course)))  # type: ignore[operator]


def test_a_site_bound_topic_gives_nothing_away_from_home() -> None:
    home = HomeSites("domain", ["http://www.cs.home.edu/"])
    soft = ChakrabartiStrategy(Topic(good=("course",)), TermAnalyzer(), model())
    soft_focus = bound_to(soft, home)
    links = [
        Link("http://www.cs.home.edu/c1", ""),
        Link("http://lab.home.edu/c2", ""),
        Link("http://www.far.edu/c3", ""),
    ]
    at_home = Page("http://www.cs.home.edu/", "homework lecture exam", links)
    away = Page("http://www.far.edu/", "homework lecture exam", links)
    r_home, r_away = arrive(soft, at_home), arrive(soft, away)
    assert r_home > 0.9 and r_away == 0.0  # the same words, away from home
    assert soft_focus.score_links(at_home, r_home) == [r_home, r_home, AWAY]
    assert soft_focus.score_links(away, r_away) == [0.0, 0.0, AWAY]
    hard = ChakrabartiStrategy(Topic(good=("course",)), TermAnalyzer(), model(), hard=True, reserve=True)
    reserved = bound_to(hard, home).score_links(
        away, arrive(hard, away)
    )  # never expanded: a course page of no interest
    assert reserved == [-1.0, -1.0, AWAY] and min(reserved[:2]) > AWAY


def test_batched_classification_equals_one_page_at_a_time() -> None:
    pages = [page(f"http://p{i}/", text) for i, (text, _) in enumerate(TRAINING)]
    batched = strategy(("course",), hard=False).classifier.classify(pages)
    single = [strategy(("course",), hard=False).classifier.classify([p])[0] for p in pages]
    assert [v.relevance for v in batched] == pytest.approx([v.relevance for v in single])
    assert [v.leaf for v in batched] == [v.leaf for v in single]


def test_model_and_good_categories_can_come_from_settings(tmp_path: Path) -> None:
    path = tmp_path / "model.npz"
    model().save(path)
    crawler = get_crawler(settings_dict={
        "FOCUS_MODEL": str(path), "FOCUS_GOOD": "student,course/texas", "FOCUS_FOCUSED_MODE": "hard",
        "FOCUS_DISTILL_EVERY": 50, "FOCUS_RETRAIN_EVERY": 20,
    })
    focused = built(crawler, Topic())
    assert [focused.model.taxonomy.paths[n] for n in focused.good] == ["student", "course/texas"]
    assert focused.hard and focused.distiller is not None and focused.learner is not None
    assert focused.distiller.every == 50 and focused.learner.every == 20
    arguments_win = built(crawler, Topic(model=str(path), good=("course",)))
    assert [arguments_win.model.taxonomy.paths[n] for n in arguments_win.good] == ["course"]


def test_bad_focused_settings_stop_at_start_up(tmp_path: Path) -> None:
    path = tmp_path / "model.npz"
    model().save(path)
    for settings, message in [
        ({"FOCUS_FOCUSED_MODE": "medium"}, "FOCUS_FOCUSED_MODE must be one of hard, learn, soft"),
        ({"FOCUS_RETRAIN_CONFIDENCE": 2}, "FOCUS_RETRAIN_CONFIDENCE must be from 0.0 to 1.0"),
        ({"FOCUS_DISTILL_EVERY": -1}, "FOCUS_DISTILL_EVERY must be ≥ 0"),
    ]:
        crawler = get_crawler(settings_dict={"FOCUS_MODEL": str(path), "FOCUS_GOOD": "course", **settings})
        with pytest.raises(SettingsError, match=message):
            built(crawler, Topic())


def test_unknown_good_category_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="'courses' is not in the taxonomy; its top categories are: course, student"):
        strategy(("courses",), hard=False)


# -- online learning re-scores the frontier -------------------------------------------

def learning_crawl(home: HomeSites | None = None) -> tuple[Any, OnlineLearner, Focus]:
    """A scheduler, and a focused crawler that learns every 3 pages and re-scores it."""
    crawler, scheduler, _ = open_scheduler(RandomSpider, seeds="http://seed/")
    taxonomy_model = TaxonomyClassifier().fit(
        ["homework lecture zeta", "syllabus homework", "resume hobbies zeta", "advisor resume"],
        ["course", "course", "student", "student"],
    )
    learner = OnlineLearner(taxonomy_model, every=3, confidence=0.9)
    focused = ChakrabartiStrategy(
        Topic(good=("course",)),
        TermAnalyzer(),
        taxonomy_model,
        learner=learner,
        frontier=CrawlerFrontier(crawler, scheduler),
    )
    return scheduler, learner, Focus(focused.classifier, focused, home)


def test_retraining_rescores_the_queued_urls_and_changes_their_order() -> None:
    scheduler, learner, focused = learning_crawl()
    ambiguous = page("http://p1/", "zeta zeta zeta")  # zeta: as much course as student
    leaning = page("http://p2/", "homework homework resume")
    for parent in (ambiguous, leaning):
        relevance = arrive(focused, parent)
        for link, score in zip(parent.links, focused.score_links(parent, relevance), strict=True):
            scheduler.enqueue_request(Request(link.url, meta={SCORE_KEY: score, PARENT_KEY: parent.url}))
        assert focused.after_page(parent, relevance) == []
    # Before learning, p2's links come first.
    assert arrive(focused, leaning) > arrive(focused, ambiguous)

    # The crawl meets confident course pages full of "zeta"; the model learns
    # from them and every queued URL gets its parent's new relevance.
    teacher = page("http://p3/", "zeta zeta zeta zeta homework homework syllabus lecture", links=0)
    focused.after_page(teacher, arrive(focused, teacher))
    assert learner.rounds == 1 and learner.learned >= 1
    assert scheduler.stats.get_value("frontier/rescored") == 1
    order = [scheduler.next_request().url for _ in range(6)]  # type: ignore[union-attr]
    assert [url[:10] for url in order] == ["http://p1/"] * 3 + ["http://p2/"] * 3


def test_learning_raises_nothing_away_from_home() -> None:
    scheduler, _, focused = learning_crawl(HomeSites("domain", ["www.home.edu"]))
    at_home = Page(
        "http://www.home.edu/p1", "zeta zeta zeta", [Link("http://www.home.edu/a", ""), Link("http://x.edu/b", "")]
    )
    away = Page("http://y.edu/p2", "zeta zeta zeta", [Link("http://www.home.edu/back", "")])  # a link back home
    for parent in (at_home, away):
        relevance = arrive(focused, parent)
        for link, score in zip(parent.links, focused.score_links(parent, relevance), strict=True):
            scheduler.enqueue_request(Request(link.url, meta={SCORE_KEY: score, PARENT_KEY: parent.url}))
        focused.after_page(parent, relevance)
    teacher = Page("http://www.home.edu/t", "zeta zeta zeta zeta homework homework syllabus lecture", [])
    focused.after_page(teacher, arrive(focused, teacher))
    assert scheduler.stats.get_value("frontier/rescored") == 1  # the queue was re-scored …
    popped = [scheduler.next_request() for _ in range(3)]
    # … but the away page's link stays at 0, the link off home at AWAY
    assert [(r.url, r.meta[SCORE_KEY]) for r in popped][1:] == [  # type: ignore[union-attr]
        ("http://www.home.edu/back", 0.0), ("http://x.edu/b", AWAY),
    ]
    assert popped[0].meta[SCORE_KEY] > 0.5  # type: ignore[union-attr]


def test_rescoring_keeps_seeds_and_promoted_urls_in_place() -> None:
    crawler, scheduler, _ = open_scheduler(RandomSpider, seeds="http://seed/")
    taxonomy_model = model()
    learner = OnlineLearner(taxonomy_model, every=1, confidence=0.0)
    focused = ChakrabartiStrategy(
        Topic(good=("course",)),
        TermAnalyzer(),
        taxonomy_model,
        learner=learner,
        frontier=CrawlerFrontier(crawler, scheduler),
    )
    scheduler.enqueue_request(Request("http://promoted/", meta={SCORE_KEY: 1.5, PROMOTED_KEY: "http://hub/"}))
    scheduler.enqueue_request(Request("http://plain/", meta={SCORE_KEY: 0.7}))
    parent = page("http://p/", "resume advisor", links=0)
    focused.after_page(parent, arrive(focused, parent))
    assert learner.rounds == 1
    first, second = scheduler.next_request(), scheduler.next_request()
    assert first is not None and second is not None
    assert (first.url, first.meta[SCORE_KEY]) == ("http://promoted/", 1.5)
    assert (second.url, second.meta[SCORE_KEY]) == ("http://plain/", 0.7)


def test_online_learning_classifies_each_page_a_bounded_number_of_times() -> None:
    crawler, scheduler, _ = open_scheduler(RandomSpider, seeds="http://seed/")
    taxonomy_model = model()
    classified_rows = []
    proba = taxonomy_model.proba

    def counting_proba(features: object) -> object:
        classified_rows.append(features.shape[0])  # type: ignore[attr-defined]
        return proba(features)

    taxonomy_model.proba = counting_proba  # type: ignore[method-assign]
    learner = OnlineLearner(taxonomy_model, every=5, confidence=0.0)
    focused = ChakrabartiStrategy(
        Topic(good=("course",)),
        TermAnalyzer(),
        taxonomy_model,
        learner=learner,
        frontier=CrawlerFrontier(crawler, scheduler),
    )
    texts = ["homework lecture exam", "resume advisor thesis", "syllabus austin", "hobbies ithaca"]
    pages = 400
    for i in range(pages):
        crawled = page(f"http://p{i}/", texts[i % 4], links=2)
        focused.after_page(crawled, arrive(focused, crawled))
    assert learner.rounds == pages // 5  # it still learns every 5 pages
    # Each page is classified when fetched; re-classifying for re-scores is
    # amortised (the old way re-classified every crawled page every round:
    # 400 + 5 + 10 + … + 400 = 16,400 rows).
    assert sum(classified_rows) <= 4 * pages, sum(classified_rows)
    assert scheduler.stats.get_value("frontier/rescored", 0) >= 3


def test_what_the_crawl_learned_survives_a_restart_with_the_same_jobdir(tmp_path: Path) -> None:
    path = tmp_path / "model.npz"
    model().save(path)
    settings = {
        "FOCUS_MODEL": str(path), "FOCUS_GOOD": "course", "JOBDIR": str(tmp_path / "job"),
        "FOCUS_RETRAIN_EVERY": 4, "FOCUS_RETRAIN_CONFIDENCE": 0.0, "FOCUS_DISTILL_EVERY": 3,
    }
    first = built(get_crawler(settings_dict=settings), Topic())
    texts = ["homework lecture zeta", "resume zeta thesis", "syllabus zeta exam", "advisor zeta"]
    for i in range(12):
        crawled = Page(f"http://h{i % 5}.edu/{i}", texts[i % 4],
                       [Link(f"http://h{(i + 1) % 5}.edu/{i + 1}", ""), Link(f"http://x{i}.edu/", "")])
        first.after_page(crawled, arrive(first, crawled))
    assert first.learner is not None and first.learner.learned > 0 and first.distiller is not None
    probe = ["zeta zeta"]
    before = first.model.classify_texts(probe)
    first.save_state()  # what spider_closed does; a kill keeps the last save
    second = built(get_crawler(settings_dict=settings), Topic())
    np.testing.assert_allclose(second.model.classify_texts(probe), before)
    assert second.model.classify_texts(probe)[0, 1] != model().classify_texts(probe)[0, 1]  # it did learn
    assert second.learner is not None and second.learner.urls == first.learner.urls
    assert second.learner.learned == first.learner.learned and len(second.learner.rows) == 12
    assert second.distiller is not None and second.distiller.hubs() == first.distiller.hubs()
    assert second.distiller.runs == first.distiller.runs
