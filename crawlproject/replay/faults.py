"""The worst of the web, injected by the replay: a rules file says which URLs
misbehave and how, so tests and benchmarks can meet, on loopback, what a
crawler meets in the wild.

A rules file is JSON: ``{"rules": [{"url": PATTERN, "fault": KIND, ...}]}``.
``PATTERN`` is a shell-style pattern over the full URL (``*`` matches
anything, ``http://trap.test/cal/*``); the first rule that matches a request
decides. robots.txt is a URL like any other (``http://h.test/robots.txt``).

Faults that break the answer: ``slow`` (``seconds`` before the first byte),
``reset`` (the connection is cut after ``after_bytes`` of a promised body),
``endless`` (a body that never ends), ``status`` (``status`` for the first
``times`` requests, then the archived page or the rule's page), ``redirect``
(to ``location``), ``redirect_loop``, ``redirect_chain`` (``hops`` redirects,
then a page).

Faults in the content, served with status 200: ``huge`` (``bytes`` of HTML,
10 MB by default), ``binary`` (random bytes labelled text/html), ``charset``
(``text`` encoded in ``encoding`` while the header says ``declared``, or
says nothing when ``declared`` is empty; ``meta`` adds a conflicting
``<meta charset>``), ``many_links`` (``count`` links), ``broken_html``
(unclosed tags, ``frames`` nested framesets), ``body`` (the rule's
``body`` text, with ``content_type``).

Traps, pages generated for every URL they match: ``calendar`` (each month
links to the next and the previous, forever), ``counter`` (``?d=N`` links
to ``?d=N+1``), ``session_ids`` (every page
links to itself under a fresh session id), ``growing_path`` (``/a/`` links
to ``/a/a/``, …), ``query_permutations`` (links to every permutation of the
page's query parameters, plus one parameter more).
"""

from __future__ import annotations

import fnmatch
import itertools
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

KINDS = frozenset({
    "slow", "reset", "endless", "status", "redirect", "redirect_loop", "redirect_chain",
    "huge", "binary", "charset", "many_links", "broken_html", "body",
    "calendar", "counter", "session_ids", "growing_path", "query_permutations",
})
HTML = [("Content-Type", "text/html")]


@dataclass
class Rule:
    pattern: str
    kind: str
    options: dict[str, Any]
    served: int = 0  # requests answered under this rule

    def matches(self, url: str) -> bool:
        return fnmatch.fnmatchcase(url, self.pattern)


