"""``scrapy label CRAWL_DIR``: the user checks a finished crawl's verdicts —
one page at a time in the terminal (its title, URL and first lines), y / n /
skip — or gives a labels file (``--labels FILE``: ``url<TAB>yes|no`` lines).
Every answer re-judges the collection and settles its files: the history,
``collection/``, the summary's count and stated precision, the report
(crawlproject.judges.answers). The pages asked about alternate: one that
teaches the judge most, one drawn fairly from its relevant calls (those
measure its precision).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from scrapy.exceptions import UsageError

from crawlproject import config
from crawlproject.commands._cli import ProjectCommand

if TYPE_CHECKING:
    import argparse

    from crawlproject.judges.answers import AnswerBook, Rejudge

YES, NO = ("y", "yes", "1", "true", "relevant"), ("n", "no", "0", "false", "irrelevant")


class Command(ProjectCommand):
    command_name = "label"
    requires_project = False
    default_settings = {"LOG_ENABLED": False}  # noqa: RUF012

    def syntax(self) -> str:
        return "CRAWL_DIR [--labels FILE] [--questions N] [--seed N]"

    def short_desc(self) -> str:
        return "Answer whether a finished crawl's pages are relevant: its collection re-judged, its precision measured"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--labels", default="", help="answers from a file: url<TAB>yes|no per line (no questions)")
        parser.add_argument("--questions", type=int, default=20, help="pages to ask about (default 20)")
        parser.add_argument("--seed", type=int, default=1, help="the fair sample's random seed")

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        from crawlproject.judges.answers import crawl_pages
        from crawlproject.store_lock import lock_dir

        if len(args) != 1:
            raise UsageError("name one crawl output folder")
        folder = Path(args[0])
        if not (folder / "history.jsonl").is_file():
            raise FileNotFoundError(2, "not a crawl's output folder (no history.jsonl)", str(folder))
        if not any(True for _ in crawl_pages(folder, texts=False)):
            raise ValueError(f"{folder}: the crawl judged no page (a crawl without a topic): nothing to check")
        with lock_dir(folder, f"the crawl folder {str(folder)!r}"):  # a crawl still writing it keeps us out
            self._label(folder, opts)

    def _label(self, folder: Path, opts: argparse.Namespace) -> None:
        from crawlproject.judges.answers import apply_answers
        from crawlproject.web.text import TermAnalyzer

        analyzer = TermAnalyzer(stem=config.get_bool(self.project_settings, "FOCUS_STEMMING"))
        if opts.labels:
            given = _read_labels(Path(opts.labels), folder)
            judge = apply_answers(folder, analyzer)
            print(f"{given} answers read from {opts.labels}; {_state(judge)}")
            return
        judge = apply_answers(folder, analyzer)
        print(f"{folder}: {_state(judge)}\n")
        _ask(folder, judge, analyzer, opts.questions, random.Random(opts.seed))


def _ask(folder: Path, judge: Rejudge, analyzer: object, questions: int, rng: random.Random) -> None:
    from crawlproject.judges.answers import Answer, apply_answers, shown

    asked = 0
    kinds = ("teach", "sample")
    while asked < questions:
        kind = kinds[asked % 2]
        urls = judge.questions(kind, 1, rng) or judge.questions(kinds[(asked + 1) % 2], 1, rng)
        if not urls:
            print("No page is left to ask about.")
            return
        page = judge.pages[urls[0]]
        print(f"[{asked + 1}/{questions}, {'to teach the judge' if kind == 'teach' else 'a fair sample of its calls'}]")
        print(shown(page))
        answer = _read_answer()
        if answer == "quit":
            return
        asked += 1
        if answer == "skip":
            continue
        judge.book.add(Answer(page.url, answer == "yes", kind))
        judge = apply_answers(folder, analyzer, judge)  # type: ignore[arg-type]
        print(f"  → {_state(judge)}\n")


def _read_answer() -> str:
    while True:
        try:
            said = input("Relevant to the topic? [y]es / [n]o / [s]kip / [q]uit: ").strip().lower()
        except EOFError:
            return "quit"
        if said in YES:
            return "yes"
        if said in NO:
            return "no"
        if said in ("s", "skip", ""):
            return "skip"
        if said in ("q", "quit"):
            return "quit"
        print("  answer y, n, s or q", file=sys.stderr)


def _state(judge: Rejudge) -> str:
    relevant = sum(judge.calls().values())
    return f"{relevant} pages relevant; precision {judge.precision()}"


def _read_labels(path: Path, folder: Path) -> int:
    """The file's answers, given (they teach the judge), into the crawl's answers."""
    from crawlproject.judges.answers import Answer, AnswerBook
    from crawlproject.web.urls import canonicalize

    book: AnswerBook = AnswerBook(folder)
    count = 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        url, _, said = line.partition("\t")
        said = said.strip().lower()
        if said not in YES + NO:
            raise ValueError(f"{path}:{number}: expected url<TAB>yes|no, got {line!r}")
        book.add(Answer(canonicalize(url.strip()), said in YES, "given"))
        count += 1
    return count
