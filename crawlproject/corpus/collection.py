"""The collection's layout on disk, and its verdicts settled at
the end of a crawl::

    history.jsonl                  one line per fetch (the crawl's record)
    collection/relevant.jsonl      one line per relevant page: its item, text and Markdown included
    collection/irrelevant.jsonl    the same for the pages the judge did not call relevant
    collection/relevant/NAME.md    a relevant page's Markdown under a YAML front matter of its item
    collection/near-duplicates.jsonl  pages that nearly copy one fetched before (a mirror, a print view)

**One count.** The relevant pages of a crawl are the pages its judge called
relevant that are no near-duplicate of a page fetched before
(:func:`counts_as_relevant`): the summary, the report, the collection,
``crawlproject.crawl`` and the dashboard all count them so.

A judge calibrated on the crawl's own pages (a query judge) calls each page
as it arrives with what the crawl has shown so far — and the pages near the
seeds arrive first, before its calibration has seen enough to call anything
(on the PHP manual's dev topics a query crawl called 6 % of the relevant
pages relevant as they arrived; refitted on all the pages met, 82 %). When
the crawl ends its judge refits on every page met, and :func:`settle`
rewrites these files with its final calls: a page whose call changed keeps
the first under ``relevant_when_fetched`` (the items sent during the crawl,
and the WARC's metadata, keep theirs).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from pathlib import Path

#: The item's fields in a Markdown file's front matter, in this order.
FRONT_MATTER = ("title", "url", "canonical_url", "relevant", "relevance", "language", "found_via", "parent_url",
                "depth", "fetched_at", "status", "content_type")
_NAME_PART = re.compile(r"[^A-Za-z0-9]+")
KINDS = ("relevant", "irrelevant")


def kind_of(record: Any) -> str:
    """Which part of the collection a page belongs to: a copy of a page
    fetched before → ``near-duplicates``; no verdict (a crawl with no
    judge) → ``pages``."""
    if record.get("near_duplicate_of"):
        return "near-duplicates"
    relevant = record.get("relevant")
    return "pages" if relevant is None else ("relevant" if relevant else "irrelevant")


def counts_as_relevant(record: Any) -> bool:
    """Whether a page's record counts among the crawl's relevant pages:
    called relevant, and no near-duplicate of a page fetched before."""
    return record.get("relevant") is True and not record.get("near_duplicate_of")


def file_name(url: str) -> str:
    """A readable, unique file name for a page: its host and path, then a
    short hash of the whole URL.

    >>> file_name("http://www.gnuplot.info/docs_5.4/loc3071.html")
    'www-gnuplot-info-docs-5-4-loc3071-html-61b28198.md'
    """
    readable = _NAME_PART.sub("-", url.split("://", 1)[-1]).strip("-")[:80]
    return f"{readable}-{hashlib.sha1(url.encode()).hexdigest()[:8]}.md"  # noqa: S324 (a name, not a secret)


def front_matter(record: dict[str, Any]) -> str:
    """YAML front matter: each value written as JSON, which YAML reads as it is."""
    lines = [f"{name}: {json.dumps(record.get(name), ensure_ascii=False)}" for name in FRONT_MATTER]
    return "---\n" + "\n".join(lines) + "\n---\n\n"


def write_markdown(folder: Path, kind: str, record: dict[str, Any]) -> None:
    """A page's Markdown file, under its kind's folder."""
    path = folder / kind / file_name(record["canonical_url"])
    path.parent.mkdir(exist_ok=True)
    path.write_text(front_matter(record) + record.get("markdown", "") + "\n", encoding="utf-8")


@dataclass
class Settled:
    """What settling a crawl's verdicts did."""

    judged: int = 0  #: pages with a verdict (the history's)
    relevant: int = 0  #: of them, called relevant at the end (a near-duplicate of a page before not counted)
    changed: int = 0  #: of them, whose call is not the one made when fetched


def settle(folder: Path, refit: Callable[[list[float]], bool], calls: Callable[[float], bool],
           word: Mapping[str, bool] | None = None) -> Settled:
    """The judge's final calls in the crawl's history and collection in
    *folder*: *refit* is handed the relevance of every page the history holds
    a verdict for (near-duplicates left out: copies, not pages) and says
    whether the judge's calls may have changed; if so, each page is called
    again by *calls* (relevance → relevant) and the files are rewritten. The
    user's *word* on a page (canonical URL → relevant: an answer, a label, an
    example) is its call, whatever the judge says. What it counts is the
    crawl's one count of relevant pages."""
    word = word or {}
    history = folder / "history.jsonl"
    rows = list(records(history)) if history.is_file() else []
    judged_records = [record for record in rows if isinstance(record, dict) and judged(record)]
    pages = [record for record in judged_records if not record.get("near_duplicate_of")]
    changes = refit([record["relevance"] for record in pages]) or bool(word)
    settled = Settled(judged=len(pages))
    for record in judged_records:
        settled.changed += int(changes and settle_record(record, calls, word))
    settled.relevant = sum(counts_as_relevant(record) for record in pages)
    if settled.changed:
        _rewrite(history, rows)
    if changes:
        _settle_collection(folder / "collection", calls, word)
    return settled


def _settle_collection(folder: Path, calls: Callable[[float], bool], word: Mapping[str, bool]) -> None:
    files = {kind: folder / f"{kind}.jsonl" for kind in KINDS}
    if not any(path.is_file() for path in files.values()):
        return
    parts: dict[str, list[dict[str, Any] | str]] = {kind: [] for kind in KINDS}
    moved = 0
    for kind, path in files.items():
        for record in records(path) if path.is_file() else ():
            if isinstance(record, str):
                parts[kind].append(record)  # not a record: kept where it was, as it was
                continue
            if judged(record) and settle_record(record, calls, word):
                moved += 1
                if record["relevant"]:
                    write_markdown(folder, "relevant", record)
                else:
                    (folder / "relevant" / file_name(record["canonical_url"])).unlink(missing_ok=True)
            parts[kind_of(record)].append(record)
    if moved:
        for kind, path in files.items():
            _rewrite(path, parts[kind])


def judged(record: dict[str, Any]) -> bool:
    """Whether the record holds a judge's verdict (relevance and call)."""
    return isinstance(record.get("relevance"), (int, float)) and isinstance(record.get("relevant"), bool)


def settle_record(record: dict[str, Any], calls: Callable[[float], bool],
                  word: Mapping[str, bool] | None = None) -> bool:
    """Call a judged page's record again — the user's *word* on it, else
    *calls* of its relevance; whether its call changed (the first is kept as
    ``relevant_when_fetched``)."""
    said = (word or {}).get(record.get("canonical_url", ""))
    final = bool(calls(record["relevance"])) if said is None else said
    if final == record["relevant"]:
        return False
    record.setdefault("relevant_when_fetched", record["relevant"])
    record["relevant"] = final
    return True


def records(path: Path) -> Iterator[dict[str, Any] | str]:
    """Each line's record; a line that holds none (cut short by a kill) as
    its text, so that a rewrite keeps it."""
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                record = None
            yield record if isinstance(record, dict) else line.rstrip("\n")


def _rewrite(path: Path, records: list[dict[str, Any] | str]) -> None:
    """Replace *path* whole, so a kill mid-way leaves the old file, never half a new one."""
    temporary = path.with_name(path.name + ".settling")
    with temporary.open("w", encoding="utf-8") as out:
        for record in records:
            out.write((record if isinstance(record, str) else json.dumps(record, ensure_ascii=False)) + "\n")
        out.flush()
        os.fsync(out.fileno())
    temporary.replace(path)
