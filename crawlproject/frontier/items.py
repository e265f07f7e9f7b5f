"""One queued URL in one ``bytes`` object: the memory frontier's record.

An *item* is a 28-byte header — the order key (the score, made to sort
byte-wise best first), the tie key (the push counter, arranged so that ties
pop in the order Scrapy's queues would: first-in first-out or last-in
first-out, start requests after others), the index of the URL's payload, the
index of its origin and the index of its download slot — followed by the
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

from crawlproject.frontier.base import FrontierEntry

if TYPE_CHECKING:
    from collections.abc import Callable

HEADER = struct.Struct(">QQIII")  # order, tie, payload index, origin index, slot index
HEAD = HEADER.size
#: The first 16 bytes of an item (order, tie) decide when it pops.
RANK = 16
#: Tie keys: a 62-bit push counter (never wraps: 4.6e18 pushes), the start
#: requests' tier above it (Scrapy pops start requests after other requests
#: of the same priority, from queues of their own).
_COUNTER_BITS = 62
COUNTER_LIMIT = 1 << _COUNTER_BITS
START_TIER = 1 << _COUNTER_BITS
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


def tie_of(counter: int, lifo: bool, start_tier: bool = False) -> int:
    """The tie key of the *counter*-th push: smaller pops first.

    >>> tie_of(1, lifo=False) < tie_of(2, lifo=False)
    True
    >>> tie_of(1, lifo=True) > tie_of(2, lifo=True)
    True
    >>> tie_of(9, lifo=False) < tie_of(1, lifo=False, start_tier=True)
    True
    """
    tie = COUNTER_LIMIT - 1 - counter if lifo else counter
    return tie | START_TIER if start_tier else tie


def fingerprint(key: bytes) -> int:
    """60 bits of XXH3 of a canonical URL: stable across runs and machines,
    and fast (a crawl takes several per URL); two keys collide with odds of
    about 1e-6 at a million URLs.

    >>> fingerprint(b"http://example.com/") == fingerprint(b"http://example.com/")
    True
    """
    return int(xxhash.xxh3_64_intdigest(key)) >> _FP_SHIFT


def host_of(origin: bytes) -> str:
    """The host of an origin, as Scrapy names a download slot by default.

    >>> host_of(b"http://user@Www.Example.com:8080")
    'www.example.com'
    >>> host_of(b"http://[::1]:80")
    '::1'
    """
    netloc = origin.partition(b"://")[2].rpartition(b"@")[2]
    if netloc.startswith(b"["):
        return netloc[1 : netloc.find(b"]")].decode().lower()
    return netloc.partition(b":")[0].decode().lower()


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
        self.slot_names: list[str] = []  #: download slot keys (Scrapy's: the host by default)
        self._slot_index: dict[str, int] = {}
        self.payloads: list[Any] = [None]  # index 0: no payload
        self.references: list[int] = [0]
        self._payload_index: dict[int, int] = {}  # id(payload) → index
        self._free: list[int] = []
        #: told of every payload and origin given an index (the journal)
        self.on_new_payload: Callable[[int, Any], None] | None = None
        self.on_new_origin: Callable[[int, bytes], None] | None = None
        self.on_new_slot: Callable[[int, str], None] | None = None

    def origin_index(self, origin: bytes) -> int:
        return _interned(self.origins, self._origin_index, origin, self.on_new_origin)

    def slot_index(self, slot: str) -> int:
        return _interned(self.slot_names, self._slot_index, slot, self.on_new_slot)

    def known_slot(self, slot: str) -> int | None:
        """The index of a slot some item was packed with; None if none was."""
        return self._slot_index.get(slot)

    def pack(
        self, order: int, tie: int, key: bytes, payload: Any, url: str | None, slot: str | None = None
    ) -> bytes:
        """An item; *slot* is the URL's download slot (default: its host)."""
        origin, rest = split_origin(key)
        slot_index = self.slot_index(host_of(origin) if slot is None else slot)
        head = HEADER.pack(order, tie, self.share(payload), self.origin_index(origin), slot_index)
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

    def entry(self, item: bytes, fifo: bool = False) -> FrontierEntry:
        """The queued URL an item holds, as the frontier hands it out (FIFO: no score)."""
        order, _, payload, _, _ = HEADER.unpack_from(item)
        key, url = self.key_and_url(item)
        return FrontierEntry(key, 0.0 if fifo else score_of(order), self.payloads[payload], url)

    def slot(self, item: bytes) -> str:
        return self.slot_names[int(HEADER.unpack_from(item)[4])]

    @staticmethod
    def origin(item: bytes) -> int:
        return int(HEADER.unpack_from(item)[3])

    @staticmethod
    def slot_of(item: bytes) -> int:
        return int(HEADER.unpack_from(item)[4])

    @staticmethod
    def reorder(item: bytes, order: int | None = None, tie: int | None = None) -> bytes:
        """The same item with a new order key and/or tie key."""
        old_order, old_tie, payload, origin, slot = HEADER.unpack_from(item)
        return HEADER.pack(
            old_order if order is None else order, old_tie if tie is None else tie, payload, origin, slot
        ) + item[HEAD:]

    def load(
        self, origins: dict[int, bytes], payloads: dict[int, Any], items: list[bytes], slots: dict[int, str]
    ) -> None:
        """Tables as saved, with references counted from the *items* kept."""
        size = max(origins, default=-1) + 1
        self.origins = [origins.get(i, b"") for i in range(size)]
        self._origin_index = {origin: i for i, origin in enumerate(self.origins) if origin}
        size = max(slots, default=-1) + 1
        self.slot_names = [slots.get(i, "") for i in range(size)]
        self._slot_index = {slot: i for i, slot in enumerate(self.slot_names) if i in slots}
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


def _interned(values: list[Any], indices: dict[Any, int], value: Any, on_new: Callable[[int, Any], None] | None) -> int:
    """The index of *value* in a table kept once per distinct value."""
    index = indices.get(value)
    if index is None:
        index = indices[value] = len(values)
        values.append(value)
        if on_new is not None:
            on_new(index, value)
    return index

