"""Verdicts a user can check (docs/strategies.md, "Your answers"): a few
answers from the user re-judge a crawl's collection and measure its
precision; the user's word is final.

Ten example pages cannot tell a judge its own precision on a web it has not
seen; a user's answers can. The crawl asks two kinds of question:

* **sample** — a page drawn uniformly from those the collection calls
  relevant and nobody answered: what the answers say of them is an unbiased
  sample of the calls, and the precision stated is that sample's, with
  Wilson's interval, labelled as measured on so many pages. A sample answer
  never teaches the judge (it would stop being a fair sample of its calls).
* **teach** — the page the judge is least sure of (its probability nearest
  ½; before it has learnt anything, the pages its relevance ranks highest
  and those around its threshold, in turn, so the first answers hold both
  kinds): what moves the judge most (uncertainty sampling, Lewis & Gale
  1994).

The answers that teach (and the pages the user gave: a labels file, the
dashboard) fit a logistic regression over a page's terms (hashed, log
counts, rows L2-normalised) and the crawl judge's relevance (one column,
worth a whole row of terms), as the judge a running crawl's labels teach
(crawlproject.judges.learning); each page is then called by it. A page the
user answered is what the user said, whatever any judge thinks.

The collection's precision is then the answered pages' (known) and the
model's calls' (measured), in proportion: (Y + K) / (Y + M), Y the pages
the user said are relevant, M the unanswered pages called relevant, K how
many of those are right — the sample's share of right calls among the
sampled ones the model still calls relevant (judged without their own
answer), and its beta-binomial predictive interval. An interval wider than
``UNKNOWN_WIDTH`` says "unknown", and how many sample answers would make it
narrower.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from crawlproject.models.intervals import wilson

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from sklearn.linear_model import LogisticRegression

    from crawlproject.web.text import TermAnalyzer

__all__ = ["Answer", "AnswerBook", "JudgedPage", "PrecisionStatement", "Rejudge", "answers_needed", "give_answers"]

#: An interval wider than this says nothing a user can act on: "unknown".
UNKNOWN_WIDTH = 0.5
#: The crawl judge's relevance beside a page's terms (a unit-norm row).
RELEVANCE_WEIGHT = 1.0
KINDS = ("sample", "teach", "given")
ANSWERS_FILE = "answers.jsonl"


@dataclass(frozen=True)
class Answer:
    url: str  #: the page's canonical URL
    relevant: bool
    #: "sample" (drawn from the relevant calls: measures precision), "teach"
    #: (asked to teach the judge), "given" (the user's own: a labels file, the dashboard)
    kind: str = "given"


class AnswerBook:
    """The user's answers on one crawl: ``answers.jsonl`` in its folder, one
    line each, the last answer on a page the one that counts."""

    def __init__(self, folder: Path):
        self.path = Path(folder) / ANSWERS_FILE
        self.answers: dict[str, Answer] = {}
        if self.path.is_file():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    data = json.loads(line)
                    answer = Answer(str(data["url"]), bool(data["relevant"]), str(data.get("kind", "given")))
                except (ValueError, KeyError, TypeError):
                    continue  # a torn last line: the answer is asked again
                self._keep(answer)

    def _keep(self, answer: Answer) -> None:
        earlier = self.answers.get(answer.url)
        if earlier is not None and earlier.kind == "sample" and answer.kind != "sample":
            # drawn fairly once, it stays in the fair sample, with the user's latest word
            answer = Answer(answer.url, answer.relevant, "sample")
        self.answers[answer.url] = answer

    def add(self, answer: Answer) -> None:
        self._keep(answer)
        record = {"url": answer.url, "relevant": answer.relevant, "kind": answer.kind,
                  "at": datetime.now(UTC).isoformat(timespec="seconds")}
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")
            out.flush()
            os.fsync(out.fileno())

    def word(self) -> dict[str, bool]:
        """The user's word on each page answered."""
        return {url: answer.relevant for url, answer in self.answers.items()}

    def of_kind(self, *kinds: str) -> list[Answer]:
        return [answer for answer in self.answers.values() if answer.kind in kinds]


