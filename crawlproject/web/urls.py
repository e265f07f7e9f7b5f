"""URL canonicalization (docs/methods.md §1).

One function, :func:`canonicalize`, gives every URL its *key*: what the
frontier deduplicates on and every output names the page by, so that two
spellings of one page always collide. The key is never what is fetched: a
request fetches the URL as it was found (as Scrapy's request fingerprints
do), so robots.txt and the server see the link as its page wrote it.

The key is w3lib's ``canonicalize_url`` (sorted query, consistent
percent-encoding, ``%7E`` → ``~``, lowercase host, no fragment, dot segments
resolved) plus the docs/methods.md §1 rules w3lib leaves out: the default port is
dropped and default pages (``index.html``, ``index.htm``) are stripped.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from w3lib.url import canonicalize_url

DEFAULT_PORTS = {"http": 80, "https": 443}
ALLOWED_SCHEMES = frozenset(DEFAULT_PORTS)

# "by heuristic" (docs/methods.md §1): a last path segment that is a directory's default
# page names the directory itself on nearly every server.
_DEFAULT_PAGE = re.compile(r"/(?:index|default)\.html?$", re.IGNORECASE)
# Session ids make one page a new URL on every visit (a spider trap): the
# query parameters and ;path parameters servers use for them are not part
# of a page's identity (Nutch's and Heritrix's normalizers drop them too).
_SESSION_PARAMETERS = frozenset(
    {"sid", "sessionid", "session_id", "jsessionid", "phpsessid", "aspsessionid", "cfid", "cftoken", "zenid", "osCsid"}
)
_SESSION_PATH_PARAMETER = re.compile(r";(?:jsessionid|phpsessid|sessionid|sid)=[^/?#]*", re.IGNORECASE)
_SESSION_LOWER = frozenset(name.lower() for name in _SESSION_PARAMETERS)


def canonicalize(url: str) -> str:
    """Return the canonical form of *url*; never raises, idempotent.

    >>> canonicalize("HTTP://Www.Example.com:80/a/./b/../Index.html?b=2&a=1#top")
    'http://www.example.com/a/?a=1&b=2'
    >>> canonicalize("http://example.com/%7Euser")
    'http://example.com/~user'
    >>> canonicalize("http://example.com")
    'http://example.com/'
    >>> canonicalize("http://example.com/cart;jsessionid=A1B2?item=4&PHPSESSID=ff")
    'http://example.com/cart?item=4'

    A string that is not a URL comes back stripped but otherwise unchanged,
    so callers can still refuse it (crawlproject.policy.admission).
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
        path = _DEFAULT_PAGE.sub("/", _SESSION_PATH_PARAMETER.sub("", parts.path)) or "/"
        query = parts.query
        if query and any(name.lower() in query.lower() for name in _SESSION_PARAMETERS):
            query = "&".join(
                pair for pair in query.split("&") if pair.partition("=")[0].lower() not in _SESSION_LOWER
            )
        return urlunsplit((parts.scheme, netloc, path, query, ""))
    except ValueError:
        return url


def without_fragment(url: str) -> str:
    """The URL a browser requests for a link: the fragment is the browser's.

    >>> without_fragment("http://example.com/a#top")
    'http://example.com/a'
    """
    return url.partition("#")[0]


def repeats_a_segment(url: str, limit: int) -> bool:
    """Whether a path segment occurs more than *limit* times (``/a/a/a/…``:
    relative links that keep growing a path, a classic spider trap).

    >>> repeats_a_segment("http://h/a/b/a/b/a/b/x", 2), repeats_a_segment("http://h/a/b/a/x", 2)
    (True, False)
    """
    path = url.split("://", 1)[-1].partition("/")[2].partition("?")[0]
    segments = [segment for segment in path.split("/") if segment]
    if len(segments) <= limit:
        return False
    counts: dict[str, int] = {}
    for segment in segments:
        counts[segment] = counts.get(segment, 0) + 1
        if counts[segment] > limit:
            return True
    return False


# A token holding a digit: a number, a date part, an id (``2026``, ``p17``, ``a3f9c2``).
_COUNTER_TOKEN = re.compile(r"[A-Za-z0-9_]*[0-9][A-Za-z0-9_]*")


def url_shape(url: str) -> str:
    """*url* with each token that holds a digit, after the host, as ``#``:
    the pages of a calendar, a counter or a session id share one shape.

    >>> url_shape("http://h1.test/cal/2026/01/?d=17&s=a3f") == url_shape("http://h1.test/cal/2025/12/?d=18&s=b4e")
    True
    >>> url_shape("http://h1.test/cal/2026/01/")
    'http://h1.test/cal/#/#/'
    """
    scheme, _, rest = url.partition("://")
    host, slash, path = rest.partition("/")
    return f"{scheme}://{host}{slash}{_COUNTER_TOKEN.sub('#', path)}"


def host_of(url: str) -> str:
    """The host part of a canonical http(s) URL, cheaply (no full parse).

    >>> host_of("http://www.cs.cornell.edu/Info/")
    'www.cs.cornell.edu'
    >>> host_of("https://user@example.com:8080/")
    'example.com:8080'
    """
    netloc = url.split("/", 3)[2] if url.count("/") >= 2 else ""
    return netloc.rpartition("@")[2]
