from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crawlproject.policy.admission import refusal
from crawlproject.web.urls import canonicalize, host_of

URLISH = st.builds(
    lambda scheme, host, port, path, query, fragment: (
        f"{scheme}://{host}{port}{path}{'?' + query if query else ''}{'#' + fragment if fragment else ''}"
    ),
    st.sampled_from(["http", "HTTP", "https", "Https"]),
    st.from_regex(r"[A-Za-z0-9-]{1,12}(\.[A-Za-z0-9-]{1,12}){0,3}", fullmatch=True),
    st.sampled_from(["", ":80", ":443", ":8080", ":0"]),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=40).map(lambda p: "/" + p),
    st.text(max_size=20),
    st.text(max_size=10),
)


@settings(max_examples=2000, deadline=None)
@given(st.text())
def test_never_raises_and_is_idempotent_on_any_text(text: str) -> None:
    once = canonicalize(text)
    assert canonicalize(once) == once


@settings(max_examples=2000, deadline=None)
@given(URLISH)
def test_idempotent_on_url_shaped_input(url: str) -> None:
    once = canonicalize(url)
    assert canonicalize(once) == once
    assert "#" not in once


@pytest.mark.parametrize(
    ("variants", "canonical"),
    [
        # case of scheme and host; default port; bare host gets "/"
        (["HTTP://WWW.Cornell.EDU", "http://www.cornell.edu:80/"], "http://www.cornell.edu/"),
        (["https://example.com:443/a"], "https://example.com/a"),
        # fragment dropped; ~ and %7E collide
        (["http://h/%7Euser/#top", "http://h/~user/"], "http://h/~user/"),
        # . and .. segments
        (["http://h/a/./b/../c/x.html"], "http://h/a/c/x.html"),
        # default pages stripped
        (["http://h/dir/index.html", "http://h/dir/INDEX.HTM", "http://h/dir/"], "http://h/dir/"),
        # query sorted
        (["http://h/p?b=2&a=1"], "http://h/p?a=1&b=2"),
    ],
)
def test_spec_rules(variants: list[str], canonical: str) -> None:
    for url in variants:
        assert canonicalize(url) == canonical


def test_non_default_port_is_kept() -> None:
    assert canonicalize("http://h:8080/x") == "http://h:8080/x"


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("mailto:someone@example.com", "bad_scheme"),
        ("javascript:void(0)", "bad_scheme"),
        ("ftp://ftp.example.com/", "bad_scheme"),
        ("http:///nohost", "malformed"),
        ("http://example.com/ok", None),
    ],
)
def test_refusal_reasons(url: str, reason: str | None) -> None:
    assert refusal(canonicalize(url)) == reason


def test_host_of_matches_urlsplit() -> None:
    assert host_of("http://www.cs.wisc.edu/~user/") == "www.cs.wisc.edu"
    assert host_of("http://h:81/") == "h:81"
