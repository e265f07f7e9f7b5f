"""What the search engine keeps of a fetched page.

Reference-directed indexing (docs/methods.md §4, Rosetta): a page is described by the
words other pages write near their links to it. Every referring page casts
*one vote per term* found near its links to the target — a page that links
twice, or whose windows overlap, still votes once per term — and the votes
act as the term's frequency in the target's vote field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from scrapy.http import HtmlResponse
from scrapy.utils.response import get_base_url

from crawlproject.web.linkcontext import all_link_contexts
from crawlproject.web.text import join_text
from crawlproject.web.urls import canonicalize

if TYPE_CHECKING:
    from collections.abc import Iterator

    from crawlproject.web.text import TermAnalyzer

_TEXT_XPATH = "//body//text()[not(ancestor::script) and not(ancestor::style)]"
_ALL_TEXT_XPATH = "//text()[not(ancestor::script) and not(ancestor::style) and not(ancestor::title)]"


@dataclass
class IndexedPage:
    key: str  #: canonical URL: the document's identity
    url: str  #: the URL fetched
    title: str
    text: str
    fetched_at: str = ""
    #: target key → the terms this page writes near its links to the target
    votes: dict[str, frozenset[str]] = field(default_factory=dict)


def parse_page(
    url: str,
    body: bytes,
    analyzer: TermAnalyzer,
    window: int,
    key: str = "",
    content_type: str = "text/html",
    fetched_at: str = "",
) -> IndexedPage | None:
    """The indexable content of an HTML page, or ``None`` when it is not HTML
    (or empty). The charset comes from *content_type*, the page's own meta
    tag or a guess, as Scrapy decodes responses; malformed HTML is read as
    a browser would (lxml)."""
    if not body or "html" not in (content_type or "text/html").lower():
        return None
    response = HtmlResponse(url, body=body, headers={"Content-Type": content_type or "text/html"})
    try:
        title = " ".join(join_text(response.xpath("//title//text()").getall()).split())
        text = join_text(response.xpath(_TEXT_XPATH).getall()) or join_text(response.xpath(_ALL_TEXT_XPATH).getall())
        root = response.selector.root
    except ValueError:  # lxml refuses the document (nothing parseable)
        return None
    page = IndexedPage(key or canonicalize(url), url, title, text, fetched_at)
    if root is None:
        return page
    for target_url, contexts in all_link_contexts(root, get_base_url(response), window, response.encoding).items():
        if not target_url.startswith(("http://", "https://")):
            continue
        target = canonicalize(target_url)
        if target == page.key:
            continue  # a page does not vote for itself
        terms: set[str] = set()
        for context in contexts:
            terms.update(analyzer.terms(f"{context.anchor} {context.context}"))
        if target in page.votes:
            terms |= page.votes[target]  # two spellings of one target: still one referrer
        page.votes[target] = frozenset(terms)
    return page


def pages_from_crawl(folder: str | Path, analyzer: TermAnalyzer, window: int) -> Iterator[IndexedPage]:
    """The pages of a finished crawl's page repository (``pages.jsonl`` and
    ``pages/``, FOCUS_STORE_PAGES), parsed for the index; a page whose file
    is missing is skipped (logged by the caller through the count)."""
    folder = Path(folder)
    listing = folder / "pages.jsonl"
    if not listing.is_file():
        raise FileNotFoundError(2, "not a crawl's output folder with a page repository (no pages.jsonl)", str(folder))
    with listing.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                key, file = record["url"], folder / record["file"]
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"{listing}:{number}: not a page record ({exc})") from None
            if not file.is_file():
                continue
            page = parse_page(
                record.get("fetched_url") or key, file.read_bytes(), analyzer, window, key=key,
                content_type=record.get("content_type") or "text/html", fetched_at=record.get("fetched_at") or "",
            )
            if page is not None:
                yield page
