"""A focused crawl from Python, in five lines::

    import crawlproject

    collection = crawlproject.crawl(seeds=["https://docs.python.org/3/"], query="asyncio event loop", budget=200)
    for page in collection.relevant:
        print(page["relevance"], page["title"], page["url"])

It runs the ``focus`` spider in this process, on Scrapy's ``CrawlerProcess``
with the project's settings and defaults (the same crawl as ``scrapy crawl
focus``), its collection on (``FOCUS_COLLECTION``: every page's main text
and Markdown), and returns the pages as dicts with the fields of the items.
A topic is a query, a model file of ``scrapy train``, or example URLs (a
topic is trained from them first, by ``scrapy train --examples`` in a child
process, into the crawl's folder). Twisted runs once per process: a second
call runs its crawl in a Python process of its own, with the same result
(one that never imports the caller's script: no ``__main__`` guard needed).
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

    from scrapy.crawler import Crawler


class CrawlError(RuntimeError):
    """A crawl that could not start, or fetched nothing: the message says why."""


@dataclass
class Collection:
    """What a crawl hands back: its pages (in fetch order), its summary and its folder."""

    pages: list[dict[str, Any]]
    summary: dict[str, Any]
    folder: Path
    finish_reason: str = ""
    stats: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def relevant(self) -> list[dict[str, Any]]:
        """The pages the judge called relevant (a near-duplicate of a page
        fetched before is no new one: the crawl's one count)."""
        from crawlproject.corpus.collection import counts_as_relevant

        return [page for page in self.pages if counts_as_relevant(page)]

    def answer(self, answers: Mapping[str, bool]) -> str:
        """The user's word on pages (URL → relevant), as ``scrapy label
        --labels`` takes it: the crawl is re-judged and its files settled,
        and these pages take the final calls (:attr:`relevant` agrees with
        ``collection/relevant.jsonl``, the summary and the report). The
        collection's precision as it is stated now."""
        from crawlproject.corpus.collection import records
        from crawlproject.judges.answers import give_answers
        from crawlproject.web.text import TermAnalyzer
        from crawlproject.web.urls import canonicalize

        judge = give_answers(self.folder, {canonicalize(url): bool(relevant) for url, relevant in answers.items()},
                             TermAnalyzer())
        final = {record["canonical_url"]: record for record in records(self.folder / "history.jsonl")
                 if isinstance(record, dict) and "canonical_url" in record}
        for page in self.pages:
            record = final.get(page.get("canonical_url", ""))
            if record is not None and "relevant" in record:
                page["relevant"] = record["relevant"]
        self.summary = json.loads((self.folder / "summary.json").read_text(encoding="utf-8"))
        return str(judge.precision())

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.pages)

    def __len__(self) -> int:
        return len(self.pages)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        """A page (or pages) by its place in fetch order, as a list's."""
        return self.pages[index]


_reactor_used = False  # Twisted's reactor runs once per process


def crawl(
    seeds: str | Sequence[str],
    query: str = "",
    examples: Sequence[str] = (),
    model: str = "",
    budget: int = 100,
    strategy: str = "",
    settings: dict[str, Any] | None = None,
    output_dir: str | Path | None = None,
    progress: bool | None = None,
    log_level: str = "WARNING",
) -> Collection:
    """Crawl from *seeds* toward a topic — *query*, *model* (a file of ``scrapy
    train``) or *examples* (relevant page URLs) — for *budget* pages
    (CLOSESPIDER_PAGECOUNT); *strategy* a name of docs/strategies.md (default
    the ``focus`` spider's: the link learner); *settings* any Scrapy or
    ``FOCUS_`` setting. *progress*: a bar on stderr (default: when it is a
    terminal); *log_level*: Scrapy's log on stderr from that level (a
    ``LOG_LEVEL`` in *settings* wins). Raises :class:`CrawlError` with one line when the crawl cannot
    start or fetches nothing."""
    arguments: dict[str, Any] = {
        "seeds": ",".join([seeds] if isinstance(seeds, str) else seeds),
        "query": query,
        "model": model,
        "examples": list(examples),
        "budget": budget,
        "strategy": strategy,
        "settings": dict(settings or {}),
        "output_dir": str(output_dir) if output_dir is not None else None,
        "progress": sys.stderr.isatty() if progress is None else progress,
        "log_level": log_level,
    }
    global _reactor_used
    if _reactor_used:
        return _in_child_process(arguments)
    _reactor_used = True
    return _crawl(**arguments)


