"""Anchor and context of links in messy, 1997-style HTML."""

from __future__ import annotations

from lxml.html import fromstring

from crawlproject.web.linkcontext import LinkContext, link_contexts


def test_unclosed_tags_and_relative_links() -> None:
    html = (
        "<html><body><ul><li>Lecture notes for <a href=notes.html>week one<li>"
        "Homework <a href='../hw/1.html'>set 1</a> due Friday<p>unrelated words here"
    )
    contexts = link_contexts(fromstring(html), "http://h/course/index.html", window=3)
    # the unclosed anchor runs on (as in a browser) until the next link starts
    assert contexts["http://h/course/notes.html"].anchor == "week one Homework"
    assert contexts["http://h/course/notes.html"].context == "Lecture notes for set 1 due"
    assert contexts["http://h/hw/1.html"].anchor == "set 1"
    assert contexts["http://h/hw/1.html"].context == "week one Homework due Friday unrelated"


def test_frameset_and_script_text() -> None:
    html = (
        "<html><head><script>var a = 'not words';</script></head>"
        "<frameset><frame src='menu.html' name='course menu'><frame src='main.html'></frameset></html>"
    )
    contexts = link_contexts(fromstring(html), "http://h/", window=5)
    assert contexts["http://h/menu.html"].anchor == "course menu"
    assert contexts["http://h/main.html"].anchor == ""
    assert "not" not in contexts["http://h/menu.html"].context


def test_first_occurrence_wins_and_window_zero_means_no_context() -> None:
    html = "<p>alpha <a href='/x'>one</a> beta <a href='/x'>two</a></p>"
    contexts = link_contexts(fromstring(html), "http://h/", window=0)
    assert contexts["http://h/x"].anchor == "one"
    assert contexts["http://h/x"].context == ""


def test_words_after_a_comment_are_part_of_the_context() -> None:
    """The text after a comment (or a processing instruction) is the page's
    text: it was dropped, and with it a link's context on many hand-written
    pages of the 1990s."""
    tree = fromstring("<p>one <!-- a note --> two <a href='/x'>the anchor</a> three<?php echo 1 ?> four</p>")
    assert link_contexts(tree, "http://h/", 5)["http://h/x"] == LinkContext("the anchor", "one two three four")
