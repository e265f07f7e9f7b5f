"""Random access to the responses of a WARC file, by URL.

The WARC is scanned once at start-up to map each response record's target
URI (and its canonical form) to the record's byte offset; a lookup then
seeks straight to the record, so serving a page costs one small read
whatever the archive's size.

A WARC may hold several records of one URL (a web that changes: one record
per version, dated by ``WARC-Date``). Looked up plainly, the first record
wins, as in a wayback replay of one capture; looked up *as of* a time t, the
URL's latest record dated ≤ t answers — none (before the page existed) is
a miss, and a 404 record (the page was deleted) is served as the 404 it is.

A ``revisit`` record (a crawler that deduplicates: Heritrix, wget
``--warc-dedup``, Browsertrix) stores no body: it says the page was fetched
again with the payload of an earlier response. It answers as its own
capture with that response's body — found by the payload digest, else by
``WARC-Refers-To-Target-URI`` and ``-Date`` — and with its own HTTP status
and headers, unless it records a ``304`` (the server said "not modified"):
then the earlier response's. A revisit whose earlier response is not in the
WARC is skipped (counted in :attr:`WarcArchive.unresolved_revisits`).
"""

from __future__ import annotations

import bisect
import functools
import gzip
import hashlib
import logging
import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Literal
from urllib.parse import urlsplit

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from crawlproject.disk_cache import cached, file_key, user_cache_dir
from crawlproject.web.urls import canonicalize

if TYPE_CHECKING:
    from collections.abc import Iterator

    from warcio.recordloader import ArcWarcRecord
    from warcio.statusandheaders import StatusAndHeaders

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


def parse_time(value: str | float) -> float:
    """A point in time as POSIX seconds: ISO 8601 (``2021-03-01``,
    ``2021-03-01T12:00:00Z``; without a zone, UTC) or seconds since the epoch.

    >>> parse_time("2021-03-01T00:00:00Z") == parse_time("2021-03-01") == parse_time("1614556800")
    True
    """
    if isinstance(value, int | float):
        return float(value)
    text = value.strip()
    try:
        return float(text)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"not a time: {value!r} (ISO 8601 like 2021-03-01T12:00:00Z, or seconds since the epoch)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def format_time(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


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


class RevisitIndex:
    """Where the payload of a revisit record is: the responses seen so far,
    by payload digest and by (URL, WARC-Date)."""

    def __init__(self) -> None:
        self._by_digest: dict[str, int] = {}  # payload digest → its first response's offset
        self._by_capture: dict[tuple[str, str], int] = {}  # (URL, WARC-Date) → a response's offset

    def add_response(self, warc_headers: StatusAndHeaders, offset: int) -> None:
        if digest := warc_headers.get_header("WARC-Payload-Digest"):
            self._by_digest.setdefault(digest, offset)
        url = warc_headers.get_header("WARC-Target-URI") or ""
        self._by_capture.setdefault((url, warc_headers.get_header("WARC-Date") or ""), offset)

    def original(self, warc_headers: StatusAndHeaders) -> int | None:
        """The offset of the response whose payload a revisit record (its
        WARC *headers*) repeats; None when none was seen."""
        digest = warc_headers.get_header("WARC-Payload-Digest")
        if digest and digest in self._by_digest:
            return self._by_digest[digest]
        target = warc_headers.get_header("WARC-Refers-To-Target-URI")
        return self._by_capture.get((target, warc_headers.get_header("WARC-Refers-To-Date") or "")) if target else None


def revisit_answer(revisit: ArcWarcRecord, original: ArcWarcRecord) -> tuple[StatusAndHeaders | None, bytes]:
    """The HTTP status and headers, and the body, a revisit record answers
    with: the body of the response it repeats; its own status and headers
    unless it records a 304 (the server said "not modified"), then those of
    the response."""
    http = revisit.http_headers
    own = http is not None and bool(http.statusline) and not http.statusline.startswith("304")
    return (http if own else original.http_headers), original.content_stream().read()


