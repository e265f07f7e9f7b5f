"""A site whose pages scripts build after load, as a WARC for the replay:
what rendering is tested and measured on.

Every page is an empty shell — a title, a "Loading…" placeholder and a
script — whose script waits, then fetches the page's content as JSON
(``/api/…``) and writes it in: the front page's links to the articles, an
article's heading, text and links to its neighbours. The HTML is served as
``text/html`` without a charset while its title and placeholder are UTF-8
(a browser left to guess reads them as windows-1252); the JSON is UTF-8.

A plain fetch sees no link and no text; a browser that keeps the page at its
``load`` event sees the placeholder; only a render that waits for the
scripts' fetches finds every article with its text. ``broken`` articles
fetch JSON that is not there: their placeholder never goes (a failed render).
"""

from __future__ import annotations

import json
from io import BytesIO
from typing import TYPE_CHECKING

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

HOST = "http://news.script.test"
#: the scripts wait this long after load before they fetch (a framework
#: booting, a lazy section): longer than a page's ``load`` event waits
DELAY_MS = 400
_SENTENCES = (
    "The café's committee met on Tuesday to review the harbour's new timetable.",
    "Residents said the ferry — late on most mornings — now leaves on time.",
    "A survey of 1 200 households found “broad support” for the evening service.",
    "The council expects the pier's repairs to finish before the winter storms.",
    "Fishermen asked for a second berth, and the harbour master agreed to study it.",
    "Schoolchildren will ride free on weekdays from the first of next month.",
)


def article_text(number: int) -> str:
    """The text an article's script writes: sentences that tell it apart."""
    sentences = [_SENTENCES[(number + k) % len(_SENTENCES)] for k in range(8)]
    return f"Report {number}: " + " ".join(sentences)


def article_title(number: int) -> str:
    return f"Harbour news № {number} — ferry and café"


def _shell(title: str, source: str) -> bytes:
    """A page a script builds: its title and a placeholder until *source*'s
    JSON arrives (``{"html": …}``), after :data:`DELAY_MS`."""
    return (
        f"<!doctype html><html><head><title>{title}</title></head><body>"
        f"<main id='app'><p class='spinner'>Loading…</p></main>"
        "<script>"
        f"setTimeout(function () {{ fetch('{source}').then(function (r) {{ return r.json(); }})"
        ".then(function (d) { document.getElementById('app').innerHTML = d.html; }); }, "
        f"{DELAY_MS});"
        "</script></body></html>"
    ).encode()


def pages(articles: int = 12, broken: Iterable[int] = ()) -> list[tuple[str, int, str, bytes]]:
    """(url, status, content type, body) of every response of the site."""
    broken = set(broken)
    links = " ".join(f"<li><a href='/articles/{n}'>{article_title(n)}</a></li>" for n in range(1, articles + 1))
    served = [
        (f"{HOST}/", 200, "text/html", _shell("Harbour news — front page", "/api/front.json")),
        (f"{HOST}/api/front.json", 200, "application/json", json.dumps({"html": f"<ul>{links}</ul>"}).encode()),
        (f"{HOST}/robots.txt", 200, "text/plain", b"User-agent: *\nAllow: /\n"),
    ]
    for n in range(1, articles + 1):
        served.append((f"{HOST}/articles/{n}", 200, "text/html",
                       _shell(article_title(n), f"/api/articles/{n}{'-gone' if n in broken else ''}.json")))
        neighbours = " ".join(f"<a href='/articles/{m}'>{article_title(m)}</a>"
                              for m in (n - 1, n + 1) if 1 <= m <= articles)
        body = f"<h1>{article_title(n)}</h1><p>{article_text(n)}</p><nav><a href='/'>Front page</a> {neighbours}</nav>"
        served.append((f"{HOST}/api/articles/{n}.json", 200, "application/json", json.dumps({"html": body}).encode()))
    return served


def write(path: Path, articles: int = 12, broken: Iterable[int] = ()) -> Path:
    """The site as a gzipped WARC at *path* (one response record per URL)."""
    with path.open("wb") as f:
        writer = WARCWriter(f, gzip=True)
        for url, status, content_type, body in pages(articles, broken):
            headers = StatusAndHeaders(f"{status} OK" if status == 200 else f"{status} X",
                                       [("Content-Type", content_type), ("Content-Length", str(len(body)))],
                                       protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(url, "response", payload=BytesIO(body),
                                                          length=len(body), http_headers=headers))
    return path
