"""One queued URL in one ``bytes`` object: the memory frontier's record.

An *item* is a 20-byte header — the order key (the score, made to sort
byte-wise best first), a push counter (ties pop first-in first-out), the
index of the URL's payload and the index of its origin — followed by the
rest of the key after its origin (``/path?query``) and, when the URL as
found differs from the key, ``\\0`` and that URL. Items compare with one
memcmp, so heaps of items need no tuples, and a URL costs about 100 bytes:

* origins (``http://www.cs.cornell.edu``) are stored once, in a table: a
  crawl's URLs share a few hosts, and the origin is a third of a URL;
* payloads (what rebuilds the Request) are stored once for all the URLs
  that share them — the links of one page — in a reference-counted table.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any

import xxhash

if TYPE_CHECKING:
    from collections.abc import Callable

HEADER = struct.Struct(">QIII")  # order, seq, payload index, origin index
HEAD = HEADER.size
SEQ_LIMIT = 2**32  # the frontier renumbers its items before the counter wraps
_DOUBLE, _UINT = struct.Struct(">d"), struct.Struct(">Q")
ALL_BITS, _SIGN = 0xFFFF_FFFF_FFFF_FFFF, 0x8000_0000_0000_0000
_FP_SHIFT = 4  # 64 → 60-bit fingerprints: 32-byte ints instead of 36


def order_of(score: float) -> int:
    """An unsigned 64-bit key that sorts ascending as *score* sorts descending.

    >>> order_of(0.9) < order_of(0.5) < order_of(-2.0)
    True
    >>> score_of(order_of(0.25))
    0.25
    """
    (bits,) = _UINT.unpack(_DOUBLE.pack(-(score + 0.0)))  # + 0.0: no -0.0
    return int(bits ^ ALL_BITS if bits & _SIGN else bits | _SIGN)


def score_of(order: int) -> float:
    bits = order ^ _SIGN if order & _SIGN else order ^ ALL_BITS
    return float(-_DOUBLE.unpack(_UINT.pack(bits))[0])


def fingerprint(key: bytes) -> int:
    """60 bits of XXH3 of a canonical URL: stable across runs and machines,
    and fast (a crawl takes several per URL); two keys collide with odds of
    about 1e-6 at a million URLs.

    >>> fingerprint(b"http://example.com/") == fingerprint(b"http://example.com/")
    True
    """
    return int(xxhash.xxh3_64_intdigest(key)) >> _FP_SHIFT


def split_origin(key: bytes) -> tuple[bytes, bytes]:
    """``(b"http://host:port", b"/path?query")``.

    >>> split_origin(b"http://h.example/a/b?c")
    (b'http://h.example', b'/a/b?c')
    """
    start = key.find(b"://")
    cut = key.find(b"/", start + 3 if start >= 0 else 0)
    return (key, b"") if cut < 0 else (key[:cut], key[cut:])


class ItemTables:
    """The origin and payload tables items refer to, and packing/unpacking."""

    def __init__(self) -> None:
        self.origins: list[bytes] = []
        self._origin_index: dict[bytes, int] = {}
        self.payloads: list[Any] = [None]  # index 0: no payload
        self.references: list[int] = [0]
        self._payload_index: dict[int, int] = {}  # id(payload) → index
        self._free: list[int] = []
        #: told of every payload and origin given an index (the journal)
        self.on_new_payload: Callable[[int, Any], None] | None = None
        self.on_new_origin: Callable[[int, bytes], None] | None = None

    def origin_index(self, origin: bytes) -> int:
        index = self._origin_index.get(origin)
        if index is None:
            index = self._origin_index[origin] = len(self.origins)
            self.origins.append(origin)
            if self.on_new_origin is not None:
                self.on_new_origin(index, origin)
        return index

    def pack(self, order: int, seq: int, key: bytes, payload: Any, url: str | None) -> bytes:
        origin, rest = split_origin(key)
        head = HEADER.pack(order, seq, self.share(payload), self.origin_index(origin))
        if url is None or url.encode() == key:
            return head + rest
        return head + rest + b"\0" + url.encode()

    def share(self, payload: Any) -> int:
        """The payload's index, its reference count raised by one."""
        if payload is None:
            return 0
        index = self._payload_index.get(id(payload))
        if index is None:
            index = self._free.pop() if self._free else len(self.payloads)
            if index == len(self.payloads):
                self.payloads.append(payload)
                self.references.append(1)
            else:
                self.payloads[index], self.references[index] = payload, 1
            self._payload_index[id(payload)] = index
            if self.on_new_payload is not None:
                self.on_new_payload(index, payload)
        else:
            self.references[index] += 1
        return index

    def release(self, item: bytes) -> None:
        """The item is gone: its payload loses a reference."""
        index = HEADER.unpack_from(item)[2]
        if index:
            self.references[index] -= 1
            if not self.references[index]:
                del self._payload_index[id(self.payloads[index])]
                self.payloads[index] = None
                self._free.append(index)

    def key(self, item: bytes) -> bytes:
        """The item's canonical key, as bytes (what its fingerprint is of)."""
        rest = item[HEAD:]
        cut = rest.find(b"\0")
        origin: bytes = self.origins[HEADER.unpack_from(item)[3]]
        return origin + (rest if cut < 0 else rest[:cut])

    def key_and_url(self, item: bytes) -> tuple[str, str]:
        rest = item[HEAD:]
        key_rest, _, url = rest.partition(b"\0")
        key = (self.origins[HEADER.unpack_from(item)[3]] + key_rest).decode()
        return key, url.decode() if url else key

    def payload(self, item: bytes) -> Any:
        return self.payloads[HEADER.unpack_from(item)[2]]

    @staticmethod
    def origin(item: bytes) -> int:
        return int(HEADER.unpack_from(item)[3])

    @staticmethod
    def reorder(item: bytes, order: int | None = None, seq: int | None = None) -> bytes:
        """The same item with a new order key and/or push counter."""
        old_order, old_seq, payload, origin = HEADER.unpack_from(item)
        return HEADER.pack(
            old_order if order is None else order, old_seq if seq is None else seq, payload, origin
        ) + item[HEAD:]

    def load(self, origins: dict[int, bytes], payloads: dict[int, Any], items: list[bytes]) -> None:
        """Tables as saved, with references counted from the *items* kept."""
        size = max(origins, default=-1) + 1
        self.origins = [origins.get(i, b"") for i in range(size)]
        self._origin_index = {origin: i for i, origin in enumerate(self.origins) if origin}
        size = max(payloads, default=0) + 1
        self.payloads = [payloads.get(i) for i in range(size)]
        self.references = [0] * size
        for item in items:
            self.references[HEADER.unpack_from(item)[2]] += 1
        self.references[0] = 0
        for index in range(1, size):
            if not self.references[index]:
                self.payloads[index] = None
        self._payload_index = {id(p): i for i, p in enumerate(self.payloads) if i and self.references[i]}
        self._free = [i for i in range(1, size) if not self.references[i]]
