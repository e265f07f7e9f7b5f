"""A page's main text, as Markdown and as plain text, for the collection:
trafilatura, chosen by measurement (BENCHMARKS.md, extraction:
word F1 against each page's own main text on WebKB, docsweb and the PHP
manual), with ``favor_recall``: its default and fast modes drop a fifth to a
quarter of WebKB's hand-written pages (lists of links and short paragraphs
read as boilerplate: recall 0.72–0.80 against 0.87 with favor_recall) and
lose nothing elsewhere by it; 3–6 ms a page.

Title and language are read from the page itself (``<title>``, ``<html
lang>`` or the Content-Language header) at every fetch: they cost nothing
beside the parse the crawl already made. In a collection, a page that
declares no language (all of WebKB's 1997 pages) gets the one py3langid
detects in its main text, when it is sure (probability ≥ 0.9, 20 words or
more): about a millisecond a page, and half a second to load the model when
the collection opens (BENCHMARKS.md, extraction: how often it agrees with
the pages that declare one). The main text is extracted only
for a collection (``FOCUS_COLLECTION``): it costs milliseconds a page.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from scrapy.http import HtmlResponse

if TYPE_CHECKING:
    from scrapy.http import Response

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class MainText:
    text: str  #: plain text, paragraphs apart
    markdown: str  #: the same with headings, lists, tables, emphasis and code marked


def title_of(response: Response) -> str | None:
    """The page's ``<title>``, whitespace folded; None without one."""
    title = response.xpath("//title/text()").get() if _is_html(response) else None
    folded = " ".join(title.split()) if title else ""
    return folded[:500] or None


def language_of(response: Response, text: str = "") -> str | None:
    """The page's declared language (``<html lang>``, else Content-Language),
    lower-cased; else the one detected in its *text* (None: not sure)."""
    declared = response.xpath("/html/@lang").get() if _is_html(response) else None
    if not declared:
        header = response.headers.get(b"Content-Language")
        declared = header.decode("latin-1").split(",")[0] if header else None
    found = declared.strip().lower()[:35] if declared else ""
    return found or detected_language(text)


#: a detected language less likely than this is no answer (short, mixed or no prose)
LANGUAGE_CONFIDENCE = 0.9
#: fewer words than this say too little to tell a language by
LANGUAGE_MIN_WORDS = 20


def detected_language(text: str) -> str | None:
    """The ISO 639-1 code of the language of *text* (py3langid), or None
    when the text is too short or the detector is not sure."""
    words = text.split()
    if len(words) < LANGUAGE_MIN_WORDS:
        return None
    language, probability = _language_identifier().classify(" ".join(words[:1000]))
    return str(language) if probability >= LANGUAGE_CONFIDENCE else None


def load_language_detector() -> None:
    """Load the detector's model now (half a second: not in the reactor at a page)."""
    _language_identifier()


@lru_cache(maxsize=1)
def _language_identifier() -> Any:
    """py3langid's model, loaded once (half a second) with probabilities normalised."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def main_text(html: bytes | str, url: str) -> MainText | None:
    """The main text of a page (boilerplate, navigation and comments left out);
    None when the extractor finds none."""
    import trafilatura
    from trafilatura.settings import Document
    from trafilatura.xml import xmltotxt

    try:
        document = trafilatura.bare_extraction(
            html,
            url=url,
            favor_recall=True,
            with_metadata=False,
            include_comments=False,
            include_tables=True,
            include_formatting=True,
            output_format="markdown",
            as_dict=False,
        )
    except (ValueError, TypeError, AttributeError) as exc:  # a page lxml cannot make a tree of
        logger.debug("No main text in %s: %s", url, exc)
        return None
    if not isinstance(document, Document) or document.body is None:
        return None
    markdown = xmltotxt(document.body, True).strip()
    return MainText(xmltotxt(document.body, False).strip(), markdown) if markdown else None


def whole_text(html: bytes | str, url: str) -> MainText:
    """The page's whole visible text, as the crawl's judge read it: the
    collection's text of a page whose main text the extractor cannot find
    (a relevant page is never left out of the collection for it)."""
    from crawlproject.web.page import visible_text

    body = html.encode("utf-8") if isinstance(html, str) else html
    text = visible_text(HtmlResponse(url, body=body, encoding="utf-8" if isinstance(html, str) else None))
    return MainText(text, text)


def _is_html(response: Response) -> bool:
    return isinstance(response, HtmlResponse) and bool(response.body)
