"""One writer per durable store (docs/architecture.md, "One writer"): a
crawl's JOBDIR and output folder, a refresh's state, a search index and its
collections, a model file while it is written — each assumes one process
writes it at a time. A second start on the same store stops before it
touches anything, with one line naming the holder, as a database refuses a
second writer on its files and Heritrix a job that is running.

The lock is an advisory ``flock`` on a file beside the store, held by the
running process: the kernel lets it go when the process ends, however it
ends (a SIGKILL, a power cut), so a lock is never left behind. The file also
says who holds it (PID, host, start, command); a holder that ends cleanly
empties it, so a start that finds it filled but unlocked knows the last
holder was killed, says so in one line and goes on — the crash-resume path
is unchanged. ``flock`` is POSIX's and local: on a network file system that
does not carry it, two machines are not kept apart (docs say so).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import socket
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from crawlproject.config import SettingsError

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["StoreInUse", "StoreLock", "lock_dir", "lock_file", "writing"]

logger = logging.getLogger(__name__)

#: The lock of a folder store, inside it.
FOLDER_LOCK = ".crawlproject.lock"


class StoreInUse(SettingsError):
    """Another process writes the store: a second writer would trample it."""


class StoreLock:
    """A held lock on one store; :meth:`release` (or the process's end) lets it go."""

    def __init__(self, path: Path, what: str, handle: IO[str]):
        self.path, self.what = path, what
        self._handle: IO[str] | None = handle

    @classmethod
    def acquire(cls, path: Path, what: str) -> StoreLock:
        """The lock at *path* (a lock file) for the store *what* names ("JOBDIR
        'job'"); :class:`StoreInUse` when another process holds it."""
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = path.open("a+", encoding="utf-8")  # never truncated before it is held
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read(handle)
            handle.close()
            raise StoreInUse(
                f"{what} is in use by {_describe(holder)}: a second writer would trample it — wait for that one "
                "to end, stop it, or choose another"
            ) from None
        left = _read(handle)
        if left:
            logger.warning("%s was left by %s, which ended without letting it go (killed?): going on", what,
                           _describe(left))
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps(_me()) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
        return cls(path, what, handle)

    @property
    def held(self) -> bool:
        return self._handle is not None

    def __enter__(self) -> StoreLock:
        return self

    def __exit__(self, *_: object) -> None:
        self.release()

    def release(self) -> None:
        """Let the lock go, saying the store was left in order (the file emptied)."""
        handle, self._handle = self._handle, None
        if handle is None:
            return
        with contextlib.suppress(OSError):
            handle.seek(0)
            handle.truncate()
            handle.flush()
        handle.close()  # closing the last descriptor lets the flock go


def lock_dir(folder: str | Path, what: str) -> StoreLock:
    """The lock of a folder store (``FOLDER/.crawlproject.lock``)."""
    return StoreLock.acquire(Path(folder) / FOLDER_LOCK, what)


def lock_file(path: str | Path, what: str) -> StoreLock:
    """The lock of a one-file store (``FILE.lock`` beside it)."""
    path = Path(path)
    return StoreLock.acquire(path.with_name(path.name + ".lock"), what)


@contextlib.contextmanager
def writing(path: str | Path, what: str) -> Iterator[Path]:
    """Write a one-file store whole or not at all: the caller writes the
    temporary path yielded (beside *path*, same folder), which replaces
    *path* in one rename when the block ends without an error — a reader
    never sees it half-written — all under the file's lock."""
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.partial{path.suffix}")
    with lock_file(path, what):
        try:
            yield temporary
            os.replace(temporary, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                temporary.unlink()


def _me() -> dict[str, Any]:
    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "since": time.time(),
        "command": _command(),
    }


def _command() -> str:
    """The command that started this process, as the user typed it (``scrapy
    crawl bestfirst``): Scrapy takes its command's name out of sys.argv, the
    process's own command line keeps it."""
    try:
        words = Path("/proc/self/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
    except OSError:
        words = list(sys.argv)
    if len(words) > 2 and words[1] == "-m":  # python -m scrapy …
        words = words[2:]
    elif words and Path(words[0]).name.startswith("python") and len(words) > 1:  # python script.py …
        words = words[1:]
    if not words:
        return ""
    return " ".join([Path(words[0]).name, *words[1:3]])


def _read(handle: IO[str]) -> dict[str, Any]:
    handle.seek(0)
    try:
        found = json.loads(handle.read() or "{}")
    except ValueError:
        return {"pid": "?"}
    return found if isinstance(found, dict) else {}


def _describe(holder: dict[str, Any]) -> str:
    """``PID 1234 on host, started 2026-12-07T13:20:08+00:00 (scrapy crawl bestfirst)``."""
    if not holder:
        return "another process"
    said = f"PID {holder.get('pid', '?')}"
    if holder.get("host") and holder["host"] != socket.gethostname():
        said += f" on {holder['host']}"
    if holder.get("started"):
        said += f", started {holder['started']}"
    if holder.get("command"):
        said += f" ({holder['command']})"
    return said
