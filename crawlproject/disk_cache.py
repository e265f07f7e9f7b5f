"""Pickled caches of our own making (never downloaded): what a slow read of a
file gives — a corpus's pages, its link graph, a WARC's index — kept on disk
under a key of the file's path, size and modification time."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import pickle
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

if TYPE_CHECKING:
    from collections.abc import Callable

logger = logging.getLogger(__name__)

T = TypeVar("T")


def user_cache_dir() -> Path:
    """Where a cache that belongs to no project folder lives: the XDG cache
    directory, as pip keeps its own, unless CRAWLPROJECT_CACHE_DIR names one."""
    if chosen := os.environ.get("CRAWLPROJECT_CACHE_DIR"):
        return Path(chosen)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "crawlproject"


def file_key(version: object, *paths: Path, extra: str = "") -> str:
    """A cache key of *paths* as they are now: a file changed, moved or
    rewritten gets a new key, and so does a new *version* of what is cached."""
    digest = hashlib.sha1(f"{version}|{extra}".encode())  # noqa: S324 (a cache key)
    for path in paths:
        stat = path.stat()
        digest.update(f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def cached(cache_file: Path | None, build: Callable[[], T]) -> T:
    """What *cache_file* holds, or *build*'s result, written there atomically.
    Processes that want the same missing file take turns (a lock file beside
    it): one builds it, the others read what it wrote rather than build it
    again. A cache that cannot be written (a folder this user may not write,
    a full disk) is one warning: the value is built and returned all the same
    (an error of *build*'s own is *build*'s, never the cache's)."""
    if cache_file is None:
        return build()
    found = _load_cache(cache_file)
    if found is not None:
        return cast("T", found[0])
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        lock = cache_file.with_suffix(".lock").open("a")
    except OSError as exc:
        _unwritable(cache_file, exc)
        return build()
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        found = _load_cache(cache_file)  # built while this process waited
        if found is not None:
            return cast("T", found[0])
        value = build()
        tmp = cache_file.with_suffix(".tmp")
        try:
            with tmp.open("wb") as f:
                pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
            tmp.replace(cache_file)
        except OSError as exc:
            _unwritable(cache_file, exc)
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
    return value


def _unwritable(cache_file: Path, exc: OSError) -> None:
    logger.warning("Cannot write the cache %s (%s): what it would hold is made anew each time", cache_file, exc)


def _load_cache(cache_file: Path) -> tuple[Any] | None:
    """``(value,)`` from *cache_file*, or None when it is missing or unusable."""
    if not cache_file.exists():
        return None
    try:
        with cache_file.open("rb") as f:
            return (pickle.load(f),)  # noqa: S301
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError, OSError) as exc:
        # a torn file, one written by code that has moved since, or one this user may not read: made anew
        logger.warning("Cache %s is unusable (%s); building it again", cache_file, exc)
        return None