def cut_off(record: ArcWarcRecord) -> bool:
    """Whether *record*, read to its end, holds fewer bytes than its header
    says: the file stops inside it (a WARC cut off by a full disk or an
    interrupted copy). warcio then ends its iteration without a word."""
    return getattr(record.raw_stream, "limit", 0) > 0


def warn_cut_off(path: str | Path, complete: int) -> None:
    """The one line for a WARC that ends inside a record."""
    logger.warning(
        "%s is cut off: it ends inside a record, so only the %d complete responses before it are read"
        " and the rest of the archive is missing; copy or write the file again",
        path, complete,
    )


def read_record(file: BinaryIO, offset: int) -> ArcWarcRecord:
    file.seek(offset)
    return next(iter(ArchiveIterator(file)))


@dataclass
class WarcIndex:
    """Where each response of a WARC is: what a scan of the whole file finds,
    kept so that the next replay of the same file reads it instead."""

    # URL (as archived, and canonical) → its records' (WARC-Date, offset), oldest first.
    versions: dict[str, list[tuple[float, int]]] = field(default_factory=dict)
    canonical_versions: dict[str, list[tuple[float, int]]] = field(default_factory=dict)
    revisits: RevisitIndex = field(default_factory=RevisitIndex)
    unresolved_revisits: int = 0
    cut_off: bool = False  # the file ends inside a record (see cut_off)
    first_date: float = 0.0
    last_date: float = 0.0

    def add(self, url: str, date: float, offset: int) -> None:
        self.versions.setdefault(url, []).append((date, offset))
        self.canonical_versions.setdefault(canonicalize(url), []).append((date, offset))

    @property
    def dated(self) -> bool:
        """Some URL has more than one record (a web that changes)."""
        return any(len(versions) > 1 for versions in self.versions.values())


@functools.cache
def _index_version() -> str:
    """What the index depends on besides the file: this module and the
    canonicalization (an index cached by older code is not read). Read as
    package data: inside a Scrapyd egg (a zip) there is no file to open."""
    import w3lib

    sources = b"".join(resources.files(package).joinpath(name).read_bytes()
                       for package, name in (("crawlproject.replay", "archive.py"), ("crawlproject.web", "urls.py")))
    return f"{hashlib.sha1(sources).hexdigest()[:12]}|w3lib {w3lib.__version__}"  # noqa: S324 (a cache key)


def scan_index(file: BinaryIO) -> WarcIndex:
    """Every response and resolvable revisit record of the WARC *file*."""
    index = WarcIndex()
    iterator = ArchiveIterator(file)
    dates = []
    revisits = []
    record = None
    for record in iterator:
        if record.rec_type not in ("response", "revisit"):
            continue
        url = record.rec_headers.get_header("WARC-Target-URI")
        if not url:
            continue
        offset = iterator.get_record_offset()  # reads the record to its end
        if cut_off(record):
            break  # an incomplete response is not served
        if record.rec_type == "revisit":
            revisits.append((record.rec_headers, url, offset))
            continue
        index.revisits.add_response(record.rec_headers, offset)
        date = _record_date(record.rec_headers.get_header("WARC-Date"))
        index.add(url, date, offset)
        dates.append(date)
    for warc_headers, url, offset in revisits:  # after every response: the one repeated may come later in the file
        if index.revisits.original(warc_headers) is None:
            index.unresolved_revisits += 1
            continue
        date = _record_date(warc_headers.get_header("WARC-Date"))
        index.add(url, date, offset)
        dates.append(date)
    for versions in (*index.versions.values(), *index.canonical_versions.values()):
        if len(versions) > 1:
            versions.sort()  # by date, then archive order
    if dates:
        index.first_date, index.last_date = min(dates), max(dates)
    index.cut_off = record is not None and cut_off(record)
    return index