@dataclass
class JudgedPage:
    url: str  #: canonical
    relevance: float  #: the crawl judge's
    called: bool  #: the crawl judge's final call
    text: str = ""
    title: str = ""


def answers_needed(width: float = UNKNOWN_WIDTH, share: float = 0.5) -> int:
    """The sample answers whose Wilson interval is at most *width* wide
    around *share* (½: the widest).

    >>> answers_needed(), answers_needed(0.5, 0.9)
    (12, 4)
    """
    for trials in range(1, 10_000):
        low, high = wilson(round(share * trials), trials)
        if high - low <= width:
            return trials
    return 10_000


def predicted_right(calls: int, right: int, wrong: int, level: float = 0.95) -> tuple[float, float]:
    """How many of *calls* unanswered relevant calls are right, at *level*:
    the beta-binomial predictive interval of a share seen *right* and *wrong*
    times in a fair sample (Jeffreys' prior) — with few calls left the count
    itself varies, not only the share.

    >>> predicted_right(1, 4, 0), predicted_right(100, 10, 0)[0] > 70
    ((0.0, 1.0), True)
    """
    if calls <= 0:
        return 0.0, 0.0
    from scipy.stats import betabinom

    predictive = betabinom(calls, right + 0.5, wrong + 0.5)
    tail = (1 - level) / 2
    return float(predictive.ppf(tail)), float(predictive.ppf(1 - tail))


@dataclass(frozen=True)
class PrecisionStatement:
    """The precision a crawl states of its relevant collection."""

    value: float | None  #: None: unknown
    low: float
    high: float
    measured_on: int  #: sample answers it rests on (0: the judge's own estimate)
    needed: int = 0  #: more sample answers that would make it known (0: it is)

    @property
    def known(self) -> bool:
        return self.value is not None and self.high - self.low <= UNKNOWN_WIDTH

    def __str__(self) -> str:
        if not self.known:
            return f"unknown — answer {self.needed} {'page' if self.needed == 1 else 'pages'} to know (scrapy label)"
        assert self.value is not None
        basis = f"measured on {self.measured_on} of your answers" if self.measured_on else "the judge's own estimate"
        return f"{self.value:.0%} ({self.low:.0%}–{self.high:.0%}), {basis}"

    def as_dict(self) -> dict[str, Any]:
        return {"value": None if self.value is None else round(self.value, 4), "low": round(self.low, 4),
                "high": round(self.high, 4), "measured_on": self.measured_on, "needed": self.needed,
                "known": self.known, "said": str(self)}


