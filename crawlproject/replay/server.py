"""An HTTP proxy on 127.0.0.1 that answers from a WARC and never forwards.

A crawler that uses it as its proxy requests pages by their original
absolute URLs (``GET http://host/path HTTP/1.1``) and gets the archived
status, headers and body; a URL that is not archived gets 404, as a dead
link on the live web would. ``/robots.txt`` of a host comes from the archive
when it has one, else from a rules file (allow-all by default); a dated web
served with a clock answers ``/sitemap.xml`` (when not archived) with every
page of the host live then and, as ``lastmod``, when its version went live. Plain
requests with a ``Host`` header work too, so a browser or curl can look at
a page; a rules file of faults (crawlproject.replay.faults) makes chosen URLs
misbehave.

https: a client asks a proxy for an https URL with ``CONNECT host:443``. The
replay is the far end itself: it answers 200, speaks TLS on that connection
with a certificate of its own for that host (self-signed: Scrapy does not
verify the issuer, only the name; curl needs ``-k``), and
answers the requests inside as ``https://host/path`` from the archive, so a
WARC of today's web replays under its real URLs too.

A web that changes: with a clock (``--as-of``), each URL is answered by its
version live at that time (crawlproject.replay.archive), and the clock can
be moved while serving — ``POST /_replay/clock?t=2021-03-01T00:00:00Z`` to the
replay's own address (``GET`` reads it) — so a simulation steps through the
weeks. Conditional requests are answered as a real server does (RFC 9110
§13): ``If-None-Match`` against the version's ETag (weak comparison; ``*``
matches any), else ``If-Modified-Since`` against its Last-Modified, for GET
and HEAD of a 200 → ``304 Not Modified`` without a body.
"""

from __future__ import annotations

import json
import logging
import time
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Protocol
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import escape

from twisted.internet import reactor, task
from twisted.web import http

from crawlproject.replay.archive import format_time, parse_time
from crawlproject.replay.faults import HTML, FaultRules, Rule, content, redirect_target
from crawlproject.replay.tls import SelfSignedCertificates

if TYPE_CHECKING:
    from crawlproject.replay.archive import ArchivedResponse

logger = logging.getLogger(__name__)

ALLOW_ALL_ROBOTS = "User-agent: *\nDisallow:\n"
_NOT_FOUND_BODY = b"<html><body><h1>404 Not in archive</h1></body></html>"
CONTROL_PATH = "/_replay/"
#: Headers a 304 carries over from the 200 it stands for (RFC 9110 §15.4.5).
_NOT_MODIFIED_HEADERS = frozenset(
    {"etag", "last-modified", "date", "cache-control", "expires", "vary", "content-location"}
)


class Archive(Protocol):
    """What the replay answers from: a WARC (crawlproject.replay.archive) or
    a generated web (crawlproject.replay.synthetic)."""

    dated: bool  #: versions have dates: the clock chooses among them
    first_date: float
    last_date: float

    def lookup(self, url: str, as_of: float | None = None) -> ArchivedResponse | None:
        """The response archived for *url* (as of a time), None if there is none."""
        ...

    def live_pages(self, host: str, as_of: float) -> list[tuple[str, float]]:
        """(URL, when its version went live) of *host*'s pages as of a time (a dated web's sitemap)."""
        ...

    def __len__(self) -> int:
        """Number of responses (pages) it can answer."""
        ...


class RobotsRules:
    """robots.txt text per host.

    The rules file is either a plain robots.txt, served for every host, or a
    JSON object mapping host names to robots.txt text, with ``"*"`` as the
    fallback for hosts it does not name.
    """

    def __init__(self, by_host: dict[str, str], default: str):
        self.by_host = by_host
        self.default = default

    @classmethod
    def from_file(cls, path: str | Path | None) -> RobotsRules:
        if not path:
            return cls({}, ALLOW_ALL_ROBOTS)
        raw = Path(path).read_bytes()
        text = raw.decode("utf-8", errors="replace")
        if Path(path).suffix.lower() == ".json":
            try:
                mapping = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ValueError(f"robots rules file {path} is not valid JSON: {exc}") from None
            if not isinstance(mapping, dict) or not all(
                isinstance(v, str) for v in mapping.values()
            ):
                raise ValueError(
                    f"robots rules file {path} must map host names to robots.txt text"
                )
            default = mapping.pop("*", ALLOW_ALL_ROBOTS)
            return cls({host.lower(): rules for host, rules in mapping.items()}, default)
        return cls({}, text)

    def for_host(self, host: str) -> str:
        return self.by_host.get(host.lower(), self.default)