class WarcArchive:
    """URL-indexed read access to the ``response`` records of one WARC. The
    index is cached in *cache_dir* (the user's cache directory unless told;
    None: not cached): a WARC is scanned once, not at every replay's start."""

    def __init__(self, path: Path | str, cache_dir: Path | Literal["user"] | None = "user"):
        self.path = str(path)
        check_warc(self.path)
        try:
            self._file: BinaryIO = open(self.path, "rb")  # noqa: SIM115 (kept open)
        except OSError as exc:
            raise ArchiveError(
                f"no such file: {self.path}" if isinstance(exc, FileNotFoundError) else f"{self.path}: {exc}"
            ) from None
        try:
            self._index = self._load_index(user_cache_dir() if cache_dir == "user" else cache_dir)
        except (ArchiveLoadFailed, EOFError, OSError, ValueError) as exc:
            self._file.close()
            raise ArchiveError(f"not a WARC file: {self.path} ({exc})") from None
        index = self._index
        self.unresolved_revisits, self.cut_off, self.dated = index.unresolved_revisits, index.cut_off, index.dated
        self.first_date, self.last_date = index.first_date, index.last_date
        logger.info("Indexed %d responses in %s", len(index.versions), self.path)
        if index.cut_off:
            warn_cut_off(self.path, len(index.versions))
        if index.unresolved_revisits:
            logger.warning(
                "%d revisit records of %s refer to a response the WARC does not hold: skipped",
                index.unresolved_revisits, self.path,
            )

    def _load_index(self, cache_dir: Path | None) -> WarcIndex:
        if cache_dir is None:
            return scan_index(self._file)
        cache_file = cache_dir / f"warc-index-{file_key(_index_version(), Path(self.path))}.pickle"
        return cached(cache_file, lambda: scan_index(self._file))

    def __len__(self) -> int:
        return len(self._index.versions)

    def urls(self) -> Iterator[str]:
        """Target URIs of the archived responses, in archive order."""
        return iter(self._index.versions)

    def lookup(self, url: str, as_of: float | None = None) -> ArchivedResponse | None:
        """The archived response for *url* (exact, else canonical match): its
        first record, or with *as_of* its latest record dated ≤ *as_of*."""
        versions = self._index.versions.get(url) or self._index.canonical_versions.get(canonicalize(url))
        if not versions:
            return None
        if as_of is None:
            return self._read(min(versions, key=lambda version: version[1])[1])  # first in the archive
        position = bisect.bisect_right(versions, as_of, key=lambda version: version[0])
        return self._read(versions[position - 1][1]) if position else None

    def live_pages(self, host: str, as_of: float) -> list[tuple[str, float]]:
        """(URL, when its version went live) of every page of *host* answered
        200 as of a time: what a site's sitemap with ``lastmod`` lists."""
        found = []
        for url, versions in self._index.versions.items():
            if urlsplit(url).hostname != host:
                continue
            position = bisect.bisect_right(versions, as_of, key=lambda version: version[0])
            if position and self._read(versions[position - 1][1]).status == 200:
                found.append((url, versions[position - 1][0]))
        return found

    def _read(self, offset: int) -> ArchivedResponse:
        record = read_record(self._file, offset)
        url = record.rec_headers.get_header("WARC-Target-URI")
        if record.rec_type != "revisit":
            return _response(url, record.http_headers, record.content_stream().read())
        original_offset = self._index.revisits.original(record.rec_headers)
        assert original_offset is not None  # noqa: S101 (indexed only when resolved)
        return _response(url, *revisit_answer(record, read_record(self._file, original_offset)))

    def close(self) -> None:
        self._file.close()


def _response(url: str, http: StatusAndHeaders | None, body: bytes) -> ArchivedResponse:
    status_line = (http.statusline if http else "") or ""
    status_code, _, reason = status_line.partition(" ")
    headers = [
        (name, value)
        for name, value in (http.headers if http else [])
        if name.lower() not in _DROPPED_HEADERS
    ]
    return ArchivedResponse(
        url=url, status=int(status_code) if status_code.isdigit() else 200, reason=reason or "OK",
        headers=headers, body=body,
    )


def _record_date(value: str | None) -> float:
    """A record's WARC-Date in seconds; a record without one counts as
    always there (0: the epoch)."""
    if not value:
        return 0.0
    try:
        return parse_time(value)
    except ValueError:
        return 0.0
