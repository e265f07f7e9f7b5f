"""Re-scoring a queue of packed items (crawlproject.frontier.items: the
memory frontier's): which queued items a strategy's scorer moves, and where."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crawlproject.frontier.items import HEADER, fingerprint, order_of, score_of

if TYPE_CHECKING:
    from collections.abc import Callable, Collection

    from crawlproject.frontier.items import ItemTables

#: A re-score of at least 1/this of the queue rebuilds the heaps once rather
#: than pushing every moved entry (O(n) in all against O(log n) apiece).
BULK_SHARE = 4


def moved_items(
    tables: ItemTables, entries: dict[int, bytes], scorer: Callable[[str, float, Any], float],
    keys: Collection[str] | None = None,
) -> list[tuple[int, bytes]]:
    """Each queued item (*entries*: fingerprint → item) whose place *scorer*
    changes, re-packed at its new place: of every entry, or of *keys*' only."""
    moved = []
    if keys is None:
        found = ((fp, item, tables.key_and_url(item)[0]) for fp, item in entries.items())
    else:
        found = ((fp, item, key) for key in keys if (item := entries.get(fp := fingerprint(key.encode()))) is not None)
    for fp, item, key in found:
        order = HEADER.unpack_from(item)[0]
        new = order_of(float(scorer(key, score_of(order), tables.payload(item))))
        if new != order:
            moved.append((fp, tables.reorder(item, order=new)))
    return moved
