"""URL admission: one function says why a URL must not be fetched, for
every place that checks one — seeds, links (the canonicalize middleware),
every request about to be downloaded (the network-safety middleware:
redirects and robots.txt fetches too)."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from crawlproject.web.urls import ALLOWED_SCHEMES

if TYPE_CHECKING:
    from crawlproject.policy.netsafety import NetworkPolicy


def refusal(url: str, network: NetworkPolicy | None = None) -> str | None:
    """Why *url* must not be fetched (a stats-key word), or ``None``: a
    scheme other than http(s), a malformed URL, credentials in it, or —
    given a *network* policy — a host it must not reach. (Length is Scrapy's
    ``URLLENGTH_LIMIT``.)

    >>> refusal("ftp://example.com/file")
    'bad_scheme'
    >>> refusal("http:///nohost")
    'malformed'
    >>> refusal("http://user:secret@example.com/")
    'userinfo'
    >>> refusal("http://example.com/") is None
    True
    >>> from crawlproject.policy.netsafety import NetworkPolicy
    >>> refusal("http://10.0.0.1/", NetworkPolicy())
    'private'
    """
    scheme, _, rest = url.partition(":")
    if scheme.lower() not in ALLOWED_SCHEMES or not rest.startswith("//"):
        return "bad_scheme"
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return "malformed"
    if not host:
        return "malformed"
    if "@" in parts.netloc:
        return "userinfo"
    return network.host_problem(host) if network is not None else None
