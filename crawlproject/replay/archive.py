"""Random access to the responses of a WARC file, by URL.

The WARC is scanned once at start-up to map each response record's target
URI (and its canonical form) to the record's byte offset; a lookup then
seeks straight to the record, so serving a page costs one small read
whatever the archive's size.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

from warcio.archiveiterator import ArchiveIterator

from crawlproject.urls import canonicalize

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

logger = logging.getLogger(__name__)

# Hop-by-hop and framing headers: the replay recomputes the framing.
_DROPPED_HEADERS = frozenset(
    {
        "content-length",
        "transfer-encoding",
        "content-encoding",
        "connection",
        "keep-alive",
        "proxy-connection",
    }
)


@dataclass(frozen=True)
class ArchivedResponse:
    url: str
    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes


class WarcArchive:
    """URL-indexed read access to the ``response`` records of one WARC."""

    def __init__(self, path: Path | str):
        self.path = str(path)
        self._offsets: dict[str, int] = {}
        self._canonical_offsets: dict[str, int] = {}
        self._file: BinaryIO = open(self.path, "rb")  # noqa: SIM115 (kept open)
        self._build_index()

    def _build_index(self) -> None:
        iterator = ArchiveIterator(self._file)
        for record in iterator:
            if record.rec_type != "response":
                continue
            url = record.rec_headers.get_header("WARC-Target-URI")
            if not url:
                continue
            offset = iterator.get_record_offset()
            # First record wins, as in a wayback replay of one capture.
            self._offsets.setdefault(url, offset)
            self._canonical_offsets.setdefault(canonicalize(url), offset)
        logger.info("Indexed %d responses in %s", len(self._offsets), self.path)

    def __len__(self) -> int:
        return len(self._offsets)

    def urls(self) -> Iterator[str]:
        """Target URIs of the archived responses, in archive order."""
        return iter(self._offsets)

    def lookup(self, url: str) -> ArchivedResponse | None:
        """The archived response for *url* (exact, else canonical match)."""
        offset = self._offsets.get(url)
        if offset is None:
            offset = self._canonical_offsets.get(canonicalize(url))
        if offset is None:
            return None
        return self._read(offset)

    def _read(self, offset: int) -> ArchivedResponse:
        self._file.seek(offset)
        record = next(iter(ArchiveIterator(self._file)))
        http = record.http_headers
        status_line = (http.statusline if http else "") or ""
        status_code, _, reason = status_line.partition(" ")
        headers = [
            (name, value)
            for name, value in (http.headers if http else [])
            if name.lower() not in _DROPPED_HEADERS
        ]
        return ArchivedResponse(
            url=record.rec_headers.get_header("WARC-Target-URI"),
            status=int(status_code) if status_code.isdigit() else 200,
            reason=reason or "OK",
            headers=headers,
            body=record.content_stream().read(),
        )

    def close(self) -> None:
        self._file.close()
