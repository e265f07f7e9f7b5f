"""Crawl scope: whether a crawl may leave the sites of its seeds.

A topical crawl of the open web follows links anywhere; a crawl of "the
course pages of this university" stays on its sites. ACHE calls this
``link_storage.link_strategy.use_scope`` (the seeds' websites), Nutch
``db.ignore.external.links`` (the seeds' hosts), Scrapy ``allowed_domains``
(a list the user writes). ``FOCUS_SCOPE`` (or ``-a scope=``) chooses:

* ``any`` — every host (the default);
* ``domain`` — the seeds' registered domains and their subdomains
  (``www.cs.utexas.edu`` → ``utexas.edu``, so ``wwwhost.cc.utexas.edu`` is in);
  the public-suffix list is the snapshot bundled with tldextract, never
  fetched, so the answer does not depend on the network or the day;
* ``host`` — the seeds' exact host names.

Seeds that arrive later (a Redis seed list) widen the scope. A link out of
scope is refused before it is queued and counted as
``focus/url_refused/out_of_scope`` (crawlproject.middlewares.canonicalize).
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

from tldextract import TLDExtract

from crawlproject import config
from crawlproject.web import meta as keys
from crawlproject.web.urls import host_of

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from scrapy.settings import BaseSettings

    from crawlproject.web.page import Page

SCOPES = ("any", "domain", "host")

# suffix_list_urls=(): the bundled snapshot only (no download, no cache file)
_extract = TLDExtract(suffix_list_urls=(), cache_dir=None)


def hostname(url: str) -> str:
    """The lower-cased host name of *url*, without port or credentials.

    >>> hostname("http://User@WWW.Example.com:8080/a")
    'www.example.com'
    """
    host = host_of(url).lower()
    if host.startswith("["):  # an IPv6 literal keeps its colons
        return host.partition("]")[0] + "]"
    return host.partition(":")[0]


@lru_cache(maxsize=65536)
def registered_domain(host: str) -> str:
    """The domain a person registered for *host*: one label under its public
    suffix; an IP address or a host with no known suffix stands for itself.

    >>> registered_domain("www.cs.utexas.edu"), registered_domain("a.b.co.uk")
    ('utexas.edu', 'b.co.uk')
    >>> registered_domain("127.0.0.1"), registered_domain("localhost")
    ('127.0.0.1', 'localhost')
    """
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return _extract(host).top_domain_under_public_suffix or host
    return host


def site_of(url: str, mode: str) -> str:
    """The site of *url* as the scope *mode* sees it: its registered domain
    (``domain``) or its host name (``host`` and ``any``)."""
    host = hostname(url)
    return registered_domain(host) if mode == "domain" else host


class CrawlScope:
    """Which URLs a crawl may queue (see the module docstring).

    >>> scope = CrawlScope("domain", ["http://www.cs.utexas.edu/users/a/"])
    >>> scope.allows("http://wwwhost.cc.utexas.edu/x"), scope.allows("http://www.cs.wisc.edu/")
    (True, False)
    >>> CrawlScope("host", ["http://www.cs.utexas.edu/"]).allows("http://www.utexas.edu/")
    False
    """

    def __init__(self, mode: str = "any", seeds: Iterable[str] = ()):
        if mode not in SCOPES:
            raise ValueError(f"scope must be one of {', '.join(SCOPES)}, got {mode!r}")
        self.mode = mode
        self.sites: set[str] = set()
        for url in seeds:
            self.add_seed(url)

    @classmethod
    def from_settings(cls, settings: BaseSettings, seeds: Iterable[str], mode: str | None = None) -> CrawlScope:
        """FOCUS_SCOPE, or *mode* (a spider argument) when given."""
        if mode is None:
            mode = config.get_choice(settings, "FOCUS_SCOPE")
        elif mode.strip().lower() not in SCOPES:
            raise config.SettingsError(f"-a scope must be one of {', '.join(SCOPES)}, got {mode!r}")
        return cls(mode.strip().lower(), seeds)

    @property
    def unbounded(self) -> bool:
        return self.mode == "any"

    def add_seed(self, url: str) -> None:
        if not self.unbounded:
            self.sites.add(site_of(url, self.mode))

    def allows(self, url: str) -> bool:
        return self.unbounded or site_of(url, self.mode) in self.sites

    def __repr__(self) -> str:
        return f"CrawlScope({self.mode!r}, sites={sorted(self.sites)!r})"


class SiteBoundModel(Protocol):
    """A trained look-ahead model that may count only its home sites' targets."""

    value_scope: str  # "any", "domain" or "host"
    home: list[str]  # the home its training named (URLs or sites); [] for none