@dataclass
class Answer:
    """A generated answer."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes
    reason: str = "OK"


@dataclass
class FaultRules:
    rules: list[Rule] = field(default_factory=list)

    @classmethod
    def from_file(cls, path: str | Path | None) -> FaultRules:
        if not path:
            return cls()
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"fault rules file {path} is not valid JSON: {exc}") from None
        rules = []
        for number, rule in enumerate(data.get("rules", []) if isinstance(data, dict) else [], 1):
            if not isinstance(rule, dict) or "url" not in rule or rule.get("fault") not in KINDS:
                raise ValueError(
                    f"rule {number} of {path} needs \"url\" and a \"fault\" among {', '.join(sorted(KINDS))}"
                )
            options = {k: v for k, v in rule.items() if k not in ("url", "fault")}
            rules.append(Rule(rule["url"], rule["fault"], options))
        return cls(rules)

    def match(self, url: str) -> Rule | None:
        for rule in self.rules:
            if rule.matches(url):
                return rule
        return None


def content(rule: Rule, url: str) -> Answer:
    """The page a content fault or a trap serves for *url*."""
    options = rule.options
    kind = rule.kind
    if kind == "huge":
        size = int(options.get("bytes", 10_000_000))
        head = b"<html><head><title>huge</title></head><body>" + b"".join(
            f'<a href="/huge-link-{i}">link {i}</a> '.encode() for i in range(20)
        )
        filler = b"<p>" + b"lorem ipsum dolor sit amet " * 40 + b"</p>\n"
        return Answer(200, HTML, head + filler * max(1, (size - len(head)) // len(filler)))
    if kind == "binary":
        rng = random.Random(options.get("seed", 0))
        return Answer(200, HTML, bytes(rng.getrandbits(8) for _ in range(int(options.get("bytes", 50_000)))))
    if kind == "charset":
        text = str(options.get("text", "Vorlesung Übungsblätter café naïve — “quotes”"))
        meta = f'<meta charset="{options["meta"]}">' if options.get("meta") else ""
        body = (
            f"<html><head>{meta}<title>{text}</title></head>"
            f"<body><p>{text}</p><a href='/after-charset'>next</a></body></html>"
        )
        declared = options.get("declared", "utf-8")
        content_type = f"text/html; charset={declared}" if declared else "text/html"
        return Answer(
            200,
            [("Content-Type", content_type)],
            body.encode(str(options.get("encoding", "latin-1")), errors="replace"),
        )
    if kind == "many_links":
        count = int(options.get("count", 50_000))
        links = "".join(f'<a href="/many/{i}">{i}</a>\n' for i in range(count))
        return Answer(200, HTML, f"<html><body>{links}</body></html>".encode())
    if kind == "broken_html":
        depth = int(options.get("frames", 40))
        frames = "<frameset><frame src='/inner'>" * depth + "<noframes>"
        body = f"<html><body><p>unclosed <b><i><table><tr><td>cell<a href='/ok-1'>one<a href=/ok-2>two {frames}<div"
        return Answer(200, HTML, body.encode())
    if kind == "body":
        return Answer(
            200,
            [("Content-Type", str(options.get("content_type", "text/html")))],
            str(options.get("body", "")).encode(),
        )
    return trap_page(kind, url)


def trap_page(kind: str, url: str) -> Answer:
    parts = urlsplit(url)
    links: list[str] = []
    if kind == "calendar":
        numbers = [int(p) for p in parts.path.strip("/").split("/")[-2:] if p.isdigit()]
        year, month = numbers if len(numbers) == 2 else (2026, 1)
        base = parts.path.rstrip("/").rsplit("/", 2)[0] if len(numbers) == 2 else parts.path.rstrip("/")
        for step in (-1, 1):
            y, m = divmod(year * 12 + month - 1 + step, 12)
            links.append(f"{base}/{y}/{m + 1:02d}/")
    elif kind == "counter":
        number = dict(parse_qsl(parts.query)).get("d", "0")
        links = [f"{parts.path}?d={int(number) + 1 if number.isdigit() else 1}"]
    elif kind == "session_ids":
        sid = random.Random(url).getrandbits(64)
        links = [f"{parts.path}?sid={sid:x}", f"{parts.path};jsessionid={sid:X}", "/real-page"]
    elif kind == "growing_path":
        links = [parts.path.rstrip("/") + "/a/"]
    elif kind == "query_permutations":
        params = parse_qsl(parts.query) or [("a", "1")]
        for order in itertools.islice(itertools.permutations(params), 6):
            links.append(urlunsplit(("", "", parts.path, urlencode(order), "")))
        links.append(urlunsplit(("", "", parts.path, urlencode([*params, (f"p{len(params)}", "1")]), "")))
    anchors = "".join(f'<a href="{link}">{link}</a> ' for link in links)
    return Answer(
        200, HTML, f"<html><head><title>{kind}</title></head><body><p>{kind} trap</p>{anchors}</body></html>".encode()
    )


def redirect_target(kind: str, url: str, options: dict[str, object]) -> str:
    """Where a redirect fault sends *url*: elsewhere, back and forth, or one hop on."""
    if kind == "redirect":
        return str(options.get("location", "/"))
    if kind == "redirect_loop":
        return url[: -len("/again")] if url.endswith("/again") else url.rstrip("/") + "/again"
    hops = int(str(options.get("hops", 30)))
    head, _, last = url.rstrip("/").rpartition("/")
    step = int(last) if last.isdigit() else 0
    base = head if last.isdigit() else url.rstrip("/")
    return f"{base}/{step + 1}" if step < hops else str(options.get("final", "/"))
