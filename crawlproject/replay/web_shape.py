"""How a synthetic web (crawlproject.replay.synthetic) is made: its shape —
sizes, shares of host kinds and of links — and what its pages are made of,
the paragraph pool; apart from the web that answers URLs, so that a
benchmark or a test states a web without reading how pages are drawn."""

from __future__ import annotations

import gzip
import json
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

TRAP_KINDS = ("calendar", "session_ids", "growing_path", "query_permutations")
TRAP_ENTRIES = {
    "calendar": "/trap/2026/01/", "session_ids": "/trap/page", "growing_path": "/trap/a/",
    "query_permutations": "/trap/?a=1&b=2",
}
HOSTILE_KINDS = ("charset", "broken_html", "huge", "binary")
HOSTILE_OPTIONS: dict[str, dict[str, object]] = {"huge": {"bytes": 3_000_000}}
#: Host kinds. A "site" is an ordinary host; the rest are what a long crawl meets.
KINDS = ("site", "mirror", "near_copy", "trap", "dead")
#: The largest hosts are always ordinary sites: seeds come from them.
ORDINARY_TOP = 10
#: Mirrors copy hosts of at most this many pages (mirrored sites are small ones).
MAX_MIRRORED = 5000


class SyntheticError(ValueError):
    """The synthetic web cannot be made as asked."""


@dataclass(frozen=True)
class WebShape:
    """How the generated web is made: sizes, and shares of hosts and links."""

    pages: int = 1_000_000
    hosts: int = 0  #: 0: one host per 250 pages
    seed: int = 1
    host_exponent: float = 1.0  #: Zipf exponent of the host sizes
    on_topic: float = 0.8  #: share of a host's pages on its topic
    mean_links: float = 20.0  #: mean out-degree (Pareto, shape 2)
    max_links: int = 300
    cross_host: float = 0.2  #: share of links to other hosts
    same_topic_host: float = 0.7  #: share of those to hosts of the same topic
    dead_links: float = 0.04
    disallowed_links: float = 0.01
    redirects: float = 0.02  #: pages moved (301) from the URL links use
    orphans: float = 0.05  #: pages no link reaches (sitemaps list them)
    hostile_pages: float = 0.002
    mirror_hosts: float = 0.01
    near_copy_hosts: float = 0.01
    trap_hosts: float = 0.005
    dead_hosts: float = 0.005
    no_sitemap_hosts: float = 0.3
    bad_sitemap_hosts: float = 0.02
    sitemap_chunk: int = 5000  #: URLs per sitemap; bigger hosts get an index
    section_size: int = 64  #: pages per directory

    def host_count(self) -> int:
        return self.hosts or max(ORDINARY_TOP + 1, self.pages // 250)

    def check(self) -> None:
        if self.pages < 100:
            raise SyntheticError(f"a synthetic web needs at least 100 pages, got {self.pages}")
        if not 1 <= self.host_count() <= self.pages:
            raise SyntheticError(f"hosts must be between 1 and the pages ({self.pages}), got {self.hosts}")
        shares = [
            v for k, v in asdict(self).items() if isinstance(v, float) and k not in ("host_exponent", "mean_links")
        ]
        if any(not 0 <= share <= 1 for share in shares):
            raise SyntheticError("every share of a web shape lies between 0 and 1")
        if self.dead_links + self.disallowed_links + self.cross_host > 1:
            raise SyntheticError("dead_links + disallowed_links + cross_host must not exceed 1")


def load_paragraphs(path: str | Path) -> dict[str, list[str]]:
    """The paragraph pool file (crawlproject.corpus.paragraphs.paragraph_file)."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as exc:
        raise SyntheticError(
            f"{path} is not a paragraph file (made by crawlproject.corpus.paragraphs): {exc}"
        ) from None
    topics = data.get("topics") if isinstance(data, dict) else None
    if not isinstance(topics, dict) or not all(isinstance(v, list) and v for v in topics.values()):
        raise SyntheticError(f"{path} holds no topics of paragraphs")
    return topics
