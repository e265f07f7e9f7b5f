"""Requests in and out of the frontier (crawlproject.frontier.codec)."""

from __future__ import annotations

from functools import partial

from scrapy import FormRequest, Request
from scrapy.http.request import NO_CALLBACK

from crawlproject.frontier.base import FrontierEntry
from crawlproject.frontier.codec import DICT, GET, OBJECT, RequestCodec, key_of, meta_of
from crawlproject.spiders import BestFirstSpider
from crawlproject.web.meta import KEY, LEASE, SCORE


def codec() -> tuple[RequestCodec, BestFirstSpider]:
    spider = BestFirstSpider(query="course", seeds="http://h/")
    return RequestCodec(spider), spider


def round_trip(codec: RequestCodec, request: Request) -> Request:
    key, score, url, payload = codec.encode(request)
    return codec.decode(FrontierEntry(key, score, payload, url))


def test_a_plain_get_keeps_callbacks_and_meta_but_not_what_is_recomputed() -> None:
    c, spider = codec()
    request = Request(
        "http://h/x", callback=spider.parse, errback=spider.on_error,
        meta={SCORE: 0.4, KEY: ("http://h/x", "http://h/x"), LEASE: "old", "depth": 3},
    )
    payload = c.payload(request)
    assert payload[0] == GET and payload[3] == {"depth": 3}
    back = round_trip(c, request)
    assert (back.url, back.callback, back.errback) == ("http://h/x", spider.parse, spider.on_error)
    assert back.meta == {"depth": 3, SCORE: 0.4, KEY: ("http://h/x", "http://h/x"), LEASE: "http://h/x"}


def test_other_requests_go_through_scrapys_to_dict() -> None:
    c, spider = codec()
    form = FormRequest("http://h/f", formdata={"q": "a"}, callback=spider.parse, cb_kwargs={"n": 1})
    assert c.payload(form)[0] == DICT
    back = round_trip(c, form)
    assert type(back) is FormRequest and back.body == b"q=a" and back.cb_kwargs == {"n": 1}
    assert back.callback == spider.parse
    no_callback = Request("http://h/n", callback=NO_CALLBACK, headers={"X": "1"})
    assert round_trip(c, no_callback).callback is NO_CALLBACK


def test_callbacks_that_cannot_be_named_keep_the_request_itself() -> None:
    c, _ = codec()
    for callback in (lambda response: None, partial(print, "x")):
        request = Request("http://h/o", callback=callback)
        payload = c.payload(request)
        assert payload[0] == OBJECT and payload[1] is request
        assert round_trip(c, request).callback is callback


def test_siblings_share_a_payload_and_meta_is_read_without_a_request() -> None:
    c, spider = codec()
    a = Request("http://h/a", callback=spider.parse, meta={"focus_parent": "http://p/", SCORE: 1.0})
    b = Request("http://h/b", callback=spider.parse, meta={"focus_parent": "http://p/", SCORE: 0.5})
    assert c.payload(a) is c.payload(b)
    assert meta_of(c.payload(a)) == {"focus_parent": "http://p/"}


def test_links_with_their_pages_referer_share_a_payload_and_keep_their_headers() -> None:
    """Scrapy's RefererMiddleware gives every link its page's URL as Referer:
    such a link used to be stored as a whole Request dict of its own (1.4 KB
    per queued URL on the synthetic web, none shared)."""
    c, spider = codec()
    page = {"Referer": "http://p/", "Accept": ["a/b", "c/d"]}
    a = Request("http://h/a", callback=spider.parse, headers=page, meta={"focus_parent": "http://p/", SCORE: 1.0})
    b = Request("http://h/b", callback=spider.parse, headers=page, meta={"focus_parent": "http://p/", SCORE: 0.5})
    other = Request("http://h/c", callback=spider.parse, headers={"Referer": "http://q/"},
                    meta={"focus_parent": "http://p/", SCORE: 0.5})
    assert c.payload(a)[0] == GET and c.payload(a) is c.payload(b)
    assert c.payload(other) is not c.payload(a)
    back = round_trip(c, b)
    assert back.headers.getlist("Accept") == [b"a/b", b"c/d"] and back.headers["Referer"] == b"http://p/"
    assert round_trip(c, other).headers["Referer"] == b"http://q/"
    assert not round_trip(c, Request("http://h/n", callback=spider.parse)).headers


def test_a_payload_saved_before_headers_were_kept_still_decodes() -> None:
    c, spider = codec()
    old = (GET, "parse", None, {"depth": 2}, False)  # a JOBDIR or Redis frontier of an older release
    request = c.decode(FrontierEntry("http://h/o", 0.3, old, "http://h/o"))
    assert request.callback == spider.parse and request.meta["depth"] == 2 and not request.headers


def test_the_key_found_with_a_link_is_trusted_only_for_that_url() -> None:
    assert key_of(Request("http://h/a", meta={KEY: ("http://h/a", "K")})) == "K"
    assert key_of(Request("http://h/b", meta={KEY: ("http://h/a", "K")})) == "http://h/b"
    assert key_of(Request("http://H:80/c/index.html")) == "http://h/c/"


def test_a_priority_that_is_the_score_comes_back() -> None:
    c, spider = codec()
    by_priority = round_trip(c, Request("http://h/p", callback=spider.parse, priority=7))
    assert by_priority.priority == 7 and by_priority.meta[SCORE] == 7.0
    scored = round_trip(c, Request("http://h/s", callback=spider.parse, priority=7, meta={SCORE: 0.5}))
    assert scored.meta[SCORE] == 0.5 and scored.priority == 0  # the score orders; no use for both
