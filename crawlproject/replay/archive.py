"""Random access to the responses of a WARC file, by URL.

The WARC is scanned once at start-up to map each response record's target
URI (and its canonical form) to the record's byte offset; a lookup then
seeks straight to the record, so serving a page costs one small read
whatever the archive's size.
"""

from __future__ import annotations

import gzip
import logging
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

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


class ArchiveError(ValueError):
    """A file that cannot be read as a WARC."""


def check_warc(path: str | Path) -> None:
    """Raise :class:`ArchiveError` unless *path* starts like a WARC file
    (gzip-compressed or not): warcio alone would read some text files as ARC
    records."""
    try:
        with open(path, "rb") as f:
            head = f.read(2)
            f.seek(0)
            if head == b"\x1f\x8b":
                with gzip.open(f) as unzipped:
                    first = unzipped.read(5)
            else:
                first = f.read(5)
    except FileNotFoundError:
        raise ArchiveError(f"no such file: {path}") from None
    except (OSError, EOFError, zlib.error) as exc:
        raise ArchiveError(f"not a WARC file: {path} ({exc})") from None
    if first != b"WARC/":
        raise ArchiveError(f"not a WARC file: {path} (it does not start with a WARC record)")


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
        check_warc(self.path)
        try:
            self._file: BinaryIO = open(self.path, "rb")  # noqa: SIM115 (kept open)
        except OSError as exc:
            raise ArchiveError(f"no such file: {self.path}" if isinstance(exc, FileNotFoundError) else f"{self.path}: {exc}") from None
        try:
            self._build_index()
        except (ArchiveLoadFailed, EOFError, OSError, ValueError) as exc:
            self._file.close()
            raise ArchiveError(f"not a WARC file: {self.path} ({exc})") from None

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
