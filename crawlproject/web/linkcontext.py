"""Link context from the page's tag tree (docs/methods.md §1 "aug context", docs/methods.md §2
SharkSearch): for every link, its anchor text and the words around it.

The (already tidied) lxml tree is read in document order as one stream of
words; each link element marks the span of its own words. A link's context
is up to ``window`` words on each side of that span. Image-map areas and
frames have no text of their own: their ``alt`` / ``title`` / ``name`` stand
in for the anchor. Script and style text is skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from lxml import etree
from w3lib.html import strip_html5_whitespace
from w3lib.url import safe_url_string

from crawlproject.web.urls import without_fragment

if TYPE_CHECKING:
    from lxml.html import HtmlElement

_LINK_ATTRIBUTE = {"a": "href", "area": "href", "frame": "src", "iframe": "src"}
_STAND_IN_ATTRIBUTES = ("alt", "title", "name")
_SKIPPED = frozenset({"script", "style"})


@dataclass(frozen=True)
class LinkContext:
    anchor: str
    context: str


def link_contexts(
    root: HtmlElement, base_url: str, window: int, encoding: str = "utf-8"
) -> dict[str, LinkContext]:
    """Link URL (resolved as Scrapy's link extractor does, without fragment)
    → anchor and context; the first occurrence wins.

    >>> from lxml.html import fromstring
    >>> tree = fromstring("<p>one two three <a href='/x'>the anchor</a> four five</p>")
    >>> link_contexts(tree, "http://h/", 2)["http://h/x"]
    LinkContext(anchor='the anchor', context='two three four five')
    """
    words, spans = _link_spans(root, base_url, encoding)
    return {url: found[0] for url, found in _contexts(words, spans, window).items()}


def _link_spans(root: HtmlElement, base_url: str, encoding: str) -> tuple[list[str], list[tuple[str, int, int, str]]]:
    """The page's words in document order, and each link's span of them."""
    words: list[str] = []
    spans: list[tuple[str, int, int, str]] = []  # url, start, end, stand-in anchor
    open_links: dict[int, tuple[str, int, str]] = {}
    resolved_hrefs: dict[str, str | None] = {}  # a page repeats its navigation links
    for event, element in etree.iterwalk(root, events=("start", "end", "comment", "pi")):
        if event != "start":  # a link's end, and the text after an element, comment or instruction
            if open_links and event == "end":
                opened = open_links.pop(id(element), None)
                if opened is not None:
                    url, start, stand_in = opened
                    spans.append((url, start, len(words), stand_in))
            if element.tail:
                words += element.tail.split()
            continue
        tag = element.tag
        if "}" in tag or not tag.islower():
            tag = tag.rsplit("}", 1)[-1].lower()
        attribute = _LINK_ATTRIBUTE.get(tag)
        if attribute is not None:
            if open_links:
                # A link inside an unclosed link: as an HTML5 browser does,
                # the open one ends where the new one starts.
                for outer_url, start, stand_in in open_links.values():
                    spans.append((outer_url, start, len(words), stand_in))
                open_links.clear()
            href = element.get(attribute)
            if href:
                stand_in = next((element.get(a) for a in _STAND_IN_ATTRIBUTES if element.get(a)), "")
                if href not in resolved_hrefs:
                    resolved_hrefs[href] = _resolve(base_url, href, encoding)
                resolved = resolved_hrefs[href]
                if resolved:
                    open_links[id(element)] = (resolved, len(words), stand_in or "")
        if tag not in _SKIPPED and element.text:
            words += element.text.split()
    return words, spans


def all_link_contexts(
    root: HtmlElement, base_url: str, window: int, encoding: str = "utf-8"
) -> dict[str, list[LinkContext]]:
    """Every occurrence of every link: URL → anchor and context of each, in
    document order (a page that links twice has two windows)."""
    words, spans = _link_spans(root, base_url, encoding)
    return _contexts(words, spans, window)


def _contexts(words: list[str], spans: list[tuple[str, int, int, str]], window: int) -> dict[str, list[LinkContext]]:
    contexts: dict[str, list[LinkContext]] = {}
    for url, start, end, stand_in in sorted(spans, key=lambda span: span[1]):
        anchor = " ".join(words[start:end]) or stand_in
        context = words[max(0, start - window) : start] + words[end : end + window]
        contexts.setdefault(url, []).append(LinkContext(anchor, " ".join(context)))
    return contexts


def _resolve(base_url: str, href: str, encoding: str) -> str | None:
    try:
        return without_fragment(safe_url_string(urljoin(base_url, strip_html5_whitespace(href)), encoding))
    except ValueError:
        return None
