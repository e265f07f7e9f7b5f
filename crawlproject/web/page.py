"""A fetched page as strategies see it: URL, text, and outlinks with anchors.

Parsing happens once per page, on Scrapy's cached lxml tree, so link
extraction and text extraction share one parse of the (possibly messy,
possibly truncated) HTML. Each outlink's key (canonical form) is computed
here, once: everything after — admission, the frontier, the link graph,
the distiller — reads it from the link.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lxml import etree
from scrapy.http import HtmlResponse
from scrapy.linkextractors import IGNORED_EXTENSIONS, LinkExtractor
from scrapy.utils.response import get_base_url
from w3lib.url import parse_url

from crawlproject.web import meta as keys
from crawlproject.web.linkcontext import LinkContext, link_contexts
from crawlproject.web.text import join_text
from crawlproject.web.urls import canonicalize, without_fragment

if TYPE_CHECKING:
    from collections import Counter

    from scrapy.http import Response

    from crawlproject.web.text import TermAnalyzer

# Frames and image maps carried much of the navigation of 1990s sites. The
# extensions Scrapy ignores are looked up in a set (_ignored_extension), not
# by its test of every extension against every link (a tenth of a page's parse).
_LINK_EXTRACTOR = LinkExtractor(
    tags=("a", "area", "frame", "iframe"), attrs=("href", "src"), unique=True, deny_extensions=[]
)
_IGNORED_EXTENSIONS = frozenset(f".{extension}" for extension in IGNORED_EXTENSIONS)
# The text nodes as plain strings, straight from lxml (parsel would wrap each in a Selector).
_TEXT = etree.XPath("//text()[not(ancestor::script) and not(ancestor::style)]", smart_strings=False)


@dataclass
class Link:
    url: str  #: as found on the page (resolved, no fragment): what is fetched
    anchor: str
    key: str = ""  #: canonical form: what dedup and outputs use

    def __post_init__(self) -> None:
        if not self.key:
            key = canonicalize(self.url)
            self.key = self.url if key == self.url else key  # one string when they agree


@dataclass
class Page:
    url: str
    text: str
    links: list[Link]
    depth: int = 0
    parent_url: str | None = None
    #: The request meta the page was fetched with (strategy state rides here).
    meta: dict[str, Any] = field(default_factory=dict, repr=False)
    key: str = ""  #: the page's canonical form
    links_cut: int = 0  #: links past ``max_links``, dropped
    _vectors: dict[tuple[bool, frozenset[str]], Counter[str]] = field(default_factory=dict, repr=False)
    _response: HtmlResponse | None = field(default=None, repr=False)
    _contexts: dict[str, LinkContext] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not self.key:
            self.key = page_key(self.url, self.meta)

    @classmethod
    def from_response(
        cls,
        response: Response,
        depth: int = 0,
        parent: str | None = None,
        meta: dict[str, Any] | None = None,
        max_links: int = 0,
    ) -> Page:
        """Text and links of an HTML response; an empty page for anything else.
        With *max_links*, links past that many are dropped (``links_cut``
        says how many): a page of 50,000 links is a trap, not a hub."""
        meta = meta if meta is not None else {}
        key = page_key(response.url, meta)
        if not isinstance(response, HtmlResponse) or not response.body:
            return cls(response.url, "", [], depth, parent, meta, key)
        text = visible_text(response)
        links: list[Link] = []
        seen = set()
        found = [link for link in _LINK_EXTRACTOR.extract_links(response) if not _ignored_extension(link.url)]
        for link in found:
            url = without_fragment(link.url)
            if url not in seen:
                if max_links and len(links) >= max_links:
                    break
                seen.add(url)
                links.append(Link(url, " ".join(link.text.split())))
        page = cls(response.url, text, links, depth, parent, meta, key, _response=response)
        page.links_cut = len(found) - len(seen) if max_links and len(links) >= max_links else 0
        return page

    def link_context(self, link: Link, window: int) -> LinkContext:
        """Anchor and surrounding words of *link* (computed once per page)."""
        if self._contexts is None:
            if self._response is None:
                self._contexts = {}
            else:
                response = self._response
                self._contexts = link_contexts(
                    response.selector.root, get_base_url(response), window, response.encoding
                )
        return self._contexts.get(link.url, LinkContext(link.anchor, ""))

    def vector(self, analyzer: TermAnalyzer) -> Counter[str]:
        """TF vector of the page text, computed once per kind of analyzer (a
        judge's unstemmed terms and a link model's stemmed ones differ)."""
        vector = self._vectors.get(analyzer.key)
        if vector is None:
            vector = self._vectors[analyzer.key] = analyzer.vector(self.text)
        return vector


def _ignored_extension(url: str) -> bool:
    """Whether *url*'s path ends in an extension Scrapy's link extractor
    ignores (``IGNORED_EXTENSIONS``: documents, images, archives — ``.tar.gz``
    too): a suffix of its last segment from one of its dots."""
    path = parse_url(url).path
    name = path[path.rfind("/") + 1 :].lower()
    dot = name.find(".")
    while dot >= 0:
        if name[dot:] in _IGNORED_EXTENSIONS:
            return True
        dot = name.find(".", dot + 1)
    return False


def visible_text(response: HtmlResponse) -> str:
    """Every text of a page a reader sees (scripts and styles left out):
    what the crawl's judges read."""
    return join_text(_TEXT(response.selector.root))


def page_key(url: str, meta: dict[str, Any]) -> str:
    """A fetched page's key: the lease it was fetched under (the frontier's
    key, even after a redirect to another spelling), else computed."""
    lease = meta.get(keys.LEASE)
    return keys.page_of_lease(str(lease)) if lease else canonicalize(url)


@dataclass(frozen=True)
class Promotion:
    """A URL a strategy wants crawled sooner than its links' scores say
    (e.g. an outlink of a hub found by the distiller)."""

    url: str  # as found: what is fetched
    score: float
    source: str  # the page it is promoted for
    key: str  # the URL's canonical form
