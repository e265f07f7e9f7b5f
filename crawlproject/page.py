"""A fetched page as strategies see it: URL, text, and outlinks with anchors.

Parsing happens once per page, on Scrapy's cached lxml tree, so link
extraction and text extraction share one parse of the (possibly messy,
possibly truncated) HTML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from scrapy.http import HtmlResponse
from scrapy.linkextractors import LinkExtractor

from crawlproject.text import join_text

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
    _vector: Counter[str] | None = field(default=None, repr=False)

    @classmethod
    def from_response(
        cls, response: Response, depth: int = 0, parent: str | None = None
    ) -> Page:
        """Text and links of an HTML response; an empty page for anything else."""
        if not isinstance(response, HtmlResponse) or not response.body:
            return cls(response.url, "", [], depth, parent)
        text = join_text(response.xpath(_TEXT_XPATH).getall())
        links = [
            Link(link.url, " ".join(link.text.split()))
            for link in _LINK_EXTRACTOR.extract_links(response)
        ]
        return cls(response.url, text, links, depth, parent)

    def vector(self, analyzer: TermAnalyzer) -> Counter[str]:
        """TF vector of the page text (computed once)."""
        if self._vector is None:
            self._vector = analyzer.vector(self.text)
        return self._vector
