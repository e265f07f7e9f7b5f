"""The search page and the JSON API, served by Twisted (``scrapy serve``).

* ``/?q=…&page=N`` — the search page: a query box, ten results a page
  (title, URL, snippet with the matching words in bold, the votes that
  matched), links to the previous and next pages;
* ``/api/search?q=…&page=N&size=10`` — the same results as JSON;
* ``/api/backlinks?url=…`` — the pages of the collection that link to a page;
* ``/api/status`` — the current collection and its size.

Bad input (an empty query, a page number that is not one) gets a message on
the page, or ``{"error": …}`` with status 400 from the API.
"""

from __future__ import annotations

import html
import json
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from twisted.web import resource, server

from crawlproject.search.engine import QueryError
from crawlproject.search.query_log import QueryLog
from crawlproject.web.urls import canonicalize

if TYPE_CHECKING:
    from twisted.web.server import Request

    from crawlproject.search.engine import Results, SearchEngine

PAGE_SIZE = 10
MAX_PAGE_SIZE = 100

_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 52rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
form { display: flex; gap: .5rem; margin-bottom: 1.5rem; }
input[name=q] { flex: 1; font-size: 1.1rem; padding: .4rem .6rem; }
button { font-size: 1.1rem; padding: .4rem 1rem; }
.result { margin-bottom: 1.3rem; }
.result a.title { font-size: 1.1rem; }
.url { color: #17692c; font-size: .9rem; word-break: break-all; }
.snippet { margin: .2rem 0; }
.votes { color: #666; font-size: .85rem; }
.error { color: #a00; }
.summary, nav { color: #555; margin: 1rem 0; }
nav a { margin-right: 1rem; }
"""


def _argument(request: Request, name: str, default: str = "") -> str:
    values = request.args.get(name.encode()) or []
    return values[0].decode("utf-8", "replace") if values else default


def _positive(value: str, name: str, maximum: int = 10**6) -> int:
    try:
        number = int(value)
    except ValueError:
        raise QueryError(f"{name} must be a whole number, got {value!r}") from None
    if not 1 <= number <= maximum:
        raise QueryError(f"{name} must be between 1 and {maximum}, got {number}")
    return number


class SearchPage(resource.Resource):
    isLeaf = True

    def __init__(self, engine: SearchEngine, title: str = "crawlproject search", log: QueryLog | None = None):
        super().__init__()
        self.engine = engine
        self.title = title
        self.log = log

    def render_GET(self, request: Request) -> bytes:  # noqa: N802 (Twisted's name)
        query = _argument(request, "q")
        body, error, results, page = "", "", None, 1
        if query:
            try:
                page = _positive(_argument(request, "page", "1"), "page")
                results = self.engine.search(query, limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE)
                if self.log is not None and page == 1:
                    self.log.record(query, results.total)
            except QueryError as exc:
                error = str(exc)
                request.setResponseCode(400)
        if error:
            body = f'<p class="error" id="error">{html.escape(error)}</p>'
        elif results is not None:
            body = self._results(results, page)
        request.setHeader(b"Content-Type", b"text/html; charset=utf-8")
        return (
            "<!doctype html><html lang=en><head><meta charset=utf-8>"
            f"<title>{html.escape((query + ' – ') if query else '')}{html.escape(self.title)}</title>"
            f'<meta name=viewport content="width=device-width, initial-scale=1"><style>{_STYLE}</style></head><body>'
            f"<h1>{html.escape(self.title)}</h1>"
            f'<form action="/" method="get" role="search"><input name="q" id="q" value="{html.escape(query)}" '
            'placeholder="Search the collection" autofocus aria-label="query">'
            '<button type="submit" id="go">Search</button></form>'
            f"{body}</body></html>"
        ).encode()

    def _results(self, results: Results, page: int) -> str:
        if not results.hits:
            return f'<p class="summary" id="summary">No page matches <b>{html.escape(results.query)}</b>.</p>'
        first, last = results.offset + 1, results.offset + len(results.hits)
        parts = [f'<p class="summary" id="summary">Results {first}–{last} of {results.total} '
                 f"for <b>{html.escape(results.query)}</b></p><ol start={first} id=results>"]
        for hit in results.hits:
            snippet = " ".join(f"<b>{html.escape(w)}</b>" if matched else html.escape(w) for w, matched in hit.snippet)
            votes = ", ".join(f"{html.escape(term)} ×{count}" for term, count in hit.votes.items())
            parts.append(
                f'<li class="result"><a class="title" href="{html.escape(hit.url)}">'
                f"{html.escape(hit.title or hit.url)}</a>"
                f'<div class="url">{html.escape(hit.url)}</div><div class="snippet">{snippet}</div>'
                f'<div class="votes">{hit.referrers} referring pages'
                f"{'; votes: ' + votes if votes else ''}</div></li>"
            )
        parts.append("</ol><nav>")
        if page > 1:
            parts.append(
                f'<a id="previous" href="/?{urlencode({"q": results.query, "page": page - 1})}">← Previous</a>'
            )
        if last < results.total:
            parts.append(f'<a id="next" href="/?{urlencode({"q": results.query, "page": page + 1})}">Next →</a>')
        parts.append("</nav>")
        return "".join(parts)


class JsonApi(resource.Resource):
    isLeaf = True

    def __init__(self, engine: SearchEngine, log: QueryLog | None = None):
        super().__init__()
        self.engine = engine
        self.log = log

    def render_GET(self, request: Request) -> bytes:  # noqa: N802 (Twisted's name)
        request.setHeader(b"Content-Type", b"application/json; charset=utf-8")
        request.setHeader(b"Access-Control-Allow-Origin", b"*")
        try:
            answer = self._answer(request)
        except QueryError as exc:
            request.setResponseCode(400)
            answer = {"error": str(exc)}
        return json.dumps(answer, ensure_ascii=False).encode("utf-8")

    def _answer(self, request: Request) -> dict[str, Any]:
        what = request.path.decode().rstrip("/").rsplit("/", 1)[-1]
        if what == "search":
            size = _positive(_argument(request, "size", str(PAGE_SIZE)), "size", MAX_PAGE_SIZE)
            page = _positive(_argument(request, "page", "1"), "page")
            query = _argument(request, "q")
            results = self.engine.search(query, limit=size, offset=(page - 1) * size)
            if self.log is not None and page == 1:
                self.log.record(query, results.total)
            return {"query": query, "terms": results.terms, "total": results.total, "page": page,
                    "results": [hit.as_json() for hit in results.hits]}
        if what == "backlinks":
            url = _argument(request, "url")
            if not url:
                raise QueryError("give the page: /api/backlinks?url=…")
            key = canonicalize(url)
            return {"url": url, "key": key, "backlinks": self.engine.backlinks(key)}
        if what == "status":
            return {"collection": str(self.engine.collection.folder), "pages": self.engine.page_count()}
        request.setResponseCode(404)
        return {"error": f"no such API: {request.path.decode()} (search, backlinks, status)"}


def site(engine: SearchEngine, log: QueryLog | None = None) -> server.Site:
    """The search page and the API; every query they answer (its first page)
    logged in *log* (crawlproject.search.query_log: what the nights read)."""
    return server.Site(_Root(SearchPage(engine, log=log), JsonApi(engine, log)))


class _Root(resource.Resource):
    """``/api/…`` to the API, anything else to the search page."""

    def __init__(self, page: SearchPage, api: JsonApi):
        super().__init__()
        self.page, self.api = page, api

    def getChild(self, path: bytes, request: Request) -> resource.Resource:  # noqa: N802 (Twisted's name)
        if path == b"api":
            return self.api
        assert request.postpath is not None and request.prepath is not None
        request.postpath.insert(0, path)
        request.prepath.pop()
        return self.page

    def render_GET(self, request: Request) -> bytes:  # noqa: N802 (Twisted's name)
        return self.page.render_GET(request)
