"""Every request meta key this project reads or writes, in one place.

Keys starting with ``focus_`` are ours; a spider of any kind may set
``focus_score``. The scheduler strips the keys it can recompute (score, key,
lease) before a request is queued, so they cost nothing per queued URL.
"""

from __future__ import annotations

#: Float score of a request (higher is fetched first), set by the strategy;
#: a request without it is scored by its integer ``priority``.
SCORE = "focus_score"
#: ``(url, key)``: the canonical form (the frontier key) computed for *url*,
#: so that it is computed once per link. Ignored when the request's URL is
#: not *url* any more (a redirect copies the meta of its original).
KEY = "focus_key"
#: 1 for the first request this process's scheduler popped, 2 for the next, …:
#: the frontier's order (the history's ``order`` is the order pages were
#: processed, which concurrent fetches shuffle).
POPPED = "focus_popped"
#: The frontier key whose lease a request is fetched under. A retry or a
#: redirect carries it on: it is the same fetch. The page's canonical URL,
#: or that URL + KEY_SUFFIX + what tells the request apart from another of
#: the same page (its fingerprint: a POST; a serial: ``dont_filter``).
LEASE = "focus_lease"
#: The download slot a request is the first to try (the wait's probe:
#: crawlproject.frontier.host_harvest); a redirect carries it on.
PROBE = "focus_probe"
#: ``#`` never appears in a canonical URL (fragments are removed).
KEY_SUFFIX = "#"


def page_of_lease(lease: str) -> str:
    """The canonical URL of a frontier key (its suffix removed).

    >>> page_of_lease("http://h/form#9f1c")
    'http://h/form'
    """
    return lease.partition(KEY_SUFFIX)[0]

#: Set by a middleware that refuses a request by policy for its URL, not its
#: page (robots.txt): the page may still be fetched under another spelling.
REFUSED = "focus_refused_by"

#: How many links in a row led here from a URL of the same shape (the same
#: URL but for its numbers and ids: ``/cal/2026/02/`` from ``/cal/2026/01/``),
#: counted by the trap guard (middlewares.canonicalize); absent when 0.
COUNTER_HOPS = "focus_counter_hops"

#: The anchor text of the link a request was found by (its first 100
#: characters): the item's ``found_via``.
ANCHOR = "focus_anchor"

#: The page a link was found on, and the seed flag (set by our spiders).
PARENT = "focus_parent"
SEED = "focus_seed"
#: The page a strategy promoted this URL for (e.g. the distiller's hub).
PROMOTED_BY = "focus_promoted_by"

#: SharkSearch state that a page hands down to its links.
INHERITED = "focus_inherited"
DEPTH_BUDGET = "focus_depth_budget"

#: InfoSpiders: the agent whose frontier a link is in.
AGENT = "focus_agent"

#: A robots.txt fetch of the robots middleware (never counted as a page).
ROBOTSTXT = "focus_robotstxt"
#: A sitemap fetch (spiders.sitemaps): how many sitemap indexes led to it.
SITEMAP = "focus_sitemap"
#: Set True on a request whose page the browser rendered (FOCUS_RENDER,
#: middlewares.render): the item's ``rendered``.
RENDERED = "focus_rendered"
#: Read at most this many bytes of the response (overrides the page-size cut).
MAX_BYTES = "focus_max_bytes"
#: Accept any content type (robots.txt is text/plain).
ANY_CONTENT_TYPE = "focus_any_content_type"

#: Keys the scheduler recomputes and so never stores in the frontier.
RECOMPUTED = frozenset({SCORE, KEY, LEASE, POPPED})
