"""A big web generated on demand: what a long crawl meets, on loopback.

The bundled corpora hold a few thousand pages; a crawl that runs for hours
meets millions of URLs on thousands of hosts, mirrors, traps and sitemaps.
:class:`SyntheticWeb` answers any URL of such a web as the replay's archive
does (``lookup``), computing the page from the URL and a seed — nothing is
stored, so a web of a million pages costs the replay a few megabytes, and
the same seed always gives the same web.

What it is (docs/synthetic-web.md has the numbers):

* hosts ``www.siteN.test`` whose sizes follow a Zipf law (a few big sites,
  many small ones); each host has a topic — a label of the corpora whose
  real paragraphs (crawlproject.corpus.paragraphs) its pages recombine, four
  in five pages on the host's topic;
* links with a power-law out-degree: most to the same host (the page's
  directory, or the host's popular pages), some to other hosts, chosen by
  popularity and mostly of the same topic, so the in-degree is power-law
  too; anchors are the target's title;
* dead links (404), links robots.txt disallows, pages moved by a 301, pages
  only a sitemap lists (no link reaches them), hostile pages (a wrong
  charset, broken HTML, 3 MB of text, binary bytes);
* hosts that mirror another one (the same pages, links rewritten) or serve
  near-copies of it (a notice added), hosts that are traps (calendars,
  session ids, growing paths, query permutations: crawlproject.replay.faults),
  hosts that answer 503 to everything;
* robots.txt with a ``Sitemap:`` line on most hosts; sitemaps list every
  page of the host, big hosts through a sitemap index of gzipped sitemaps;
  a few hosts serve broken sitemap XML.

What it is not: a web to measure crawl *quality* on — its topics are labels
stitched together, its links know nothing of relevance beyond the topic of
a host. Speed, memory, resilience and the handling of mirrors, traps and
sitemaps are measured on it; quality stays on the real corpora.
"""

from __future__ import annotations

import gzip
import html
import math
import random
from dataclasses import asdict
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import numpy as np
import xxhash

