"""The synthetic web: the same seed gives the same web, and it holds what a
long crawl meets (power-law hosts, mirrors, near-copies, traps, dead hosts,
redirects, orphans only a sitemap lists, broken sitemaps)."""

from __future__ import annotations

import gzip
import json
import re
import statistics
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from crawlproject.corpus.paragraphs import split_paragraphs
from crawlproject.replay.process import ReplayProcess
from crawlproject.replay.synthetic import SyntheticWeb
from crawlproject.replay.web_shape import (
    KINDS,
    SyntheticError,
    WebShape,
    load_paragraphs,
)

#: A small web with every kind of host in it.
SMALL = {
    "pages": 3000, "hosts": 40, "mirror_hosts": 0.1, "near_copy_hosts": 0.1, "trap_hosts": 0.05,
    "dead_hosts": 0.05, "bad_sitemap_hosts": 0.1, "no_sitemap_hosts": 0.1, "sitemap_chunk": 200,
}


@pytest.fixture(scope="session")
def small_web(paragraphs: Path) -> SyntheticWeb:
    return SyntheticWeb(WebShape(seed=7, **SMALL), load_paragraphs(paragraphs))


def sample_urls(web: SyntheticWeb, count: int = 300) -> list[str]:
    return [web.url(h % len(web.names), (h * 37) % int(web.size[h % len(web.names)])) for h in range(count)]


def test_the_same_seed_gives_the_same_web_and_another_seed_another(paragraphs: Path, small_web: SyntheticWeb) -> None:
    pool = load_paragraphs(paragraphs)
    again = SyntheticWeb(WebShape(seed=7, **SMALL), pool)
    other = SyntheticWeb(WebShape(seed=8, **SMALL), pool)
    urls = sample_urls(small_web)
    answers = [small_web.lookup(url) for url in urls]
    assert answers == [again.lookup(url) for url in urls]
    assert sum(a == b for a, b in zip(answers, (other.lookup(url) for url in urls), strict=True)) < len(urls) // 10


def test_hosts_have_power_law_sizes_and_every_kind(small_web: SyntheticWeb) -> None:
    sizes = sorted(small_web.size.tolist(), reverse=True)
    assert sizes[0] >= 10 * statistics.median(sizes)
    assert abs(sum(sizes) - 3000) < 400  # mirrors copy their original's size
    for kind in KINDS:
        assert small_web.hosts(kind), kind


def page_text(body: bytes) -> str:
    return re.sub(r"<[^>]+>", " ", body.decode()).split()


def test_a_mirror_serves_its_original_with_its_own_links_and_a_near_copy_adds_a_notice(small_web: SyntheticWeb) -> None:
    mirror = small_web.hosts("mirror")[0]
    original = small_web.original_of(mirror)
    for number in range(1, 6):
        copy = small_web.lookup(f"http://{mirror}/d0/{number}.html")
        source = small_web.lookup(f"http://{original}/d0/{number}.html")
        assert copy is not None and source is not None and copy.status == source.status
        if copy.status == 200:
            # the same page, once its own links name one host (the original may link to its mirror)
            assert copy.body.replace(mirror.encode(), original.encode()) == source.body.replace(
                mirror.encode(), original.encode())
    near = small_web.hosts("near_copy")[0]
    copy = small_web.lookup(f"http://{near}/")
    source = small_web.lookup(f"http://{small_web.original_of(near)}/")
    assert copy is not None and source is not None
    words, original_words = set(page_text(copy.body)), set(page_text(source.body))
    assert len(words & original_words) / len(words | original_words) > 0.8
    assert b"a copy kept by" in copy.body