class ReplayRequest(http.Request):
    """One proxied request: look the URL up and answer from the archive."""

    arrived = 0.0

    def process(self) -> None:
        self.arrived = time.time()  # the access log's time: when the request reached the "host"
        factory: ReplayFactory = self.channel.factory  # type: ignore[union-attr]
        if self.method == b"CONNECT":
            self._tunnel(factory)
            return
        if self.uri.startswith(CONTROL_PATH.encode()):
            self._control(factory)
            return
        url = self._target_url()
        if factory.latency > 0:
            reactor.callLater(factory.latency, self._answer, factory, url)  # type: ignore
        else:
            self._answer(factory, url)

    def _target_url(self) -> str:
        uri = self.uri.decode("latin-1")
        if uri.startswith(("http://", "https://")):
            return uri
        origin = self._channel().tunnel_origin  # inside a CONNECT tunnel
        if origin is not None:
            return origin + uri
        host = (self.getHeader("host") or "localhost").lower()
        return f"http://{host}{uri}"

    def _tunnel(self, factory: ReplayFactory) -> None:
        """``CONNECT host:port``: answer 200, then speak TLS on this connection;
        the requests that follow are the https URLs of that host — or, to
        port 80, plain HTTP: its http URLs (Playwright's own fetch tunnels
        every request through a proxy so)."""
        authority = self.uri.decode("latin-1").lower()
        host, _, port = authority.rpartition(":")
        if not host or not port.isdigit():
            self._send(factory, 400, "Bad Request", [("Content-Type", "text/plain")], b"CONNECT host:port", authority)
            return
        channel = self._channel()
        plain = port == "80"
        channel.tunnel_origin = "http://" + host if plain else "https://" + (host if port == "443" else authority)
        channel.persistent = True  # a tunnel stays open whatever the CONNECT's HTTP version (Python's own: 1.0)
        self.setResponseCode(200, b"Connection established")
        self.setHeader(b"Content-Length", b"0")  # no chunked framing: nothing may follow the headers in the clear
        self.finish()
        if not plain:
            channel.transport.startTLS(factory.tls_options(host))  # type: ignore[union-attr]

    def _channel(self) -> ReplayChannel:
        assert isinstance(self.channel, ReplayChannel)  # noqa: S101 (ReplayFactory builds only these)
        return self.channel

    def _answer(self, factory: ReplayFactory, url: str, faults: bool = True) -> None:
        if self.channel is None:  # the client went away during the latency
            return
        rule = factory.faults.match(url) if faults else None
        if rule is not None:
            rule.served += 1
            self._fault(factory, rule, url)
            return
        scheme_and_host, _, path = url.partition("://")[2].partition("/")
        archived: ArchivedResponse | None = factory.archive.lookup(url, factory.as_of)
        if archived is None and "/" + path == "/robots.txt":
            # not archived: the rules file's (allow-all by default)
            body = factory.robots.for_host(scheme_and_host.split(":")[0]).encode("utf-8")
            self._send(factory, 200, "OK", [("Content-Type", "text/plain")], body, url)
            return
        if archived is None and "/" + path == "/sitemap.xml" and factory.archive.dated and factory.as_of is not None:
            self._send(factory, 200, "OK", [("Content-Type", "application/xml")], self._sitemap(factory, url), url)
            return
        if archived is None:
            headers = [("Content-Type", "text/html")]
            self._send(factory, 404, "Not Found", headers, _NOT_FOUND_BODY, url)
            return
        if archived.status == 200 and self._not_modified(archived.headers):
            kept = [(name, value) for name, value in archived.headers if name.lower() in _NOT_MODIFIED_HEADERS]
            self._send(factory, 304, "Not Modified", kept, b"", url)
            return
        self._send(
            factory, archived.status, archived.reason, archived.headers, archived.body, url
        )

    @staticmethod
    def _sitemap(factory: ReplayFactory, url: str) -> bytes:
        """A dated web's sitemap of the host, as of the clock: every page live then, with when its
        version went live as ``lastmod`` — what a site's CMS writes."""
        assert factory.as_of is not None  # noqa: S101 (only a dated web with a clock has one)
        pages = factory.archive.live_pages(urlsplit(url).hostname or "", factory.as_of)
        entries = "".join(f"<url><loc>{escape(page)}</loc><lastmod>{format_time(when)}</lastmod></url>"
                          for page, when in sorted(pages))
        return ('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                f"{entries}</urlset>\n").encode()

    def _not_modified(self, headers: list[tuple[str, str]]) -> bool:
        """RFC 9110 §13.2.2: If-None-Match first; If-Modified-Since only without it."""
        if self.method not in (b"GET", b"HEAD"):
            return False
        stored = {name.lower(): value for name, value in headers}
        if_none_match = self.getHeader("if-none-match")
        if if_none_match is not None:
            etag = stored.get("etag")
            tags = [tag.strip() for tag in if_none_match.split(",")]
            return etag is not None and ("*" in tags or _weak(etag) in {_weak(tag) for tag in tags})
        if_modified_since, last_modified = self.getHeader("if-modified-since"), stored.get("last-modified")
        if if_modified_since is None or last_modified is None:
            return False
        try:
            return parsedate_to_datetime(last_modified) <= parsedate_to_datetime(if_modified_since)
        except (TypeError, ValueError):
            return False  # an unparsable date is ignored, as RFC 9110 says

    def _control(self, factory: ReplayFactory) -> None:
        """``/_replay/clock``: read (GET) or move (POST/PUT ``?t=TIME``) the clock."""
        parts = urlsplit(self.uri.decode("latin-1"))
        describe = getattr(factory.archive, "describe", None)
        if parts.path == CONTROL_PATH + "synthetic" and describe is not None:
            self._send_json(200, describe())
            return
        if parts.path != CONTROL_PATH + "clock":
            self._send_json(404, {"error": f"no such control: {parts.path}"})
            return
        if self.method in (b"POST", b"PUT"):
            values = parse_qs(parts.query).get("t")
            if not values:
                self._send_json(400, {"error": "give the time as ?t=2021-03-01T00:00:00Z (or epoch seconds)"})
                return
            try:
                factory.as_of = parse_time(values[0])
            except ValueError as exc:
                self._send_json(400, {"error": str(exc)})
                return
            logger.info("Clock moved to %s", format_time(factory.as_of))
        archive = factory.archive
        self._send_json(200, {
            "as_of": format_time(factory.as_of) if factory.as_of is not None else None,
            "first_record": format_time(archive.first_date), "last_record": format_time(archive.last_date),
            "dated": archive.dated,
        })

    def _send_json(self, status: int, answer: dict[str, object]) -> None:
        body = json.dumps(answer).encode()
        self.setResponseCode(status)
        self.setHeader(b"Content-Type", b"application/json")
        self.setHeader(b"Content-Length", str(len(body)).encode())
        self.write(body)
        self.finish()

    # -- injected faults (crawlproject.replay.faults) ---------------------------

    def _fault(self, factory: ReplayFactory, rule: Rule, url: str) -> None:
        options, kind = rule.options, rule.kind
        if kind == "slow":
            reactor.callLater(float(options.get("seconds", 30)), self._answer, factory, url, False)  # type: ignore
        elif kind == "reset":
            self._reset(factory, url, int(options.get("after_bytes", 1000)))
        elif kind == "endless":
            self._endless(factory, url)
        elif kind == "status":
            if rule.served <= int(options.get("times", 1_000_000)):
                status = int(options.get("status", 503))
                self._send(factory, status, "Injected", HTML, f"<html><body>{status}</body></html>".encode(), url)
            else:
                self._answer(factory, url, faults=False)
        elif kind in ("redirect", "redirect_loop", "redirect_chain"):
            self._send(factory, 301, "Moved Permanently", [("Location", redirect_target(kind, url, options))], b"", url)
        else:
            page = content(rule, url)
            self._send(factory, page.status, page.reason, page.headers, page.body, url)

    def _reset(self, factory: ReplayFactory, url: str, after: int) -> None:
        """Promise a body, send part of it, and cut the connection."""
        self.setResponseCode(200)
        self.setHeader(b"Content-Type", b"text/html")
        self.setHeader(b"Content-Length", str(after * 4).encode())
        self.write(b"<html><body>" + b"x" * after)
        factory.log_access(self.arrived, self.method, url, 200)
        transport = self.channel.transport if self.channel is not None else None
        if transport is not None:
            reactor.callLater(0.05, transport.abortConnection)  # type: ignore

    def _endless(self, factory: ReplayFactory, url: str) -> None:
        """A body that never ends (until the client hangs up)."""
        self.setResponseCode(200)
        self.setHeader(b"Content-Type", b"text/html")
        self.write(b"<html><body>")
        factory.log_access(self.arrived, self.method, url, 200)
        chunk = b"<p>" + b"endless " * 1000 + b"</p>\n"

        def more() -> None:
            if self.channel is None or self.finished:
                loop.stop()
                return
            self.write(chunk)

        loop = task.LoopingCall(more)
        loop.start(0.005)
        self.notifyFinish().addBoth(lambda _: loop.stop() if loop.running else None)

    def _send(
        self,
        factory: ReplayFactory,
        status: int,
        reason: str,
        headers: list[tuple[str, str]],
        body: bytes,
        url: str = "",
    ) -> None:
        self.setResponseCode(status, reason.encode("latin-1", errors="replace"))
        for name, value in headers:
            self.responseHeaders.addRawHeader(
                name.encode("latin-1", errors="replace"),
                value.encode("latin-1", errors="replace"),
            )
        if status != 304:  # a 304 has no body and no framing of its own
            self.setHeader(b"Content-Length", str(len(body)).encode())
        if self.method != b"HEAD" and body:
            self.write(body)
        self.finish()
        factory.served += 1
        factory.log_access(self.arrived, self.method, url, status)


class ReplayChannel(http.HTTPChannel):
    #: "https://host[:port]" once a CONNECT made this connection a tunnel to that origin
    tunnel_origin: str | None = None


class ReplayFactory(http.HTTPFactory):
    protocol = ReplayChannel  # type: ignore[assignment]

    def __init__(
        self,
        archive: Archive,
        robots: RobotsRules,
        latency_ms: float = 0.0,
        access_log: IO[str] | None = None,
        faults: FaultRules | None = None,
        as_of: float | None = None,
    ):
        super().__init__()
        self.archive = archive
        #: The clock: answer each URL as it was at this time (None: first record, a plain WARC).
        self.as_of = as_of
        self.robots = robots
        self.faults = faults or FaultRules()
        self.latency = latency_ms / 1000.0
        self.access_log = access_log
        self.served = 0
        #: the server side of each CONNECT tunnel: a certificate naming its host
        self.tls_options = SelfSignedCertificates().for_host

    def buildProtocol(self, addr):  # type: ignore[no-untyped-def]
        channel = super().buildProtocol(addr)
        channel.requestFactory = ReplayRequest  # type: ignore
        return channel

    def log_access(self, arrived: float, method: bytes, url: str, status: int) -> None:
        if self.access_log is not None:
            self.access_log.write(
                f"{arrived:.6f}\t{method.decode('latin-1')}\t{url}\t{status}\n"
            )

    def log(self, request: http.Request) -> None:  # Twisted's own access log: off
        pass


def listen(factory: ReplayFactory, port: int = 0, interface: str = "127.0.0.1") -> int:
    """Start serving on loopback; return the port actually bound."""
    listening = reactor.listenTCP(port, factory, interface=interface)  # type: ignore
    bound: int = listening.getHost().port  # type: ignore
    return bound


def _weak(tag: str) -> str:
    """An entity tag without its weak marker (weak comparison, RFC 9110 §8.8.3.2)."""
    return tag[2:] if tag.startswith("W/") else tag