def _in_child_process(arguments: dict[str, Any]) -> Collection:
    """The crawl in a Python process of its own (``python -m
    crawlproject._call``), which hands back its collection or the exception
    it raised through a file. Not multiprocessing's spawn: it imports the
    caller's ``__main__`` again, so a script without an ``if __name__ ==
    "__main__":`` guard ran its first crawl twice, then failed."""
    with tempfile.TemporaryDirectory(prefix="crawlproject-call-") as folder:
        call, answer = Path(folder) / "call.pickle", Path(folder) / "answer.pickle"
        call.write_bytes(pickle.dumps(arguments))
        completed = subprocess.run([sys.executable, "-m", "crawlproject._call", str(call), str(answer)],  # noqa: S603
                                   stdin=subprocess.DEVNULL, check=False)
        if not answer.is_file():
            raise CrawlError(f"the crawl's process ended without a result (exit code {completed.returncode})")
        outcome, value = pickle.loads(answer.read_bytes())  # noqa: S301 - written by our own child process
    if outcome == "raised":
        raise value
    result: Collection = value
    return result


def answer_call(call: Path, answer: Path) -> None:
    """The child's side of :func:`_in_child_process`: crawl as *call* says,
    and write what came of it to *answer* (an exception that cannot be
    pickled: its message)."""
    arguments = pickle.loads(call.read_bytes())  # noqa: S301 - written by the calling process
    try:
        outcome: tuple[str, Any] = ("returned", _crawl(**arguments))
    except Exception as error:  # noqa: BLE001 - handed to the caller, which raises it
        outcome = ("raised", error)
    try:
        data = pickle.dumps(outcome)
    except Exception as unpicklable:  # noqa: BLE001 - an exception that cannot be pickled: its message
        data = pickle.dumps(("raised", CrawlError(f"{type(outcome[1]).__name__}: {outcome[1]} ({unpicklable})")))
    answer.write_bytes(data)


def _crawl(seeds: str, query: str, model: str, examples: list[str], budget: int, strategy: str,
           settings: dict[str, Any], output_dir: str | None, progress: bool, log_level: str) -> Collection:
    from scrapy.crawler import AsyncCrawlerProcess, CrawlerProcess
    from scrapy.settings import Settings

    project = Settings()
    project.setmodule("crawlproject.settings", priority="project")
    chosen = {"CLOSESPIDER_PAGECOUNT": budget, "FOCUS_COLLECTION": True, "LOG_LEVEL": log_level, **settings}
    if output_dir is not None:
        chosen["FOCUS_OUTPUT_DIR"] = output_dir
    project.setdict(chosen, priority="cmdline")
    if examples:
        model = _train_from_examples(examples, seeds, chosen, output_dir)
    # The caller's signal handlers, as they were before any Scrapy object (a
    # crawler process installs its own).
    with _signal_handlers_restored():
        # The process `scrapy crawl` would make (scrapy.cmdline): it installs the
        # reactor the settings ask for, before any of our modules imports one.
        asyncio = project["TWISTED_REACTOR"] == "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
        process: CrawlerProcess | AsyncCrawlerProcess = (
            AsyncCrawlerProcess(project)
            if (asyncio and not project.getbool("FORCE_CRAWLER_PROCESS"))
            or not project.getbool("TWISTED_REACTOR_ENABLED")
            else CrawlerProcess(project)
        )
        from crawlproject.commands.crawl import crawl_failure, startup_cause

        crawler = process.create_crawler("focus")
        pages: list[dict[str, Any]] = []
        bar = _progress_bar(budget) if progress else None

        def scraped(item: Any, **_: Any) -> None:
            pages.append(dict(item))
            if bar is not None:
                bar.update(1)

        from scrapy import signals

        crawler.signals.connect(scraped, signal=signals.item_scraped)
        spider_arguments = {
            "seeds": seeds,
            **({"query": query} if query else {}),
            **({"model": model} if model else {}),
            **({"strategy": strategy} if strategy else {}),
        }
        failures: list[BaseException] = []
        crawling: Any = process.crawl(crawler, **spider_arguments)
        if hasattr(crawling, "add_done_callback"):
            crawling.add_done_callback(
                lambda task: failures.append(task.exception()) if not task.cancelled() and task.exception() else None
            )
        else:
            crawling.addErrback(lambda failure: failures.append(failure.value))
        process.start()
        output = getattr(crawler.spider, "crawl_output", None)
        if output is not None:
            output.release()  # a crawl that could not start never stopped its engine: its folder is free again
    if bar is not None:
        bar.close()
    for failure in failures:
        cause = startup_cause(failure)
        raise CrawlError(str(cause if cause is not None else failure)) from None
    if (failed := crawl_failure(crawler)) is not None:
        raise CrawlError(failed)
    if _stats_of(crawler).get("focus/verdicts/changed"):  # the judge's final calls, as the files have them
        from crawlproject.corpus.collection import judged, settle_record

        focus = crawler.spider.focus  # type: ignore[union-attr]
        for page in pages:
            if judged(page):
                settle_record(page, focus.calls, focus.word())
    folder = _folder_of(crawler)
    summary_file = folder / "summary.json"
    summary = json.loads(summary_file.read_text()) if summary_file.exists() else {}
    stats = _stats_of(crawler)
    return Collection(pages, summary, folder, str(stats.get("finish_reason", "")), stats)


