"""Requests in and out of the frontier: what a queued URL keeps, and how the
Request is rebuilt when it is popped.

A queued URL keeps its key, its score, the URL as found (when it differs from
the key) and a *payload*:

* a plain GET whose callbacks are methods of the spider (or ``None`` /
  ``NO_CALLBACK``): ``("get", callback name, errback name, meta, score is
  priority, headers)``, where meta has the keys the scheduler recomputes
  removed and headers are the request's (Scrapy's RefererMiddleware gives
  every link its page's URL as Referer: the same for all links of a page). The
  score is kept beside the payload; a request scored by its ``priority``
  (no ``focus_score``) gets it back as its priority, one scored by
  ``focus_score`` has no use for a priority, and it is not kept. The links of one page
  share their payload object (same callbacks, same parent, same depth), so
  a queued link costs a reference, not a dict;
* any other request that can be saved: ``("dict", fields)``, Scrapy's own
  ``Request.to_dict`` without the URL and meta keys we recompute;
* a request whose callback is not a spider method (a lambda, a
  ``functools.partial``): ``("object", request)``, kept as is.

A payload that cannot be pickled (an ``object`` payload, or meta holding a
lambda) cannot be saved in a JOBDIR: as stock Scrapy does, the scheduler
keeps it in memory, with one warning and a ``scheduler/unserializable``
count (:meth:`RequestCodec.saveable`).
"""

from __future__ import annotations

import logging
import pickle
from typing import TYPE_CHECKING, Any, NamedTuple

from scrapy import Request
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.request import request_from_dict

from crawlproject.web import meta as keys
from crawlproject.web.urls import canonicalize

if TYPE_CHECKING:
    from scrapy import Spider

    from crawlproject.frontier.base import FrontierEntry

logger = logging.getLogger(__name__)

GET, DICT, OBJECT = "get", "dict", "object"
_NO_CALLBACK = "scrapy.http.request.NO_CALLBACK"
_VERBATIM = "verbatim_url"
#: Distinct payloads remembered for sharing; the links of a page come
#: together, so a small table finds nearly every share.
_SHARED_MAX = 4096


class Encoded(NamedTuple):
    key: str
    score: float
    url: str  #: the URL to fetch
    payload: Any


class NotASpiderMethod(ValueError):
    """A callback that cannot be named: not a method of the spider."""


