"""Crawl scope (crawlproject.policy.scope): a crawl that stays on its seeds' sites,
judged on real crawls of WebKB through the replay."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from scrapy.settings import Settings

from crawlproject.config import SettingsError
from crawlproject.policy.scope import CrawlScope, HomeSites, hostname, registered_domain
from crawlproject.replay.process import ReplayProcess
from tests.conftest import run_crawl

TEXAS_SEED = "http://www.cs.utexas.edu/"
#: enough fetches for a crawl from Texas to leave utexas.edu when nothing stops it
BUDGET = {"CLOSESPIDER_PAGECOUNT": "250"}


def test_scope_modes_judge_urls_by_the_seeds_sites() -> None:
    seeds = ["http://www.cs.utexas.edu/users/a/", "http://127.0.0.1:8080/x"]
    domain = CrawlScope("domain", seeds)
    assert domain.sites == {"utexas.edu", "127.0.0.1"}
    assert domain.allows("http://wwwhost.cc.utexas.edu/b")
    assert domain.allows("HTTP://WWW.UTEXAS.EDU:81/")
    assert not domain.allows("http://utexas.edu.evil.example/")
    assert not domain.allows("http://127.0.0.2/")
    host = CrawlScope("host", seeds)
    assert host.allows("http://www.cs.utexas.edu/other")
    assert not host.allows("http://www.utexas.edu/")
    assert CrawlScope().allows("http://anything.example/")
    later = CrawlScope("domain", [])
    later.add_seed("http://www.cs.wisc.edu/")
    assert later.allows("http://www.wisc.edu/")
    assert hostname("http://[::1]:8080/") == "[::1]"
    assert registered_domain("[::1]") == "[::1]"


def test_a_bad_scope_is_a_clear_error() -> None:
    with pytest.raises(SettingsError, match="FOCUS_SCOPE must be one of any, domain, host, got 'site'"):
        CrawlScope.from_settings(Settings({"FOCUS_SCOPE": "site"}), [])
    with pytest.raises(SettingsError, match="-a scope must be one of"):
        CrawlScope.from_settings(Settings({"FOCUS_SCOPE": "any"}), [], "website")
    assert CrawlScope.from_settings(Settings({"FOCUS_SCOPE": "any"}), [], " Domain ").mode == "domain"


def test_a_home_names_sites_and_a_bad_home_is_a_clear_error() -> None:
    named = Settings({"FOCUS_HOME": " http://www.cs.utexas.edu/a , www.cs.wisc.edu:8080,"})
    home = HomeSites.from_settings(named)
    assert home.sites() == {"utexas.edu", "wisc.edu"}
    assert not home.away("http://wwwhost.cc.utexas.edu/x") and home.away("http://www.cs.cornell.edu/")
    assert not home.away("http://www.cs.wisc.edu/") and home.away("mailto:nobody")  # a crawled URL never raises
    assert HomeSites.from_settings(named, "host").away("http://wwwhost.cc.utexas.edu/x")
    assert HomeSites.from_settings(Settings({})).sites() == set() and not HomeSites("domain").away("http://anywhere.org/")
    # a model's home comes before FOCUS_HOME
    assert HomeSites.from_settings(named, "domain", ["www.cs.cornell.edu"]).sites() == {"cornell.edu"}
    for bad in ("http://", "www.cs.utexas.edu/,::::", "not a url"):
        with pytest.raises(SettingsError, match=r"FOCUS_HOME: .* names no host: give URLs or host names"):
            HomeSites.from_settings(Settings({"FOCUS_HOME": bad}))


def _domains(urls: list[str]) -> Counter[str]:
    return Counter(registered_domain(hostname(url)) for url in urls)


def test_domain_scope_keeps_a_real_crawl_on_the_seeds_sites(webkb_replay: ReplayProcess, tmp_path: Path) -> None:
    free = run_crawl("breadthfirst", tmp_path / "free", [TEXAS_SEED], webkb_replay.proxy_url, settings=BUDGET)
    scoped = run_crawl(
        "breadthfirst", tmp_path / "scoped", [TEXAS_SEED], webkb_replay.proxy_url,
        settings=BUDGET, extra_args=["-a", "scope=domain"],
    )
    assert free.returncode == 0 and scoped.returncode == 0, free.log[-2000:] + scoped.log[-2000:]
    # without a scope the same crawl leaves utexas.edu: the check below can fail
    assert set(_domains(free.urls)) - {"utexas.edu"}
    assert set(_domains(scoped.urls)) == {"utexas.edu"}
    assert len(scoped.urls) >= 250  # the site is not exhausted: the scope did not end the crawl early
    assert scoped.summary["urls_refused"]["out_of_scope"] > 0
    assert scoped.summary["scope"] == "domain"
    assert "out_of_scope" not in free.summary["urls_refused"]


def test_host_scope_from_the_setting_and_allowed_domains_as_a_spider_argument(
    webkb_replay: ReplayProcess, tmp_path: Path
) -> None:
    host = run_crawl(
        "bestfirst", tmp_path / "host", [TEXAS_SEED], webkb_replay.proxy_url, "course",
        settings={**BUDGET, "FOCUS_SCOPE": "host"},
    )
    assert host.returncode == 0, host.log[-2000:]
    assert {hostname(url) for url in host.urls} == {"www.cs.utexas.edu"}
    # Scrapy's own allowed_domains, given as -a text, is a list of domains (not of letters)
    allowed = run_crawl(
        "breadthfirst", tmp_path / "allowed", [TEXAS_SEED], webkb_replay.proxy_url,
        settings=BUDGET, extra_args=["-a", "allowed_domains=utexas.edu, example.org"],
    )
    assert allowed.returncode == 0, allowed.log[-2000:]
    assert set(_domains(allowed.urls)) == {"utexas.edu"}
    assert "offsite/filtered" in allowed.log


def test_a_bad_scope_stops_the_crawl_at_start(webkb_replay: ReplayProcess, tmp_path: Path) -> None:
    result = run_crawl(
        "breadthfirst", tmp_path / "bad", [TEXAS_SEED], webkb_replay.proxy_url, extra_args=["-a", "scope=website"]
    )
    assert result.returncode != 0
    assert "-a scope must be one of any, domain, host, got 'website'" in result.log
    assert not result.history


def test_a_bad_home_stops_the_crawl_at_start(webkb_replay: ReplayProcess, tmp_path: Path) -> None:
    result = run_crawl(
        "infospiders", tmp_path / "bad", [TEXAS_SEED], webkb_replay.proxy_url, query="course",
        settings={"FOCUS_HOME": "http://"},
    )
    assert result.returncode != 0
    assert "FOCUS_HOME: 'http://' names no host" in result.log
    assert not result.history


def test_the_path_oracle_measures_paths_inside_the_scope() -> None:

    from crawlproject.strategies.base import Topic
    from crawlproject.strategies.baselines import PathOracleStrategy
    from crawlproject.web.text import TermAnalyzer

    # a → elsewhere → target is the short way; a → b → c → target stays on the site
    inlinks = {
        "http://a.example.edu/": [],
        "http://other.org/": ["http://a.example.edu/"],
        "http://b.example.edu/": ["http://a.example.edu/"],
        "http://c.example.edu/": ["http://b.example.edu/"],
        "http://t.example.edu/": ["http://other.org/", "http://c.example.edu/"],
    }
    relevant = {"http://t.example.edu/"}
    free = PathOracleStrategy(Topic(query="x"), TermAnalyzer(), relevant, inlinks)
    assert free.distance["http://a.example.edu/"] == 2
    scope = CrawlScope("domain", ["http://a.example.edu/"])
    scoped = PathOracleStrategy(Topic(query="x"), TermAnalyzer(), relevant, inlinks, scope=lambda: scope)
    assert scoped._distances()["http://a.example.edu/"] == 3
    assert "http://other.org/" not in scoped._distances()
