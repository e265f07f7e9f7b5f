"""Which responses are pages: the crawler reads HTML only (docs/methods.md §1)."""

from __future__ import annotations

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


def is_html_content_type(value: bytes | str | None) -> bool:
    """Whether a Content-Type header value names HTML (missing: assume it may).

    >>> is_html_content_type(b"text/html; charset=iso-8859-1")
    True
    >>> is_html_content_type("image/gif")
    False
    >>> is_html_content_type(None)
    True
    """
    if not value:
        return True
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    return value.split(";", 1)[0].strip().lower() in HTML_TYPES
