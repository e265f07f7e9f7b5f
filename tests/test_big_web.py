"""What a long crawl meets, crawled for real on a small synthetic web:
sitemaps (robots.txt lines, indexes, gzip, broken, too big) feed the crawl,
a mirror is recorded as a copy and not expanded, and a seen set past its
exact bound (a Bloom filter) never lets a URL be fetched twice."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from crawlproject.replay.process import ReplayProcess
from crawlproject.replay.synthetic import SyntheticWeb
from crawlproject.replay.web_shape import WebShape, load_paragraphs
from tests.conftest import run_crawl

#: 40 hosts, every kind of them; a sitemap holds 50 URLs, so hosts bigger
#: than that list theirs in an index of gzip sitemaps.
SHAPE: dict[str, Any] = {
    "pages": 3000, "hosts": 40, "seed": 11, "mirror_hosts": 0.1, "near_copy_hosts": 0.1, "trap_hosts": 0.05,
    "dead_hosts": 0.05, "bad_sitemap_hosts": 0.1, "no_sitemap_hosts": 0.1, "sitemap_chunk": 50,
}
OBEY = {"ROBOTSTXT_OBEY": True}


@pytest.fixture(scope="module")
def web(paragraphs: Path) -> SyntheticWeb:
    shape = dict(SHAPE)
    return SyntheticWeb(WebShape(**shape), load_paragraphs(paragraphs))


@pytest.fixture(scope="module")
def replay(paragraphs: Path) -> Any:
    with ReplayProcess("", synthetic={**SHAPE, "paragraphs": str(paragraphs)}) as server:
        yield server


def ordinary_host(web: SyntheticWeb, sitemap: int, smallest: int, largest: int) -> int:
    """An ordinary site with sitemap state *sitemap* (0 none, 1 listed, 2
    broken) and a size in [smallest, largest]."""
    for host in range(len(web.names)):
        if web.kind[host] == 0 and web.sitemap[host] == sitemap and smallest <= web.size[host] <= largest:
            return host
    raise AssertionError(f"the test web has no site with sitemap {sitemap} and {smallest}–{largest} pages")


def test_sitemaps_from_robots_txt_an_index_and_gzip_reach_pages_no_link_reaches(
    web: SyntheticWeb, replay: ReplayProcess, tmp_path: Path
) -> None:
    listed = ordinary_host(web, 1, 60, 400)  # an index of gzip sitemaps
    broken = ordinary_host(web, 2, 1, 400)
    orphans = {web.final_url(listed, n) for n in range(int(web.size[listed])) if web._orphan(listed, n)}
    assert orphans
    result = run_crawl(
        "bestfirst", tmp_path / "crawl", [web.url(listed, 0), web.url(broken, 0)], replay.proxy_url,
        query="programming language", settings={**OBEY, "CLOSESPIDER_PAGECOUNT": 2000},
        extra_args=["-a", "scope=host"],
    )
    assert result.returncode == 0, result.log[-3000:]
    sitemaps = result.summary["sitemaps"]
    assert sitemaps["from_robots"] == 2  # both hosts' robots.txt name one
    chunks = -(-int(web.size[listed]) // SHAPE["sitemap_chunk"])
    assert sitemaps["fetched"] == 2 + chunks  # two sitemap.xml, the index's gzip children
    assert sitemaps["bad"] == 1  # the broken one: counted, the crawl went on
    fetched = {r["url"] for r in result.history if r["status"] == 200}
    assert orphans <= fetched  # only the sitemap leads there
    assert set(web.pages_of(listed)) - fetched <= {
        web.final_url(listed, n) for n in range(int(web.size[listed])) if web._hostile(listed, n)
    }


def test_a_sitemap_too_big_is_counted_and_never_read(web: SyntheticWeb, replay: ReplayProcess, tmp_path: Path) -> None:
    listed = ordinary_host(web, 1, 60, 400)
    result = run_crawl(
        "bestfirst", tmp_path / "crawl", [web.url(listed, 0)], replay.proxy_url, query="programming language",
        settings={**OBEY, "CLOSESPIDER_PAGECOUNT": 40, "FOCUS_SITEMAP_MAX_BYTES": 1024},
        extra_args=["-a", "scope=host"],
    )
    assert result.returncode == 0, result.log[-3000:]
    sitemaps = result.summary["sitemaps"]
    assert sitemaps["too_big"] >= 1 and "urls" not in sitemaps


def test_a_spider_names_a_sitemap_and_its_index_depth_is_bounded(
    web: SyntheticWeb, replay: ReplayProcess, tmp_path: Path
) -> None:
    listed = ordinary_host(web, 1, 60, 400)
    name = web.names[listed]
    result = run_crawl(
        "breadthfirst", tmp_path / "crawl", [web.url(listed, 0)], replay.proxy_url,
        settings={"ROBOTSTXT_OBEY": False, "CLOSESPIDER_PAGECOUNT": 30, "FOCUS_SITEMAP_MAX_DEPTH": 0},
        extra_args=["-a", f"sitemaps=http://{name}/sitemap.xml", "-a", "scope=host"],
    )
    assert result.returncode == 0, result.log[-3000:]
    assert result.summary["sitemaps"]["too_deep"] == 1  # an index, and no level allowed below it


@pytest.mark.parametrize("spider", ["bestfirst", "linklearner"])
def test_a_mirror_is_recorded_as_a_copy_and_its_links_are_not_followed(
    web: SyntheticWeb, replay: ReplayProcess, tmp_path: Path, spider: str
) -> None:
    mirror = web.hosts("mirror")[0]
    original = web.original_of(mirror)
    result = run_crawl(
        spider, tmp_path / "crawl", [f"http://{original}/", f"http://{mirror}/"], replay.proxy_url,
        query="programming language", settings={"CLOSESPIDER_PAGECOUNT": 300, "FOCUS_NEAR_DUPLICATES": 0.8},
        extra_args=["-a", "scope=host"],
    )
    assert result.returncode == 0, result.log[-3000:]
    copies = {r["url"]: r["near_duplicate_of"] for r in result.history if r.get("near_duplicate_of")}
    assert copies, "the mirror's pages were fetched and not one was seen as a copy"
    assert result.summary["near_duplicates"]["pages"] == len(copies)
    # A copy names a page of the other host fetched before it, the same path.
    for url, original_url in copies.items():
        assert url.split("/", 3)[3] == original_url.split("/", 3)[3], (url, original_url)
        assert url.split("/")[2] != original_url.split("/")[2]
    parents = {r["parent_url"] for r in result.history}
    assert not parents & set(copies)  # no link of a copy was followed


def test_past_its_exact_bound_the_seen_set_never_lets_a_url_be_fetched_twice(
    web: SyntheticWeb, replay: ReplayProcess, tmp_path: Path
) -> None:
    result = run_crawl(
        "bestfirst", tmp_path / "crawl", web.seeds(4), replay.proxy_url, query="programming language",
        settings={"CLOSESPIDER_PAGECOUNT": 600, "FOCUS_SEEN_EXACT_MAX": 200, "FOCUS_SEEN_BLOOM_CAPACITY": 20000,
                  "FOCUS_SEEN_BLOOM_ERROR": 0.001, "LOG_LEVEL": "DEBUG"},
    )
    assert result.returncode == 0, result.log[-3000:]
    assert len(result.history) >= 500  # robots.txt and sitemaps count as responses too
    twice = [url for url, count in Counter(r["canonical_url"] for r in result.history).items() if count > 1]
    assert twice == []
    assert "More than 200 URLs fetched" in result.log  # the filter did take over