def _stats_of(crawler: Crawler) -> dict[str, Any]:
    return crawler.stats.get_stats() if crawler.stats is not None else {}


@contextlib.contextmanager
def _signal_handlers_restored() -> Iterator[None]:
    """Scrapy installs its own SIGINT/SIGTERM handlers for a crawl and leaves
    them: after the call, Ctrl-C would no longer interrupt the caller's
    program. The caller's handlers are put back when the crawl ends."""
    names = [name for name in ("SIGINT", "SIGTERM", "SIGBREAK") if hasattr(signal, name)]
    saved = {name: signal.getsignal(getattr(signal, name)) for name in names}
    try:
        yield
    finally:
        for name, handler in saved.items():
            if handler is not None:  # None: a handler not installed from Python, which cannot be put back
                signal.signal(getattr(signal, name), handler)


def _folder_of(crawler: Crawler) -> Path:
    from crawlproject.corpus.output import output_dir

    assert crawler.spider is not None
    return output_dir(crawler.spider, crawler.settings)


def _train_from_examples(examples: list[str], seeds: str, settings: dict[str, Any], output_dir: str | None) -> str:
    """A topic model from *examples*, by ``scrapy train --examples`` (it
    fetches them and pages near the seeds: a crawl of its own)."""
    # absolute: `scrapy train` runs in the project's folder, the crawl in the caller's
    folder = Path(output_dir).resolve() if output_dir else Path(tempfile.mkdtemp(prefix="crawlproject-topic-"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "topic.npz"
    command = [sys.executable, "-m", "scrapy", "train", "--examples", ",".join(examples), "--seeds", seeds,
               "-o", str(path)]
    for name, value in settings.items():
        if name.startswith(("FOCUS_REPLAY", "FOCUS_ALLOWED_NETWORKS", "DOWNLOAD_", "CONCURRENT_", "ROBOTSTXT_",
                            "USER_AGENT")):
            command += ["-s", f"{name}={value}"]
    # the project's settings by name: installed with pip, no scrapy.cfg lies beside the package
    environment = {**os.environ, "SCRAPY_SETTINGS_MODULE": "crawlproject.settings"}
    completed = subprocess.run(command, capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1],  # noqa: S603
                               check=False, env=environment)
    if completed.returncode:
        last = completed.stderr.strip().splitlines()[-1:] or ["scrapy train failed"]
        raise CrawlError(last[0])
    return str(path)


def _progress_bar(budget: int) -> Any:
    from tqdm import tqdm

    return tqdm(total=budget, unit="page", desc="crawling", file=sys.stderr, leave=True)
