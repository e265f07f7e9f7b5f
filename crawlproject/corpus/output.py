"""Where a crawl writes what it leaves behind (``FOCUS_OUTPUT_DIR``), so that
two crawls never write into one folder and a resumed crawl writes on in its own.

``FOCUS_OUTPUT_DIR`` may use ``%(name)s`` (the spider), ``%(time)s`` (the
crawl's start, UTC) and ``%(job)s`` (Scrapyd's job id when Scrapyd runs the
crawl, else the start time and a random token: unique for parallel crawls).

One process writes a crawl's JOBDIR and its folder (crawlproject.store_lock):
a second start on either stops before it reads, cuts or marks anything,
with one line naming the crawl that holds it, and exit code 2.

A crawl marks its folder with ``crawl.json`` (its id, spider, start). With
``JOBDIR``, the folder is remembered there: resuming the crawl reuses it,
and the history's ``order`` goes on from where it stopped. A folder that
holds another crawl's outputs is an error that says what to do.

A resumed crawl also knows what its earlier runs recorded (:class:`EarlierRuns`):
its page budgets count them, and a page they recorded that comes back (it
was in flight when a kill stopped the run: its links were not saved, so it
is fetched again) gets no second record.
"""

from __future__ import annotations

import json
import logging
import os
import uuid
import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import xxhash
from scrapy import signals
from scrapy.utils.job import job_dir

from crawlproject import config
from crawlproject.config import SettingsError
from crawlproject.store_lock import StoreLock, lock_dir

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

MARKER = "crawl.json"
_JOBDIR_STATE = "crawlproject-output.json"
#: Files only a crawl writes: a folder holding one of them holds a crawl.
_CRAWL_FILES = ("history.jsonl", "summary.json", "pages.jsonl", "links.tsv")


@dataclass
class EarlierRuns:
    """What the runs of a crawl before this one (resumed from JOBDIR) recorded."""

    pages: int = 0  #: history records
    answered: int = 0  #: of them, pages answered (a status; not a failed fetch)
    ok: int = 0  #: of them, answered 2xx
    #: fingerprints of their pages' canonical URLs not fetched again yet
    recorded: set[int] = field(default_factory=set, repr=False)

    def recorded_before(self, canonical_url: str) -> bool:
        """Whether an earlier run recorded *canonical_url*'s page."""
        return bool(self.recorded) and page_fingerprint(canonical_url) in self.recorded

    def fetched_again(self, canonical_url: str) -> bool:
        """Whether *canonical_url*'s page, fetched now, was recorded by an
        earlier run (the first time only: a later fetch is a new record)."""
        if not self.recorded:
            return False
        fingerprint = page_fingerprint(canonical_url)
        if fingerprint not in self.recorded:
            return False
        self.recorded.discard(fingerprint)
        return True

    @classmethod
    def read(cls, history: Path) -> EarlierRuns:
        earlier = cls()
        if not history.exists():
            return earlier
        with history.open(encoding="utf-8") as f:
            for line in f:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue  # repaired already: cannot happen but for a hand-edited file
                earlier.pages += 1
                status = record.get("status")
                if status is not None:
                    earlier.answered += 1
                    earlier.ok += 200 <= status < 300
                if record.get("canonical_url"):
                    earlier.recorded.add(page_fingerprint(record["canonical_url"]))
        return earlier


def earlier_runs(spider: Spider) -> EarlierRuns | None:
    """What the runs of *spider*'s crawl before this one recorded (a crawl
    resumed from JOBDIR), or None."""
    output = getattr(spider, "crawl_output", None)
    return output.earlier if isinstance(output, CrawlOutput) and output.resumed else None


def page_fingerprint(canonical_url: str) -> int:
    return int(xxhash.xxh3_64_intdigest(canonical_url.encode()))


@dataclass(frozen=True)
class CrawlOutput:
    path: Path
    crawl_id: str
    resumed: bool = False
    next_order: int = 1  #: the history's ``order`` of the next page fetched
    earlier: EarlierRuns = field(default_factory=EarlierRuns)  #: what earlier runs of a resumed crawl recorded
    #: the crawl's hold on its JOBDIR and its folder (crawlproject.store_lock)
    locks: tuple[StoreLock, ...] = field(default=(), compare=False, repr=False)

    def release(self) -> None:
        """Let the JOBDIR and the folder go: the crawl writes no more."""
        for lock in self.locks:
            lock.release()