class HomeSites:
    """The home of a topic bound to its sites — "the course pages of this
    university": the sites its targets lie on. A page elsewhere is *away*,
    worth nothing to the topic, and the strategies that judge what pages
    are worth (focused crawler, context graph, InfoSpiders, link value) count
    it so; a crawl may still go there (it is no scope: see :class:`CrawlScope`).

    The home is *named* (a site-bound model's ``scrapy train --home``, or
    FOCUS_HOME: URLs or host names, comma-separated), or else, with
    *seeds_are_home* (a site-bound model that names none), the crawl's
    seeds' sites: the spider's seed list (every worker of a distributed
    crawl has it) and any seed page this worker fetched (a seed from Redis
    reaches one worker only — a distributed crawl names its home). With
    neither, there is no home and nothing is away.

    >>> home = HomeSites("domain", ["www.cs.utexas.edu"])
    >>> home.away("http://wwwhost.cc.utexas.edu/x"), home.away("http://www.cs.wisc.edu/")
    (False, True)
    >>> HomeSites("domain").away("http://www.cs.wisc.edu/")
    False
    """

    def __init__(
        self, mode: str = "domain", named: Iterable[str] = (), seeds_are_home: bool = False,
        seeds: Callable[[], Iterable[str] | None] | None = None,
    ):
        if mode not in ("domain", "host"):
            raise ValueError(f"a home is a set of registered domains or hosts, got {mode!r}")
        self.mode = mode
        self.named = {self._named_site(url) for url in named}
        self.seeds_are_home = seeds_are_home
        self._seeds: set[str] = set()
        #: the spider's seed list, read once when there is a spider (None before)
        self._seed_list = seeds

    @classmethod
    def from_settings(
        cls, settings: BaseSettings | None, mode: str = "domain", named: Iterable[str] = (),
        seeds_are_home: bool = False, seeds: Callable[[], Iterable[str] | None] | None = None,
    ) -> HomeSites:
        """The home *named* (a model's), or else FOCUS_HOME's URLs or host
        names (a clear error for one that names no host)."""
        named = list(named)
        if named or settings is None:
            return cls(mode, named, seeds_are_home, seeds)
        setting = [item.strip() for item in config.get_str(settings, "FOCUS_HOME").split(",") if item.strip()]
        try:
            return cls(mode, setting, seeds_are_home, seeds)
        except ValueError as exc:
            raise config.SettingsError(f"FOCUS_HOME: {exc}") from None

    @classmethod
    def of_model(
        cls, model: SiteBoundModel, settings: BaseSettings | None,
        seeds: Callable[[], Iterable[str] | None] | None = None,
    ) -> HomeSites:
        """The home of a crawl led by a trained model (context graph, link
        value): the one its training named, else FOCUS_HOME, else — for a
        model that counts only its home's targets — the seeds' sites."""
        return cls.from_settings(
            settings, "host" if model.value_scope == "host" else "domain", model.home,
            seeds_are_home=model.value_scope != "any", seeds=seeds,
        )

    def site(self, url: str) -> str:
        """The site of a crawled URL (or of a host name, when naming home)."""
        return site_of(url if "://" in url else f"http://{url}", self.mode)

    def _named_site(self, url: str) -> str:
        """
        >>> HomeSites("domain", ["http://"])
        Traceback (most recent call last):
        ...
        ValueError: 'http://' names no host: give URLs or host names, comma-separated
        """
        site = self.site(url)
        if not site or any(c.isspace() for c in site):
            raise ValueError(f"{url!r} names no host: give URLs or host names, comma-separated")
        return site

    @property
    def bound(self) -> bool:
        """Whether anything can be away: a home is named, or the seeds' sites are home."""
        return bool(self.named) or self.seeds_are_home

    @property
    def fixed(self) -> bool:
        """Whether the home's sites never change: a home of the seeds' sites
        grows as seeds arrive, so whether a site is away may change."""
        return bool(self.named) or not self.seeds_are_home

    def note(self, page: Page) -> None:
        """A page arrived: a seed's site is home (a seed from Redis that no
        seed list holds)."""
        if self.seeds_are_home and page.meta.get(keys.SEED):
            self._seeds.add(self.site(page.key))

    def sites(self) -> set[str]:
        if self.fixed:
            return self.named
        found = self._seed_list() if self._seed_list is not None else None
        if found is not None:
            self._seed_list = None
            self._seeds.update(self.site(url) for url in found)
        return self._seeds

    def away(self, url: str) -> bool:
        sites = self.sites()
        return bool(sites) and self.site(url) not in sites
