"""The page-judge port: how relevant is a fetched page, and how sure is the
judge of its own calls.

A judge answers for one page at a time (or a batch) with a relevance in
[0, 1]; a page at or above its ``threshold`` is *called* relevant. Judges
that know what their scores mean (a calibrated classifier, a judge taught by
the user's labels) also say how many of their calls are right: its estimated
precision, with an interval, shown beside every count of "relevant" pages
(the progress line, the dashboard, the summary). Strategies read judges
only through this port (``relevance``), so a judge can be swapped for
another — a query, a taxonomy classifier, a model of example pages, the
user's labels — without a strategy knowing (docs/architecture.md,
"Three ports").
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from crawlproject.models.intervals import PRECISION_MARGIN, stated_interval, wilson

__all__ = ["CallTally", "JudgeContext", "PageJudge", "PrecisionEstimate", "wilson"]

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from scrapy.settings import BaseSettings

    from crawlproject.judges.calibration import Calibration
    from crawlproject.web.page import Page
    from crawlproject.web.text import TermAnalyzer


@dataclass(frozen=True)
class PrecisionEstimate:
    """A judge's estimate of the share of its relevant calls that are right."""

    value: float
    low: float
    high: float
    #: what the estimate rests on: "labels" (the user's, on pages it called
    #: relevant) or "calibration" (its own probabilities)
    basis: str
    calls: int  #: pages it called relevant so far

    def as_dict(self) -> dict[str, Any]:
        return {"value": round(self.value, 4), "low": round(self.low, 4), "high": round(self.high, 4),
                "basis": self.basis, "calls": self.calls}


class CallTally:
    """What a judge called relevant in this crawl, for its precision estimate:
    the calibrated probabilities of its relevant calls (when it has them) and
    the user's labels of pages it called relevant."""

    #: labelled relevant calls from which the labels alone make the estimate
    ENOUGH_LABELS = 5

    def __init__(self) -> None:
        self.calls = 0
        self.calibrated_calls = 0
        self.probability_sum = 0.0
        #: Σ p(1 − p) over the calibrated calls: the variance of the count of right calls
        self.variance_sum = 0.0
        self.labelled_calls = 0
        self.labelled_right = 0

    def record(self, called: bool, probability: float | None) -> None:
        if not called:
            return
        self.calls += 1
        if probability is not None:
            self.calibrated_calls += 1
            self.probability_sum += probability
            self.variance_sum += probability * (1.0 - probability)

    def recount(self, calls: Iterable[tuple[bool, float | None]]) -> None:
        """The calls made anew (the crawl's verdicts settled): the labels stay."""
        self.calls = self.calibrated_calls = 0
        self.probability_sum = self.variance_sum = 0.0
        for called, probability in calls:
            self.record(called, probability)

    def label(self, called: bool, relevant: bool) -> None:
        if called:
            self.labelled_calls += 1
            self.labelled_right += int(relevant)

    def estimate(self, margin: float = 0.0) -> PrecisionEstimate | None:
        """From the labels once there are enough, else from the calibrated
        probabilities (their mean over the calls is the expected precision;
        the interval: the count's own spread, 1.96 standard deviations,
        widened by *margin* for what the calibration gets wrong); None when
        the judge knows neither."""
        if self.labelled_calls >= self.ENOUGH_LABELS:
            low, high = wilson(self.labelled_right, self.labelled_calls)
            return PrecisionEstimate(self.labelled_right / self.labelled_calls, low, high, "labels", self.calls)
        if self.calibrated_calls:
            low, high = stated_interval(self.probability_sum, self.variance_sum, self.calibrated_calls, margin)
            return PrecisionEstimate(self.probability_sum / self.calibrated_calls, low, high, "calibration", self.calls)
        return None


@dataclass(frozen=True)
class JudgeContext:
    """What a judge class is built from (``FOCUS_JUDGE`` names it): the
    settings, the topic's query terms (empty when the topic names none) and
    the crawl's analyzer."""

    settings: BaseSettings
    query: Mapping[str, float]
    analyzer: TermAnalyzer