def crawl_output(spider: Spider, settings: BaseSettings) -> CrawlOutput:
    """The crawl's output folder, created and marked on first use; kept on
    the spider so that every pipeline and extension of a crawl agrees."""
    existing = getattr(spider, "crawl_output", None)
    if isinstance(existing, CrawlOutput):
        return existing
    output = _resolve(spider, settings)
    spider.crawl_output = output  # type: ignore[attr-defined]
    return output


def output_dir(spider: Spider, settings: BaseSettings) -> Path:
    return crawl_output(spider, settings).path


def usable_folder(path: Path, setting: str) -> Path:
    """*path*, if it is a folder or one can be made there; else one line
    saying which file stands in the way."""
    for part in (path, *path.parents):
        if part.exists():
            if not part.is_dir():
                where = "is a file" if part == path else f"lies under {str(part)!r}, a file"
                raise SettingsError(f"{setting} {str(path)!r} {where}: name a folder (it is made if it does not exist)")
            break
    return path


def _resolve(spider: Spider, settings: BaseSettings) -> CrawlOutput:
    if settings.get("JOBDIR"):
        usable_folder(Path(settings["JOBDIR"]), "JOBDIR")
    jobdir = job_dir(settings)
    # One writer: a second start on the same JOBDIR or folder stops here,
    # before it reads, cuts or marks anything (crawlproject.store_lock).
    locks = [lock_dir(jobdir, f"JOBDIR {jobdir!r}")] if jobdir else []
    try:
        return _resolve_held(spider, settings, jobdir, locks)
    except BaseException:
        for lock in locks:
            lock.release()
        raise


