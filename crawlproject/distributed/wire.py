"""What travels between a worker and the shared frontier's Redis: keys'
fingerprints, entries (crawlproject.distributed.scripts has their layout),
the Lua scripts run by SHA, and one round trip's calls.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, NamedTuple

import xxhash
from redis.exceptions import NoScriptError

from crawlproject.distributed import scripts
from crawlproject.frontier.items import split_origin

if TYPE_CHECKING:
    from collections.abc import Callable


def fingerprint(text: str) -> str:
    """A key's fingerprint in Redis: 60 bits of XXH3, hex (as the memory
    frontier's, so a frontier can move between them)."""
    return format(xxhash.xxh3_64_intdigest(text.encode()) >> 4, "015x")


def now_ms() -> int:
    return int(time.time() * 1000)


def entry_tail(key: str, url: str) -> str:
    """An entry's variable part: origin \\0 key \\0 url ('' when the key).
    NUL separates fields, so a NUL in a URL travels percent-encoded (as
    any client would send it)."""
    if "\0" in key or "\0" in url:
        key, url = key.replace("\0", "%00"), url.replace("\0", "%00")
    return f"{split_origin(key.encode())[0].decode()}\0{key}\0{url}"


def parse_entry(entry: str) -> tuple[str, str, str]:
    """key, url ('' when the key), payload id of an entry (crawlproject.distributed.scripts)."""
    _, key, url = entry[scripts.MEMBER_BYTES + scripts.PID_BYTES:].split("\0")
    return key, url, entry[scripts.MEMBER_BYTES:scripts.MEMBER_BYTES + scripts.PID_BYTES]


class RoundTrip(NamedTuple):
    """One round trip: its commands, and the buffers they were made of (put
    back, in order, if it fails)."""

    commands: list[tuple[str, list[Any]]]
    pushes: list[tuple[Any, ...]]
    settles: list[str]
    claims: list[tuple[str, list[Any]]]
    pop: int
    renew: bool = False


class Scripts:
    """The frontier's Lua scripts, run by SHA inside pipelines (redis-py's
    ``Script`` objects ask ``SCRIPT EXISTS`` on every pipeline: a second
    round trip each time); loaded again if Redis forgot them (a restart)."""

    def __init__(self, server: Any, names: tuple[str, ...]):
        self.server = server
        self.sources = {name: getattr(scripts, name) for name in names}
        self.shas: dict[str, str] = {}

    def call(self, pipe: Any, name: str, key: str, arguments: list[Any]) -> None:
        pipe.evalsha(self.shas[name], 1, key, *arguments)

    def execute(self, build: Callable[[Any], None]) -> list[Any]:
        """Run the commands *build* puts in a pipeline; one round trip."""
        if not self.shas:
            self._load()
        pipe = self.server.pipeline(transaction=False)
        build(pipe)
        try:
            return list(pipe.execute())
        except NoScriptError:  # Redis restarted: every script is gone, none ran
            self._load()
            pipe = self.server.pipeline(transaction=False)
            build(pipe)
            return list(pipe.execute())

    def run(self, name: str, key: str, arguments: list[Any]) -> Any:
        """One script alone: one round trip."""
        return self.execute(lambda pipe: self.call(pipe, name, key, arguments))[0]

    def _load(self) -> None:
        self.shas = {name: self.server.script_load(source) for name, source in self.sources.items()}