class RequestCodec:
    def __init__(self, spider: Spider):
        self.spider = spider
        self._shared: dict[Any, tuple[Any, ...]] = {}
        self._saveable: dict[int, tuple[Any, bool]] = {}  # id(payload) → (payload, can be pickled)

    # -- in ------------------------------------------------------------------

    def encode(self, request: Request) -> Encoded:
        meta, url = request.meta, request.url
        found = meta.get(keys.KEY)
        key = found[1] if found is not None and found[0] == url else canonicalize(url)
        score = meta.get(keys.SCORE)
        if score is None:
            score = float(request.priority)
        elif score != score:  # NaN
            score = 0.0
        return Encoded(key, float(score), url, self.payload(request))

    def payload(self, request: Request) -> tuple[Any, ...]:
        try:
            callback = self._name(request.callback)
            errback = self._name(request.errback)
        except NotASpiderMethod:
            return (OBJECT, request)
        meta = request.meta
        stored = _stored_meta(meta)
        if not _is_plain_get(request):
            fields = request.replace(callback=None, errback=None, meta=stored).to_dict()
            del fields["url"]
            fields.update(callback=callback, errback=errback)
            return (DICT, fields)
        return self._share((GET, callback, errback, stored, keys.SCORE not in meta, _stored_headers(request)))

    def _name(self, method: Any) -> str | None:
        if method is None:
            return None
        if method is NO_CALLBACK:
            return _NO_CALLBACK
        name = getattr(method, "__name__", None)
        if (
            name is not None
            and getattr(method, "__self__", None) is self.spider
            and getattr(self.spider, name, None) == method
        ):
            return str(name)
        raise NotASpiderMethod(f"{method!r} is not a method of the spider")

    def _share(self, payload: tuple[Any, ...]) -> tuple[Any, ...]:
        meta = payload[3]
        try:
            signature = (payload[1], payload[2], tuple(meta.items()) if meta else None, payload[4], payload[5])
            hash(signature)
        except TypeError:
            return payload  # unhashable meta values: not shared
        shared = self._shared.get(signature)
        if shared is None:
            if len(self._shared) >= _SHARED_MAX:
                self._shared.clear()
            shared = self._shared[signature] = payload
        return shared

    def saveable(self, payload: Any) -> bool:
        """Whether *payload* can be saved in a JOBDIR (pickled). Shared
        payloads — the links of one page — are tried once."""
        if payload is None:
            return True
        if payload[0] == OBJECT:
            return False
        known = self._saveable.get(id(payload))
        if known is not None and known[0] is payload:
            return known[1]
        try:
            pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError, ValueError):
            saveable = False
        else:
            saveable = True
        if len(self._saveable) >= _SHARED_MAX:
            self._saveable.clear()
        self._saveable[id(payload)] = (payload, saveable)
        return saveable

    # -- out -----------------------------------------------------------------

    def decode(self, entry: FrontierEntry) -> Request:
        """The Request of a popped entry, carrying its score, key and lease."""
        key, score, payload, url = entry
        if payload is None:  # pushed by a caller that stores no payload
            request = Request(url)
        elif payload[0] == GET:
            _, callback, errback, stored, score_is_priority, *rest = payload  # no headers: saved by an older release
            headers = rest[0] if rest else None
            meta = dict(stored) if stored else {}
            # The URL went through a Request before: escaping it again is most
            # of what building a Request costs (Scrapy's verbatim_url says so).
            verbatim = meta.get(_VERBATIM)
            meta[_VERBATIM] = True
            request = Request(
                url,
                callback=self._method(callback),
                errback=self._method(errback),
                meta=meta,
                priority=int(score) if score_is_priority else 0,
                headers={name: list(values) for name, values in headers} if headers else None,
            )
            if not verbatim:
                del request.meta[_VERBATIM]
        elif payload[0] == DICT:
            fields = dict(payload[1], url=url)
            callback, errback = fields.pop("callback"), fields.pop("errback")
            request = request_from_dict(fields)
            request.callback, request.errback = self._method(callback), self._method(errback)
        else:
            request = payload[1]
        request.meta[keys.SCORE] = score
        request.meta[keys.KEY] = (request.url, key)
        request.meta[keys.LEASE] = key
        return request

    def _method(self, name: str | None) -> Any:
        if name is None:
            return None
        if name == _NO_CALLBACK:
            return NO_CALLBACK
        return getattr(self.spider, name)


def meta_of(payload: Any) -> dict[str, Any] | None:
    """The request meta inside a payload, without rebuilding the Request."""
    if payload is None:
        return None
    kind = payload[0]
    if kind == GET:
        meta: dict[str, Any] | None = payload[3]
        return meta
    if kind == DICT:
        return payload[1].get("meta")  # type: ignore[no-any-return]
    return payload[1].meta  # type: ignore[no-any-return]


def key_of(request: Request) -> str:
    """The request's canonical key: computed by whoever found the link (meta
    ``focus_key``) when it is for this very URL, else computed here."""
    found = request.meta.get(keys.KEY)
    if found is not None and found[0] == request.url:
        return str(found[1])
    return canonicalize(request.url)


def _stored_meta(meta: dict[str, Any]) -> dict[str, Any] | None:
    if not meta:
        return None
    kept = {name: value for name, value in meta.items() if name not in keys.RECOMPUTED}
    return kept or None


def _stored_headers(request: Request) -> tuple[tuple[bytes, tuple[bytes, ...]], ...] | None:
    """The request's headers, hashable (a page's links share them)."""
    if not request.headers:
        return None
    return tuple((name, tuple(values)) for name, values in request.headers.items())


def _is_plain_get(request: Request) -> bool:
    """A GET with nothing but URL, callbacks, headers and meta."""
    return (
        type(request) is Request
        and request.method == "GET"
        and not request.body
        and not request.cookies
        and not request.cb_kwargs
        and not request.flags
        and not request.dont_filter
        and request.encoding == "utf-8"
    )