def test_dead_hosts_traps_moved_pages_and_dead_links(small_web: SyntheticWeb) -> None:
    dead = small_web.lookup(f"http://{small_web.hosts('dead')[0]}/robots.txt")
    assert dead is not None and dead.status == 503
    trap = small_web.hosts("trap")[0]
    home = small_web.lookup(f"http://{trap}/")
    assert home is not None and b"/trap" in home.body
    entry = re.search(rb'href="(http://[^"]+/trap[^"]*)"', home.body)
    assert entry is not None
    trapped = small_web.lookup(entry.group(1).decode().replace("&amp;", "&"))
    assert trapped is not None and trapped.status == 200 and b"trap" in trapped.body
    host = small_web.host_index(small_web.seeds(1)[0].split("/")[2])
    moved = [n for n in range(1, int(small_web.size[host])) if small_web._moved(host, n)]
    assert moved
    answer = small_web.lookup(small_web.url(host, moved[0]))
    assert answer is not None and answer.status == 301
    location = dict(answer.headers)["Location"]
    final = small_web.lookup(location)
    assert final is not None and final.status == 200
    assert small_web.lookup(f"http://{small_web.names[host]}/d0/gone-1.html") is None


def test_orphans_are_linked_from_nowhere_but_listed_in_the_sitemap(small_web: SyntheticWeb) -> None:
    host = 0
    name = small_web.names[host]
    size = int(small_web.size[host])
    orphans = {small_web.url(host, n) for n in range(size) if small_web._orphan(host, n)}
    assert orphans
    linked = {url for n in range(size) for url, _ in small_web.links(host, n)}
    assert not orphans & linked
    robots = small_web.lookup(f"http://{name}/robots.txt")
    assert robots is not None and f"Sitemap: http://{name}/sitemap.xml".encode() in robots.body
    index = small_web.lookup(f"http://{name}/sitemap.xml")
    assert index is not None and b"<sitemapindex" in index.body  # bigger than a chunk: an index
    listed: set[str] = set()
    for child in re.findall(rb"<loc>([^<]+)</loc>", index.body):
        answer = small_web.lookup(child.decode())
        assert answer is not None and dict(answer.headers)["Content-Type"] == "application/x-gzip"
        listed.update(loc.decode() for loc in re.findall(rb"<loc>([^<]+)</loc>", gzip.decompress(answer.body)))
    assert {small_web.final_url(host, n) for n in range(size)} == listed


def test_a_broken_sitemap_is_served_broken(small_web: SyntheticWeb) -> None:
    broken = [h for h in range(len(small_web.names)) if small_web.sitemap[h] == 2 and small_web.kind[h] == 0]
    assert broken
    answer = small_web.lookup(f"http://{small_web.names[broken[0]]}/sitemap.xml")
    assert answer is not None and not answer.body.endswith(b"</urlset>")


def test_bad_shapes_and_paragraph_files_get_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(SyntheticError, match="at least 100 pages"):
        SyntheticWeb(WebShape(pages=10), {"t": ["x"]})
    with pytest.raises(SyntheticError, match="between 0 and 1"):
        SyntheticWeb(WebShape(pages=1000, dead_links=2.0), {"t": ["x"]})
    bad = tmp_path / "p.json.gz"
    bad.write_bytes(b"not gzip")
    with pytest.raises(SyntheticError, match="not a paragraph file"):
        load_paragraphs(bad)
    assert list(split_paragraphs("one two three four", words=2, min_words=2)) == ["one two", "three four"]


def fetch(replay: ReplayProcess, url: str) -> tuple[int, bytes]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": replay.proxy_url}))
    try:
        with opener.open(url, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, b""


def test_the_replay_serves_the_synthetic_web_and_describes_it(paragraphs: Path, small_web: SyntheticWeb) -> None:
    options: dict[str, Any] = {**SMALL, "seed": 7, "paragraphs": str(paragraphs)}
    with ReplayProcess("", synthetic=options) as replay:
        described = replay.synthetic()
        assert described["pages"] == len(small_web)
        assert described["host_kinds"] == {kind: len(small_web.hosts(kind)) for kind in KINDS}
        url = small_web.seeds(1)[0]
        status, body = fetch(replay, url)
        expected = small_web.lookup(url)
        assert expected is not None and (status, body) == (200, expected.body)
        assert fetch(replay, "http://www.nowhere.test/")[0] == 404
    assert json.loads(json.dumps(described))  # plain JSON