class Rejudge:
    """A crawl's pages judged again with the user's answers."""

    def __init__(self, pages: Sequence[JudgedPage], book: AnswerBook, analyzer: TermAnalyzer,
                 judge_estimate: tuple[float, float, float] | None = None):
        self.pages = {page.url: page for page in pages}
        self.book = book
        self.analyzer = analyzer
        #: the crawl judge's own estimate of its precision (value, low, high), for before any sample answer
        self.judge_estimate = judge_estimate
        self.model: LogisticRegression | None = None
        self._probability: dict[str, float] = {}
        self.fit()

    # -- the judge the answers teach ---------------------------------------------------

    def fit(self) -> None:
        """Fit on the answers that teach (sample answers never do)."""
        teaching = [answer for answer in self.book.of_kind("teach", "given") if answer.url in self.pages]
        if len({answer.relevant for answer in teaching}) < 2:
            self.model, self._probability = None, {}
            return
        from sklearn.linear_model import LogisticRegression

        rows = self._features([self.pages[answer.url] for answer in teaching])
        model = LogisticRegression(C=1.0, max_iter=1000, class_weight="balanced")
        model.fit(rows, np.array([answer.relevant for answer in teaching]))
        self.model = model
        urls = list(self.pages)
        found = model.predict_proba(self._features([self.pages[url] for url in urls]))[:, 1]
        self._probability = dict(zip(urls, found.tolist(), strict=True))

    def _features(self, pages: list[JudgedPage]) -> Any:
        from scipy.sparse import csr_matrix, hstack
        from sklearn.feature_extraction.text import HashingVectorizer
        from sklearn.preprocessing import normalize

        vectorizer = HashingVectorizer(analyzer=self.analyzer.terms, n_features=2**18, alternate_sign=False,
                                       norm=None, dtype=np.float32)
        text = vectorizer.transform([page.text for page in pages])
        text.data = np.log1p(text.data)
        text = normalize(text, norm="l2", copy=False)
        relevance = csr_matrix(np.array([[RELEVANCE_WEIGHT * page.relevance] for page in pages]))
        return hstack([text, relevance]).tocsr()

    def model_calls(self, url: str) -> bool:
        """The judges' call on *url*, the user's word aside: the taught
        model's once it learnt, else the crawl judge's."""
        probability = self._probability.get(url)
        return probability >= 0.5 if probability is not None else self.pages[url].called

    def calls(self) -> dict[str, bool]:
        """Every page's final call: the user's word, else the judges'."""
        word = self.book.word()
        return {url: word.get(url, self.model_calls(url)) for url in self.pages}

    # -- the precision stated --------------------------------------------------------------

    def precision(self) -> PrecisionStatement:
        """The relevant collection's precision (see the module docstring)."""
        word = self.book.word()
        calls = self.calls()
        said_relevant = sum(1 for url, relevant in word.items() if relevant and url in self.pages)
        unanswered = sum(1 for url, called in calls.items() if called and url not in word)
        sampled = [answer for answer in self.book.of_kind("sample") if answer.url in self.pages
                   and self.model_calls(answer.url)]
        total = said_relevant + unanswered
        if total == 0:
            return PrecisionStatement(None, 0.0, 1.0, len(sampled), answers_needed())
        if sampled:
            right = sum(answer.relevant for answer in sampled)
            share = right / len(sampled)
            low, high = predicted_right(unanswered, right, len(sampled) - right)
        elif self.judge_estimate is not None:
            share, low, high = self.judge_estimate
            low, high = low * unanswered, high * unanswered
        else:
            return PrecisionStatement(None, 0.0, 1.0, 0, answers_needed())
        statement = PrecisionStatement((said_relevant + share * unanswered) / total, (said_relevant + low) / total,
                                       (said_relevant + high) / total, len(sampled))
        if statement.known:
            return statement
        more = max(1, answers_needed(UNKNOWN_WIDTH * total / max(unanswered, 1), share) - len(sampled))
        return PrecisionStatement(None if not sampled else statement.value, statement.low, statement.high,
                                  len(sampled), more)

    # -- what to ask -------------------------------------------------------------------------

    def questions(self, kind: str, count: int, rng: random.Random) -> list[str]:
        """The next pages to ask about, of *kind* (``sample`` or ``teach``)."""
        word = self.book.word()
        open_urls = [url for url in self.pages if url not in word]
        if kind == "sample":
            called = [url for url in open_urls if self.model_calls(url)]
            return rng.sample(called, min(count, len(called)))
        if self._probability:
            return sorted(open_urls, key=lambda url: (abs(self._probability[url] - 0.5), url))[:count]
        # nothing learnt yet: the pages the crawl judge ranks highest and those at its threshold,
        # in turn (the teaching answers so far say whose turn it is), so both kinds come soon
        ranked = sorted(open_urls, key=lambda url: (-self.pages[url].relevance, url))
        calls = sum(self.pages[url].called for url in ranked)
        edge = ranked[calls:] + ranked[calls - 1::-1] if calls else ranked[len(ranked) // 2:]
        chosen: list[str] = []
        for top, near in zip(ranked, edge, strict=False):
            chosen += [near, top] if len(self.book.of_kind("teach", "given")) % 2 else [top, near]
        return list(dict.fromkeys(chosen))[:count]


def crawl_pages(folder: Path, texts: bool = True) -> list[JudgedPage]:
    """The judged pages of a finished crawl: each page's last verdict in its
    history (near-copies of pages before left out), with its text read from
    the page repository (``pages.jsonl``, FOCUS_STORE_PAGES) when kept."""
    from crawlproject.corpus.collection import judged, records

    pages: dict[str, JudgedPage] = {}
    history = folder / "history.jsonl"
    for record in records(history) if history.is_file() else ():
        if isinstance(record, dict) and judged(record) and not record.get("near_duplicate_of"):
            url = record["canonical_url"]
            pages[url] = JudgedPage(url, float(record["relevance"]), bool(record["relevant"]),
                                    title=str(record.get("title") or ""))
    if texts:
        for url, text in _texts(folder).items():
            if url in pages:
                pages[url].text = text
    return list(pages.values())


def _texts(folder: Path) -> dict[str, str]:
    """Each stored page's visible text, as the crawl's judge read it."""
    from scrapy.http import HtmlResponse

    from crawlproject.web.page import visible_text

    listing = folder / "pages.jsonl"
    texts: dict[str, str] = {}
    if not listing.is_file():
        return texts
    for line in listing.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
            file = folder / record["file"]
            body = file.read_bytes()
        except (ValueError, KeyError, TypeError, OSError):
            continue
        content_type = record.get("content_type") or "text/html"
        if "html" not in content_type.lower():
            continue
        response = HtmlResponse(record.get("fetched_url") or record["url"], body=body,
                                headers={"Content-Type": content_type})
        texts[record["url"]] = visible_text(response)
    return texts


def judge_estimate(summary: dict[str, Any]) -> tuple[float, float, float] | None:
    """The crawl judge's own estimate of its precision, from a summary."""
    precision = (summary.get("judge") or {}).get("precision")
    if not isinstance(precision, dict) or precision.get("value") is None:
        return None
    return float(precision["value"]), float(precision["low"]), float(precision["high"])


def shown(page: JudgedPage, lines: int = 4, width: int = 100) -> str:
    """A page as a question shows it: its title, URL and its first lines of text."""
    words = page.text.split()
    body, line = [], ""
    for word in words:
        if len(line) + len(word) + 1 > width:
            body.append(line)
            line = ""
            if len(body) == lines:
                break
        line = f"{line} {word}".strip()
    if line and len(body) < lines:
        body.append(line)
    return "\n".join([page.title or "(no title)", page.url, *("  " + part for part in body)])


def give_answers(folder: Path, answers: Mapping[str, bool], analyzer: TermAnalyzer) -> Rejudge:
    """The user's word on pages (canonical URL → relevant) given at once —
    the dashboard's label on a finished crawl, ``Collection.answer`` — kept
    and the crawl re-judged under its folder's lock (a crawl still writing
    the folder, or ``scrapy label`` on it, refuses this one)."""
    from crawlproject.store_lock import lock_dir

    with lock_dir(folder, f"the crawl folder {str(folder)!r}"):
        book = AnswerBook(folder)
        for url, relevant in answers.items():
            book.add(Answer(url, relevant, "given"))
        return apply_answers(folder, analyzer)


def apply_answers(folder: Path, analyzer: TermAnalyzer, judge: Rejudge | None = None) -> Rejudge:
    """Re-judge a finished crawl with the answers in its folder and settle
    its files — the history's and the collection's calls, the summary's
    count and stated precision, the report — so that all of them say the
    same; *judge* the re-judging already made (it is refitted)."""
    from crawlproject.corpus.collection import counts_as_relevant, records, settle
    from crawlproject.corpus.crawl_report import write_report

    summary_path = folder / "summary.json"
    summary = json.loads(summary_path.read_text(encoding="utf-8")) if summary_path.is_file() else {}
    if judge is None:
        judge = Rejudge(crawl_pages(folder), AnswerBook(folder), analyzer, judge_estimate(summary))
    else:
        judge.book = AnswerBook(folder)
        judge.fit()
    calls = judge.calls()
    settle(folder, lambda _: True, lambda _: False, calls)  # every judged page called as the re-judging calls it
    relevant = sum(counts_as_relevant(record) for record in records(folder / "history.jsonl")
                   if isinstance(record, dict))
    statement = judge.precision()
    answers = judge.book.answers.values()
    summary["relevant_called"] = relevant
    summary["answers"] = {kind: sum(a.kind == kind for a in answers) for kind in ("given", "teach", "sample")}
    summary["answers"] |= {"learnt": judge.model is not None, "precision": statement.as_dict()}
    temporary = summary_path.with_name(".summary.json.answering")
    temporary.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    temporary.replace(summary_path)
    write_report(folder)
    return judge
