"""The dashboard's web server (Twisted, in the crawl's own reactor or in
``scrapy dashboard``):

* ``/`` — the page (``page.html``): charts that update every two seconds
  without reloading, drawn with Plotly.js served from the installed plotly
  package (``/static/plotly.min.js``: no CDN, crawls run offline too);
* ``/api/state`` — everything the page shows, as JSON;
* ``/api/labels`` — GET: the labels given; POST ``{"url": …, "relevant":
  true|false}``: label a fetched page (400 with a message otherwise);
* ``/metrics`` — Prometheus's text exposition (crawlproject.dashboard.metrics).

On loopback by default; bound elsewhere it needs a token (FOCUS_DASHBOARD_TOKEN),
given as ``Authorization: Bearer TOKEN`` or ``?token=TOKEN``.
"""

from __future__ import annotations

import hmac
import json
from importlib import resources
from typing import TYPE_CHECKING, Any, Protocol

from prometheus_client import CollectorRegistry, generate_latest
from twisted.web import resource, server

if TYPE_CHECKING:
    from twisted.web.server import Request


class DashboardBackend(Protocol):
    """What a dashboard shows and does: a live crawl, or a crawl read back."""

    def snapshot(self) -> dict[str, Any]:
        """The state the page and the metrics show."""
        ...

    def add_label(self, url: str, relevant: bool) -> dict[str, Any]:
        """Label a fetched page; raise ValueError with a message when it cannot be."""
        ...

    def scraped(self) -> None:
        """Prometheus has read the metrics (the last figures are out)."""
        ...


def _json(request: Request, body: Any, status: int = 200) -> bytes:
    request.setResponseCode(status)
    request.setHeader(b"Content-Type", b"application/json; charset=utf-8")
    request.setHeader(b"Cache-Control", b"no-store")
    return json.dumps(body).encode()


class _Guarded(resource.Resource):
    """A resource that wants the token when one is set."""

    isLeaf = True

    def __init__(self, token: str):
        super().__init__()
        self.token = token

    def render(self, request: Request) -> bytes:
        if self.token and not self._authorised(request):
            request.setResponseCode(401)
            return b"a token is needed: Authorization: Bearer TOKEN, or ?token=TOKEN"
        return bytes(super().render(request))

    def _authorised(self, request: Request) -> bool:
        header = (request.getHeader(b"authorization") or b"").decode("latin-1")
        given = header.removeprefix("Bearer ").strip() if header.startswith("Bearer ") else ""
        given = given or (request.args.get(b"token") or [b""])[0].decode("utf-8", "replace")
        return hmac.compare_digest(given.encode(), self.token.encode())


class DashboardPage(_Guarded):
    def render_GET(self, request: Request) -> bytes:  # noqa: N802 (Twisted's name)
        request.setHeader(b"Content-Type", b"text/html; charset=utf-8")
        return resources.files("crawlproject.dashboard").joinpath("page.html").read_bytes()


class Plotly(_Guarded):
    """Plotly.js, as the installed plotly package ships it."""

    def render_GET(self, request: Request) -> bytes:  # noqa: N802
        request.setHeader(b"Content-Type", b"application/javascript")
        request.setHeader(b"Cache-Control", b"max-age=86400")
        return resources.files("plotly").joinpath("package_data/plotly.min.js").read_bytes()


class State(_Guarded):
    def __init__(self, token: str, backend: DashboardBackend):
        super().__init__(token)
        self.backend = backend

    def render_GET(self, request: Request) -> bytes:  # noqa: N802
        return _json(request, self.backend.snapshot())


class Labels(_Guarded):
    def __init__(self, token: str, backend: DashboardBackend):
        super().__init__(token)
        self.backend = backend

    def render_GET(self, request: Request) -> bytes:  # noqa: N802
        return _json(request, self.backend.snapshot()["labels"])

    def render_POST(self, request: Request) -> bytes:  # noqa: N802
        try:
            body = json.loads(request.content.read() or b"{}")  # type: ignore[union-attr]
            if not isinstance(body, dict) or "url" not in body or "relevant" not in body:
                raise ValueError('send {"url": URL, "relevant": true|false}')
            from crawlproject.dashboard.labels import parse_label

            effect = self.backend.add_label(str(body["url"]), parse_label(body["relevant"]))
        except (ValueError, json.JSONDecodeError) as exc:
            return _json(request, {"error": str(exc)}, 400)
        return _json(request, effect)


class Metrics(_Guarded):
    def __init__(self, token: str, backend: DashboardBackend, registry: CollectorRegistry):
        super().__init__(token)
        self.backend = backend
        self.registry = registry

    def render_GET(self, request: Request) -> bytes:  # noqa: N802
        request.setHeader(b"Content-Type", b"text/plain; version=0.0.4; charset=utf-8")
        body = generate_latest(self.registry)
        self.backend.scraped()
        return body


def site(backend: DashboardBackend, registry: CollectorRegistry, token: str = "") -> server.Site:
    def tree(children: dict[bytes, Any]) -> Any:
        node: Any = resource.Resource()
        for name, child in children.items():
            node.putChild(name, child)
        return node

    root = tree({
        b"": DashboardPage(token),
        b"static": tree({b"plotly.min.js": Plotly(token)}),
        b"api": tree({b"state": State(token, backend), b"labels": Labels(token, backend)}),
        b"metrics": Metrics(token, backend, registry),
    })
    return server.Site(root)
