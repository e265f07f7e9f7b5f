"""A fetched page as strategies see it: URL, text, and outlinks with anchors.

Parsing happens once per page, on Scrapy's cached lxml tree, so link
extraction and text extraction share one parse of the (possibly messy,
possibly truncated) HTML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scrapy.http import HtmlResponse
from scrapy.linkextractors import LinkExtractor
from scrapy.utils.response import get_base_url

from crawlproject.linkcontext import LinkContext, link_contexts
from crawlproject.text import join_text
from crawlproject.urls import canonicalize

if TYPE_CHECKING:
    from collections import Counter

    from scrapy.http import Response

    from crawlproject.text import TermAnalyzer

# Frames and image maps carried much of the navigation of 1990s sites.
_LINK_EXTRACTOR = LinkExtractor(
    tags=("a", "area", "frame", "iframe"), attrs=("href", "src"), unique=True
)
_TEXT_XPATH = "//text()[not(ancestor::script) and not(ancestor::style)]"


@dataclass
class Link:
    url: str
    anchor: str


@dataclass
class Page:
    url: str
    text: str
    links: list[Link]
    depth: int = 0
    parent_url: str | None = None
    #: The request meta the page was fetched with (strategy state rides here).
    meta: dict[str, Any] = field(default_factory=dict, repr=False)
    _vector: Counter[str] | None = field(default=None, repr=False)
    _response: HtmlResponse | None = field(default=None, repr=False)
    _contexts: dict[str, LinkContext] | None = field(default=None, repr=False)

    @classmethod
    def from_response(
        cls,
        response: Response,
        depth: int = 0,
        parent: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Page:
        """Text and links of an HTML response; an empty page for anything else."""
        meta = meta if meta is not None else {}
        if not isinstance(response, HtmlResponse) or not response.body:
            return cls(response.url, "", [], depth, parent, meta)
        text = join_text(response.xpath(_TEXT_XPATH).getall())
        links = [
            Link(link.url, " ".join(link.text.split()))
            for link in _LINK_EXTRACTOR.extract_links(response)
        ]
        return cls(response.url, text, links, depth, parent, meta, _response=response)

    def link_context(self, link: Link, window: int) -> LinkContext:
        """Anchor and surrounding words of *link* (computed once per page)."""
        if self._contexts is None:
            if self._response is None:
                self._contexts = {}
            else:
                root = self._response.selector.root
                self._contexts = link_contexts(root, get_base_url(self._response), window)
        return self._contexts.get(canonicalize(link.url), LinkContext(link.anchor, ""))

    def vector(self, analyzer: TermAnalyzer) -> Counter[str]:
        """TF vector of the page text (computed once)."""
        if self._vector is None:
            self._vector = analyzer.vector(self.text)
        return self._vector