def _resolve_held(spider: Spider, settings: BaseSettings, jobdir: str | None, locks: list[StoreLock]) -> CrawlOutput:
    remembered = _remembered(jobdir)
    if remembered is not None:
        path = Path(remembered["output_dir"])
        path.mkdir(parents=True, exist_ok=True)
        _lock_output(path, jobdir, locks)
        repair(path)
        earlier = EarlierRuns.read(path / "history.jsonl")
        return _held(spider, CrawlOutput(path, remembered["crawl_id"], resumed=True, next_order=earlier.pages + 1,
                                         earlier=earlier, locks=tuple(locks)))
    started = datetime.now(UTC)
    stamp = started.strftime("%Y-%m-%dT%H-%M-%S")
    job = str(getattr(spider, "_job", "") or os.environ.get("SCRAPY_JOB", "") or f"{stamp}-{uuid.uuid4().hex[:6]}")
    template = config.get_str(settings, "FOCUS_OUTPUT_DIR")
    try:
        path = Path(template % {"name": spider.name, "time": stamp, "job": job})
    except (KeyError, ValueError, TypeError) as exc:
        raise SettingsError(
            f"FOCUS_OUTPUT_DIR {template!r} is not a valid template ({exc}); it may use "
            "%(name)s, %(time)s and %(job)s"
        ) from None
    usable_folder(path, "FOCUS_OUTPUT_DIR")
    _lock_output(path, jobdir, locks)  # a live crawl's folder is said as such, not as "another crawl's"
    _refuse_another_crawls_folder(path)
    crawl_id = job
    path.mkdir(parents=True, exist_ok=True)
    marker = {"crawl_id": crawl_id, "spider": spider.name, "started_at": started.isoformat(), "jobdir": jobdir}
    (path / MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")
    if jobdir:
        Path(jobdir).mkdir(parents=True, exist_ok=True)
        state = {"output_dir": str(path.resolve()), "crawl_id": crawl_id}
        (Path(jobdir) / _JOBDIR_STATE).write_text(json.dumps(state) + "\n", encoding="utf-8")
    return _held(spider, CrawlOutput(path, crawl_id, locks=tuple(locks)))


def _same_folder(path: Path, jobdir: str | None) -> bool:
    return bool(jobdir) and path.resolve() == Path(jobdir).resolve()  # type: ignore[arg-type]


def _lock_output(path: Path, jobdir: str | None, locks: list[StoreLock]) -> None:
    """Lock the output folder (once: JOBDIR's lock holds it when they are one folder)."""
    if not _same_folder(path, jobdir) and not any(lock.path.parent == path for lock in locks):
        locks.append(lock_dir(path, f"FOCUS_OUTPUT_DIR {str(path)!r}"))


def _held(spider: Spider, output: CrawlOutput) -> CrawlOutput:
    """*output*, its locks let go when the crawl's engine stops (a process
    that ends lets them go anyway: crawl() may run several crawls in one)."""
    crawler = getattr(spider, "crawler", None)
    if crawler is not None and output.locks:
        crawler.signals.connect(output.release, signal=signals.engine_stopped, weak=False)
    return output


def _remembered(jobdir: str | None) -> dict[str, Any] | None:
    if not jobdir:
        return None
    state = Path(jobdir) / _JOBDIR_STATE
    if not state.exists():
        return None
    try:
        remembered: dict[str, Any] = json.loads(state.read_text(encoding="utf-8"))
        return remembered if "output_dir" in remembered else None
    except (OSError, ValueError):
        return None


def _refuse_another_crawls_folder(path: Path) -> None:
    if not path.is_dir():
        return
    if not any((path / name).exists() for name in _CRAWL_FILES):
        return  # empty, a log file, or the marker of a crawl that never fetched: nobody's crawl
    what = ""
    try:
        marker = json.loads((path / MARKER).read_text(encoding="utf-8"))
        what = f" (a {marker.get('spider')} crawl started {marker.get('started_at')})"
    except (OSError, ValueError):
        pass
    raise SettingsError(
        f"FOCUS_OUTPUT_DIR {str(path)!r} already holds another crawl{what}: choose another "
        "folder (the default, crawls/%(name)s-%(job)s, is new for every crawl), delete that one, "
        "or resume that crawl with the JOBDIR it ran with"
    )


def repair(path: Path) -> dict[str, int]:
    """Cut what a killed crawl left half-written at the end of its files — a
    torn last line, a torn last WARC record — so that what follows appends
    to whole records and nothing reads a broken one later. Returns the bytes
    cut per file."""
    cut = {}
    for name in ("history.jsonl", "links.tsv", "pages.jsonl"):
        file = path / name
        if file.exists():
            removed = _cut_torn_line(file)
            if removed:
                cut[name] = removed
    warc = path / "crawl.warc.gz"
    if warc.exists():
        removed = _cut_torn_record(warc)
        if removed:
            cut[warc.name] = removed
    if cut:
        logger.warning("Resuming: cut the torn ends a stopped crawl left: %s", cut)
    return cut


def _cut_torn_line(file: Path) -> int:
    size = file.stat().st_size
    if size == 0:
        return 0
    with file.open("rb+") as f:
        tail_start = max(0, size - 1 << 16)
        f.seek(tail_start)
        tail = f.read()
        if tail.endswith(b"\n"):
            return 0
        last_newline = tail.rfind(b"\n")
        keep = tail_start + last_newline + 1 if last_newline >= 0 else _last_newline_before(f, tail_start)
        f.truncate(keep)
        return size - keep


def _last_newline_before(f: BinaryIO, end: int) -> int:
    """Offset just past the last newline before *end* (0 when there is none)."""
    while end > 0:
        start = max(0, end - (1 << 16))
        f.seek(start)
        chunk = f.read(end - start)
        found = chunk.rfind(b"\n")
        if found >= 0:
            return start + found + 1
        end = start
    return 0


def _cut_torn_record(warc: Path) -> int:
    """Truncate our WARC (one gzip member per record) after its last whole
    member: a member cut by a kill never reaches its gzip trailer."""
    size = warc.stat().st_size
    good_end = consumed = 0
    member = zlib.decompressobj(31)
    with warc.open("rb") as f:
        while chunk := f.read(1 << 20):
            data = chunk
            while data:
                try:
                    member.decompress(data)
                except zlib.error:
                    data = b""  # garbage: nothing after good_end is kept
                    consumed = size
                    break
                if member.eof:
                    used = len(data) - len(member.unused_data)
                    consumed += used
                    good_end = consumed
                    data = member.unused_data
                    member = zlib.decompressobj(31)
                else:
                    consumed += len(data)
                    data = b""
    if good_end < size:
        with warc.open("rb+") as f:
            f.truncate(good_end)
    return size - good_end