from crawlproject.replay.archive import ArchivedResponse
from crawlproject.replay.faults import Rule, content, trap_page
from crawlproject.replay.web_shape import (
    HOSTILE_KINDS,
    HOSTILE_OPTIONS,
    KINDS,
    MAX_MIRRORED,
    ORDINARY_TOP,
    TRAP_ENTRIES,
    TRAP_KINDS,
    SyntheticError,
    WebShape,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

HTML_TYPE = [("Content-Type", "text/html; charset=utf-8")]
_SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


class SyntheticWeb:
    """Every page of a generated web, answered by URL (the replay's archive
    interface: ``lookup(url, as_of)``, ``len``)."""

    dated = False
    first_date = last_date = 0.0

    def __init__(self, shape: WebShape, topics: dict[str, list[str]]):
        shape.check()
        if not topics:
            raise SyntheticError("a synthetic web needs paragraphs of at least one topic")
        self.shape = shape
        self.topic_names = sorted(topics)
        self.paragraphs = [topics[name] for name in self.topic_names]
        rng = np.random.default_rng(shape.seed)
        count = shape.host_count()
        weights = 1.0 / np.arange(1, count + 1) ** shape.host_exponent
        sizes = np.maximum(1, np.floor(shape.pages * weights / weights.sum())).astype(np.int64)
        sizes[0] += max(0, shape.pages - int(sizes.sum()))
        self.topic = rng.integers(0, len(self.topic_names), count)
        self.kind = np.zeros(count, dtype=np.int8)  # index into KINDS
        self.original = np.arange(count)  # the host a mirror or near-copy copies
        self._assign_kinds(rng, sizes)
        self.size = sizes
        self.trap_kind = rng.integers(0, len(TRAP_KINDS), count)
        draws = rng.random(count)
        no_sitemap, bad = shape.no_sitemap_hosts, shape.bad_sitemap_hosts
        self.sitemap = np.where(draws < bad, 2, np.where(draws < bad + no_sitemap, 0, 1))  # 0 none, 1 listed, 2 broken
        self.names = [f"www.site{h}.test" for h in range(count)]
        self._host_of = {name: h for h, name in enumerate(self.names)}
        # Hosts by topic, most popular (lowest index) first: links pick among them.
        self._topic_hosts = [np.flatnonzero(self.topic == t) for t in range(len(self.topic_names))]
        self.total = int(self.size.sum())

    def _assign_kinds(self, rng: np.random.Generator, sizes: np.ndarray) -> None:
        count = len(sizes)
        shape = self.shape
        candidates = rng.permutation(np.arange(min(ORDINARY_TOP, count - 1), count))
        wanted = [
            (KINDS.index("mirror"), shape.mirror_hosts), (KINDS.index("near_copy"), shape.near_copy_hosts),
            (KINDS.index("trap"), shape.trap_hosts), (KINDS.index("dead"), shape.dead_hosts),
        ]
        start = 0
        for kind, share in wanted:
            end = start + math.ceil(share * count)
            self.kind[candidates[start:end]] = kind
            start = end
        ordinary = np.flatnonzero((self.kind == 0) & (sizes <= MAX_MIRRORED))
        for host in np.flatnonzero(np.isin(self.kind, (KINDS.index("mirror"), KINDS.index("near_copy")))):
            source = int(ordinary[rng.integers(0, len(ordinary))]) if len(ordinary) else 0
            self.original[host] = source
            self.topic[host] = self.topic[source]
            sizes[host] = sizes[source]

    # -- the archive interface ---------------------------------------------

    def __len__(self) -> int:
        return self.total

    def live_pages(self, host: str, as_of: float) -> list[tuple[str, float]]:
        return []  # an undated web: no sitemap of its own

    def lookup(self, url: str, as_of: float | None = None) -> ArchivedResponse | None:
        parts = urlsplit(url)
        host = self._host_of.get((parts.hostname or "").lower())
        if host is None or parts.scheme != "http":
            return None
        kind = KINDS[self.kind[host]]
        if kind == "dead":
            return ArchivedResponse(url, 503, "Service Unavailable", HTML_TYPE, b"<html><body>down</body></html>")
        path = parts.path or "/"
        if path == "/robots.txt":
            return self._text(url, self.robots(host))
        if kind == "trap" and path.startswith("/trap"):
            page = trap_page(TRAP_KINDS[self.trap_kind[host]], url)
            return ArchivedResponse(url, page.status, page.reason, page.headers, page.body)
        if path.startswith("/sitemap"):
            return self._sitemap(url, host, path)
        if path.startswith("/private/"):
            return ArchivedResponse(url, 200, "OK", HTML_TYPE, b"<html><body><p>staff only</p></body></html>")
        if parts.query:
            return None
        return self._page(url, host, path)

    def _page(self, url: str, host: int, path: str) -> ArchivedResponse | None:
        number, moved_form = self._page_number(host, path)
        if number is None:
            return None
        if self._moved(host, number) and not moved_form:
            location = f"http://{self.names[host]}{self._final_path(host, number)}"
            return ArchivedResponse(url, 301, "Moved Permanently", [("Location", location)], b"")
        if moved_form and not self._moved(host, number):
            return None
        if self._hostile(host, number):
            kind = HOSTILE_KINDS[self._draw(host, number, "hostile-kind") % len(HOSTILE_KINDS)]
            page = content(Rule(url, kind, dict(HOSTILE_OPTIONS.get(kind, {}))), url)
            return ArchivedResponse(url, page.status, page.reason, page.headers, page.body)
        return ArchivedResponse(url, 200, "OK", HTML_TYPE, self.render(host, number).encode("utf-8"))

    def _page_number(self, host: int, path: str) -> tuple[int | None, bool]:
        """The page a path names on *host*, and whether it is the moved form."""
        if path == "/":
            return 0, False
        parts = path.strip("/").split("/")
        if len(parts) != 2 or not parts[0].startswith("d") or not parts[0][1:].isdigit():
            return None, False
        moved_form = path.endswith("/")
        digits = parts[1] if moved_form else parts[1].removesuffix(".html")
        if not digits.isdigit() or (not moved_form and not parts[1].endswith(".html")) or digits != str(int(digits)):
            return None, False
        number = int(digits)
        if not 0 < number < self.size[host] or int(parts[0][1:]) != number // self.shape.section_size:
            return None, False
        return number, moved_form

    # -- what a page is -------------------------------------------------------

    def _draw(self, host: int, number: int, what: str) -> int:
        return xxhash.xxh3_64_intdigest(f"{what}:{host}/{number}".encode(), seed=self.shape.seed)

    def _chance(self, host: int, number: int, what: str) -> float:
        return self._draw(host, number, what) / 2.0**64

    def _moved(self, host: int, number: int) -> bool:
        return number > 0 and self._chance(int(self.original[host]), number, "moved") < self.shape.redirects

    def _orphan(self, host: int, number: int) -> bool:
        return number > 0 and self._chance(int(self.original[host]), number, "orphan") < self.shape.orphans

    def _hostile(self, host: int, number: int) -> bool:
        return number > 0 and self._chance(int(self.original[host]), number, "hostile") < self.shape.hostile_pages

    def _final_path(self, host: int, number: int) -> str:
        if number == 0:
            return "/"
        section = number // self.shape.section_size
        return f"/d{section}/{number}/" if self._moved(host, number) else f"/d{section}/{number}.html"

    def url(self, host: int, number: int) -> str:
        """The URL links use for a page (a moved page's old one)."""
        if number == 0:
            return f"http://{self.names[host]}/"
        return f"http://{self.names[host]}/d{number // self.shape.section_size}/{number}.html"

    def final_url(self, host: int, number: int) -> str:
        """The URL a page is served at (after its redirect): what sitemaps list."""
        return f"http://{self.names[host]}{self._final_path(host, number)}"

    def _plan(self, host: int, number: int) -> tuple[random.Random, int, list[str]]:
        """The random stream of a page of *host*'s original, its topic and paragraphs."""
        source = int(self.original[host])
        rng = random.Random(self._draw(source, number, "page"))
        topic = int(self.topic[source]) if rng.random() < self.shape.on_topic else rng.randrange(len(self.paragraphs))
        pool = self.paragraphs[topic]
        chosen = [pool[rng.randrange(len(pool))] for _ in range(rng.randint(3, 7))]
        return rng, topic, chosen

    def title(self, host: int, number: int) -> str:
        return " ".join(self._plan(host, number)[2][0].split()[:7])

    def topic_of(self, url: str) -> str | None:
        """The topic of the page at *url* (its label), None if there is none."""
        parts = urlsplit(url)
        host = self._host_of.get((parts.hostname or "").lower())
        if host is None or KINDS[self.kind[host]] in ("dead",):
            return None
        number, _ = self._page_number(host, parts.path or "/")
        return None if number is None else self.topic_names[self._plan(host, number)[1]]

    def links(self, host: int, number: int) -> list[tuple[str, str]]:
        """(URL, anchor) of the page's links, as *host* serves them."""
        rng, _, chosen = self._plan(host, number)
        shape = self.shape
        source = int(self.original[host])
        words = " ".join(chosen).split()
        degree = min(shape.max_links, max(3, int(shape.mean_links / 2 * rng.paretovariate(2.0))))
        found: list[tuple[str, str]] = []
        name = self.names[host]
        for _ in range(degree):
            draw = rng.random()
            if draw < shape.dead_links:
                path = f"/d{number // shape.section_size}/gone-{rng.randrange(10**6)}.html"
                found.append((f"http://{name}{path}", " ".join(rng.sample(words, min(3, len(words))))))
                continue
            draw -= shape.dead_links
            if draw < shape.disallowed_links:
                found.append((f"http://{name}/private/{rng.randrange(1000)}.html", "staff pages"))
                continue
            draw -= shape.disallowed_links
            target = self._other_host(rng, source) if draw < shape.cross_host else source
            size = int(self.size[target])
            if target == source and rng.random() < 0.4:  # a neighbour in the same directory
                section = number // shape.section_size * shape.section_size
                page = min(size - 1, section + rng.randrange(shape.section_size))
            else:  # a popular page: low numbers, cubed
                page = int(size * rng.random() ** 3)
            while self._orphan(target, page):
                page -= 1
            shown = host if target == source else target  # a mirror links to itself
            found.append((self.url(shown, page), self.title(target, page)))
        if KINDS[self.kind[host]] == "trap" and number % 10 == 0:
            found.append((f"http://{name}{TRAP_ENTRIES[TRAP_KINDS[self.trap_kind[host]]]}", "archive"))
        return found

    def _other_host(self, rng: random.Random, source: int) -> int:
        """Another host, by popularity (the square of a uniform draw favours
        low indices, the big hosts), mostly one of the same topic."""
        if rng.random() < self.shape.same_topic_host:
            hosts = self._topic_hosts[int(self.topic[source])]
            return int(hosts[int(len(hosts) * rng.random() ** 2)])
        return int(len(self.names) * rng.random() ** 2)

    def render(self, host: int, number: int) -> str:
        """The HTML of a page as *host* serves it."""
        _, _, chosen = self._plan(host, number)
        links = self.links(host, number)
        title = html.escape(" ".join(chosen[0].split()[:7]))
        section = number // self.shape.section_size
        first = max(1, section * self.shape.section_size)
        while first > 1 and self._orphan(host, first):
            first -= 1
        parts = [
            f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{title}</title></head><body>",
            f'<p class="nav"><a href="/">{html.escape(self.title(host, 0))}</a> &gt; '
            f'<a href="{self.url(host, first)}">section {section}</a></p><h1>{title}</h1>',
        ]
        if KINDS[self.kind[host]] == "near_copy":
            parts.append(f"<p>This page is a copy kept by {self.names[host]}; see the original site for updates.</p>")
        inline = min(len(links), 2 * len(chosen))
        for index, paragraph in enumerate(chosen):
            anchors = " ".join(
                f'<a href="{html.escape(url)}">{html.escape(anchor)}</a>'
                for url, anchor in links[index:inline:len(chosen)]
            )
            parts.append(f"<p>{html.escape(paragraph)} {anchors}</p>")
        if len(links) > inline:
            items = "".join(f'<li><a href="{html.escape(u)}">{html.escape(a)}</a></li>' for u, a in links[inline:])
            parts.append(f"<ul>{items}</ul>")
        parts.append("</body></html>")
        return "\n".join(parts)

    # -- robots.txt and sitemaps ----------------------------------------------

    def robots(self, host: int) -> str:
        lines = ["User-agent: *", "Disallow: /private/"]
        if self.sitemap[host] and KINDS[self.kind[host]] != "trap":
            lines.append(f"Sitemap: http://{self.names[host]}/sitemap.xml")
        return "\n".join(lines) + "\n"

    def _text(self, url: str, text: str) -> ArchivedResponse:
        return ArchivedResponse(url, 200, "OK", [("Content-Type", "text/plain")], text.encode())

    def _sitemap(self, url: str, host: int, path: str) -> ArchivedResponse | None:
        if not self.sitemap[host] or KINDS[self.kind[host]] == "trap":
            return None
        name, size, chunk = self.names[host], int(self.size[host]), self.shape.sitemap_chunk
        xml = [("Content-Type", "application/xml")]
        if path == "/sitemap.xml":
            if self.sitemap[host] == 2:  # broken: cut in the middle of a tag
                body = f'<?xml version="1.0"?><urlset><url><loc>http://{name}/</loc></url><url><lo'.encode()
                return ArchivedResponse(url, 200, "OK", xml, body)
            if size <= chunk:
                return ArchivedResponse(url, 200, "OK", xml, self._urlset(host, 0, size))
            entries = "".join(
                f"<sitemap><loc>http://{name}/sitemap-{i}.xml.gz</loc></sitemap>"
                for i in range(math.ceil(size / chunk))
            )
            index = (
                f'<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="{_SITEMAP_NS}">{entries}</sitemapindex>'
            )
            return ArchivedResponse(url, 200, "OK", xml, index.encode())
        stem = path.removeprefix("/sitemap-").removesuffix(".xml.gz")
        if self.sitemap[host] != 1 or not stem.isdigit() or not path.endswith(".xml.gz") or int(stem) * chunk >= size:
            return None
        start = int(stem) * chunk
        body = gzip.compress(self._urlset(host, start, min(size, start + chunk)), mtime=0)
        return ArchivedResponse(url, 200, "OK", [("Content-Type", "application/x-gzip")], body)

    def _urlset(self, host: int, start: int, stop: int) -> bytes:
        entries = "".join(f"<url><loc>{self.final_url(host, n)}</loc></url>" for n in range(start, stop))
        return f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="{_SITEMAP_NS}">{entries}</urlset>'.encode()

    # -- for tests, benchmarks and people ----------------------------------------

    def hosts(self, kind: str) -> list[str]:
        """The names of the hosts of one kind (KINDS), biggest first."""
        return [self.names[h] for h in np.flatnonzero(self.kind == KINDS.index(kind))]

    def _copies(self) -> np.ndarray:
        return np.flatnonzero(self.original != np.arange(len(self.names)))

    def original_of(self, name: str) -> str:
        """The host a mirror or near-copy copies (a host itself otherwise)."""
        return self.names[int(self.original[self._host_of[name]])]

    def host_index(self, name: str) -> int:
        return self._host_of[name]

    def seeds(self, count: int) -> list[str]:
        """Home pages of the *count* biggest hosts (ordinary sites all)."""
        return [self.url(h, 0) for h in range(min(count, ORDINARY_TOP, len(self.names)))]

    def pages_of(self, host: int) -> Iterator[str]:
        """Every page URL of a host, as served (after redirects)."""
        return (self.final_url(host, n) for n in range(int(self.size[host])))

    def describe(self) -> dict[str, object]:
        """What the web holds: for ``/_replay/synthetic`` and the docs."""
        kinds = {kind: int((self.kind == i).sum()) for i, kind in enumerate(KINDS)}
        return {
            "shape": asdict(self.shape), "pages": self.total, "hosts": len(self.names), "host_kinds": kinds,
            "topics": len(self.topic_names), "biggest_host": int(self.size.max()),
            "sitemaps": {"none": int((self.sitemap == 0).sum()), "listed": int((self.sitemap == 1).sum()),
                         "broken": int((self.sitemap == 2).sum())},
            "seeds": self.seeds(4),
            "examples": {kind: self.hosts(kind)[:3] for kind in KINDS if kind != "site"},
            "originals": {self.names[h]: self.names[int(self.original[h])] for h in self._copies()[:20]},
        }

