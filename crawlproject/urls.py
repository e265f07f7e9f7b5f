"""URL canonicalization and admission rules (SPEC §1).

One function, :func:`canonicalize`, gives every URL its *key*: what the
frontier deduplicates on and every output names the page by, so that two
spellings of one page always collide. The key is never what is fetched: a
request fetches the URL as it was found (as Scrapy's request fingerprints
do), so robots.txt and the server see the link as its page wrote it.

The key is w3lib's ``canonicalize_url`` (sorted query, consistent
percent-encoding, ``%7E`` → ``~``, lowercase host, no fragment, dot segments
resolved) plus the SPEC §1 rules w3lib leaves out: the default port is
dropped and default pages (``index.html``, ``index.htm``) are stripped.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from w3lib.url import canonicalize_url

DEFAULT_PORTS = {"http": 80, "https": 443}
ALLOWED_SCHEMES = frozenset(DEFAULT_PORTS)

# "by heuristic" (SPEC §1): a last path segment that is a directory's default
# page names the directory itself on nearly every server.
_DEFAULT_PAGE = re.compile(r"/(?:index|default)\.html?$", re.IGNORECASE)


def canonicalize(url: str) -> str:
    """Return the canonical form of *url*; never raises, idempotent.

    >>> canonicalize("HTTP://Www.Example.com:80/a/./b/../Index.html?b=2&a=1#top")
    'http://www.example.com/a/?a=1&b=2'
    >>> canonicalize("http://example.com/%7Euser")
    'http://example.com/~user'
    >>> canonicalize("http://example.com")
    'http://example.com/'

    A string that is not a URL comes back stripped but otherwise unchanged,
    so callers can still refuse it with :func:`refusal_reason`.
    """
    url = url.strip()
    # w3lib's rules and ours can each expose work for the other (a port that
    # is default only after decoding, a default page behind a dot segment),
    # so apply both until nothing changes: that is what makes it idempotent.
    for _ in range(_MAX_PASSES):
        result = _one_pass(url)
        if result == url:
            break
        url = result
    return url


_MAX_PASSES = 4


def _one_pass(url: str) -> str:
    try:
        parts = urlsplit(canonicalize_url(url))
        netloc = parts.netloc
        if parts.port is not None and parts.port == DEFAULT_PORTS.get(parts.scheme):
            netloc = netloc.rsplit(":", 1)[0]
        path = _DEFAULT_PAGE.sub("/", parts.path) or "/"
        return urlunsplit((parts.scheme, netloc, path, parts.query, ""))
    except ValueError:
        return url


def without_fragment(url: str) -> str:
    """The URL a browser requests for a link: the fragment is the browser's.

    >>> without_fragment("http://example.com/a#top")
    'http://example.com/a'
    """
    return url.partition("#")[0]


def refusal_reason(url: str) -> str | None:
    """Say why *url* must not be crawled, or ``None``; the reason is a short
    stats-key fragment. (Length is Scrapy's ``URLLENGTH_LIMIT``.)

    >>> refusal_reason("ftp://example.com/file")
    'bad_scheme'
    >>> refusal_reason("http:///nohost")
    'malformed'
    >>> refusal_reason("http://example.com/") is None
    True
    """
    scheme, _, rest = url.partition(":")
    if scheme.lower() not in ALLOWED_SCHEMES or not rest.startswith("//"):
        return "bad_scheme"
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return "malformed"
    if not host:
        return "malformed"
    return None


def host_of(url: str) -> str:
    """The host part of a canonical http(s) URL, cheaply (no full parse).

    >>> host_of("http://www.cs.cornell.edu/Info/")
    'www.cs.cornell.edu'
    >>> host_of("https://user@example.com:8080/")
    'example.com:8080'
    """
    netloc = url.split("/", 3)[2] if url.count("/") >= 2 else ""
    return netloc.rpartition("@")[2]