class PageJudge(ABC):
    """How relevant a fetched page is to the topic (the port strategies read).
    A judge of one's own is a subclass with :meth:`score`, named in
    ``FOCUS_JUDGE`` by its import path (docs/architecture.md, "Adding a judge")."""

    #: Short name for logs, the dashboard and reports.
    name: ClassVar[str]
    #: built from the topic's query terms: a crawl whose topic names none has no such judge
    reads_query: ClassVar[bool] = False
    #: Relevance at or above which the judge calls a page relevant.
    threshold: float = 0.5

    #: Fetched pages whose relevance the judge remembers (for a user's label).
    REMEMBERED = 100_000

    def __init__(self) -> None:
        self.tally = CallTally()
        self.recent: OrderedDict[str, float] = OrderedDict()
        #: what its scores mean on the crawl's own pages (crawlproject.judges.calibration):
        #: a query judge's mixture, a model's prior shift; None: they are what they say
        self.calibration: Calibration | None = None
        #: the user's word (canonical URL → relevant): an example page, a label;
        #: final — a page the user called irrelevant is never called relevant
        self.word: dict[str, bool] = {}

    @classmethod
    def from_settings(cls, context: JudgeContext) -> PageJudge:
        """The judge a crawl uses; a judge that reads the topic or a setting overrides it."""
        return cls()

    @abstractmethod
    def score(self, page: Page) -> float:
        """The relevance of *page* in [0, 1] (no bookkeeping)."""

    def probability(self, relevance: float) -> float | None:
        """Pr(relevant | this relevance) when the judge is calibrated, else None."""
        return self.calibration.probability(relevance) if self.calibration is not None else None

    def expected_relevant(self, relevance: float) -> float:
        """How likely a page of this *relevance* is relevant, as far as the
        judge knows: its calibrated probability; else, for a page it calls
        relevant, its estimated precision (1 before it has one); else 0."""
        probability = self.probability(relevance)
        if probability is not None:
            return probability
        if relevance < self.threshold:
            return 0.0
        estimate = self.precision()
        return estimate.value if estimate is not None else 1.0

    def calls(self, relevance: float) -> bool:
        """Whether the judge calls a page of this *relevance* relevant: as
        likely relevant as not, once its calibration knows; else at its threshold."""
        if self.calibration is not None:
            probability = self.calibration.probability(relevance)
            if probability is not None:
                return probability >= 0.5
        return relevance >= self.threshold

    def call(self, key: str, relevance: float) -> bool:
        """The call on the page *key*: the user's word on it, else :meth:`calls`."""
        said = self.word.get(key)
        return self.calls(relevance) if said is None else said

    def threshold_in_force(self) -> float | None:
        """The relevance from which the judge calls a page relevant now
        (its calibration's, else its fixed threshold). None: its
        calibration calls no relevance it has seen relevant."""
        return self.threshold if self.calibration is None else self.calibration.threshold()

    def relevance(self, page: Page) -> float:
        """The relevance of a page the crawl fetched: scored, and counted
        for the judge's precision estimate."""
        relevance = self.score(page)
        if self.calibration is not None:
            self.calibration.observe(relevance)
        self._count(page.key, relevance)
        return relevance

    def _count(self, key: str, relevance: float) -> None:
        """A fetched page's verdict: for the precision estimate, and for a later label."""
        self.tally.record(self.calls(relevance), self.probability(relevance))
        self.recent[key] = relevance
        self.recent.move_to_end(key)
        if len(self.recent) > self.REMEMBERED:
            self.recent.popitem(last=False)

    #: Whether the judge judges pages best several at once (:meth:`prepare`):
    #: the spider then gathers fetched pages in micro-batches for it.
    batches: bool = False

    def prepare(self, pages: Sequence[Page]) -> None:
        """Judge *pages* ahead, together (a classifier's batch); their
        :meth:`relevance` reads what this found. Nothing for most judges."""
        return None

    def prepare_failed(self, page: Page) -> None:
        """Preparing *page* failed: the judge calls it irrelevant rather than
        losing it (its links are followed last)."""
        return None

    def settle(self, relevances: Iterable[float]) -> bool:
        """The crawl is over. A judge calibrated on the crawl's own pages
        refits on all of them (*relevances*: every page met, earlier runs of
        a resumed crawl included), so a page met before its calibration knew
        much is called by what the whole crawl showed; its calls are counted
        anew for its precision (every judge's: the crawl's one count).
        Whether its calls may have changed: a judge whose relevances are
        what they say (a page's labels, a context graph's layer) keeps them."""
        relevances = list(relevances)
        if self.calibration is not None:
            self.calibration.settle(relevances)
        self.tally.recount((self.calls(r), self.probability(r)) for r in relevances)
        return self.calibration is not None

    def precision(self) -> PrecisionEstimate | None:
        """Its estimate of the share of its relevant calls that are right:
        from the user's labels, else from calibrated probabilities that
        deserve the word (a query judge's mixture does not: None, unknown)."""
        if self.calibration is not None and not self.calibration.states_precision \
                and self.tally.labelled_calls < self.tally.ENOUGH_LABELS:
            return None
        return self.tally.estimate(PRECISION_MARGIN)

    def label(self, key: str, relevant: bool) -> dict[str, Any]:
        """The user says the fetched page *key* is or is not relevant. A
        judge that learns takes it in; every judge counts it for its
        precision when it remembers its call."""
        relevance = self.recent.get(key)
        if relevance is not None:
            self.tally.label(self.calls(relevance), relevant)
        self.word[key] = relevant
        return {"learnt": False, "judge_said": None if relevance is None else round(relevance, 4)}

    def questions(self, count: int) -> list[dict[str, Any]]:
        """The fetched pages whose label would teach the judge most (active
        learning); a judge that cannot learn asks about the pages nearest its
        threshold, whose labels tell most about its precision."""
        nearest = sorted(self.recent.items(), key=lambda kv: abs(kv[1] - self.threshold))[:count]
        return [{"url": key, "relevance": round(value, 4)} for key, value in nearest]

    def describe(self) -> dict[str, Any]:
        """For a person (the dashboard): what the judge is and how sure it is."""
        estimate = self.precision()
        threshold = self.threshold_in_force()
        return {"judge": self.name, "threshold": threshold,
                "called_relevant": self.tally.calls,
                "precision": estimate.as_dict() if estimate is not None else None}
