"""What refreshing a crawl's repository remembers between runs, kept in the
repository folder: ``refresh/state.json`` (per page: the version stored, when
it was last refreshed, what its refreshes saw, its validators) and
``refresh/changes.jsonl`` (one line per refresh: what changed). New versions
are written beside the originals, ``refresh/versions/<md5>.<n>.html``; the
repository's own ``pages/`` stay as the crawl left them.

``state.json`` is replaced atomically (write, then rename), so a run killed
half-way leaves the previous state, and its refreshes are simply done again.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crawlproject.refresh.estimate import ChangeHistory
from crawlproject.refresh.policies import PageState
from crawlproject.replay.archive import parse_time

FORMAT = "crawlproject-refresh-state/1"
DAY = 86400.0


class RefreshStateError(ValueError):
    """A repository that cannot be refreshed (missing, or a damaged state)."""


@dataclass
class RefreshedPage:
    url: str
    file: str  #: the stored version's file, relative to the repository
    version: int = 0
    etag: str | None = None
    last_modified: str | None = None
    deleted: bool = False
    state: PageState = field(default_factory=lambda: PageState(last_refresh=0.0))

    def as_json(self) -> dict[str, Any]:
        state = self.state
        return {"file": self.file, "version": self.version, "etag": self.etag, "last_modified": self.last_modified,
                "deleted": self.deleted, "last_refresh": state.last_refresh, "intervals": state.history.intervals,
                "changed": state.history.changed, "updates": state.updates, "big_updates": state.big_updates,
                "gains": state.gains, "exposure": state.exposure}

    @classmethod
    def from_json(cls, url: str, data: dict[str, Any]) -> RefreshedPage:
        state = PageState(float(data["last_refresh"]), ChangeHistory(list(data["intervals"]), list(data["changed"])),
                          int(data["updates"]), int(data["big_updates"]), list(data["gains"]), float(data["exposure"]))
        return cls(url, str(data["file"]), int(data["version"]), data.get("etag"), data.get("last_modified"),
                   bool(data.get("deleted")), state)


class RefreshState:
    """The refresh state of one crawl's repository (times in days since the epoch)."""

    def __init__(self, repository: str | Path, crawled_at: float | None = None):
        self.crawled_at = crawled_at  #: seconds; default: each page's own fetched_at
        self.repository = Path(repository)
        self.folder = self.repository / "refresh"
        self.path = self.folder / "state.json"
        listing = self.repository / "pages.jsonl"
        if not listing.is_file():
            raise RefreshStateError(f"{self.repository} is not a crawl's page repository (no pages.jsonl): "
                                    "refresh a folder a crawl wrote with FOCUS_STORE_PAGES on")
        self.pages: dict[str, RefreshedPage] = {}
        self.runs: list[float] = []  #: when earlier refresh runs ran (days since the epoch)
        if self.path.exists():
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
                if data.get("format") != FORMAT:
                    raise ValueError(f"format {data.get('format')!r}, expected {FORMAT!r}")
                self.pages = {url: RefreshedPage.from_json(url, page) for url, page in data["pages"].items()}
                self.runs = [float(run) for run in data.get("runs", [])]
            except (ValueError, KeyError, TypeError) as exc:
                raise RefreshStateError(
                    f"{self.path} is damaged ({exc}); move it away to start the refresh history anew"
                ) from None
        self._add_new_pages(listing)

    def _add_new_pages(self, listing: Path) -> None:
        """Pages of the repository the state does not know yet (a first run, or a crawl resumed since)."""
        for line in listing.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a torn last line of a crawl killed mid-write
            url = record.get("url")
            if not url or url in self.pages or "version" in record:
                continue
            fetched = record.get("fetched_at")
            if self.crawled_at is not None:
                since = self.crawled_at / DAY
            else:
                since = parse_time(fetched) / DAY if fetched else 0.0
            self.pages[url] = RefreshedPage(url, record["file"], last_modified=record.get("last_modified"),
                                            state=PageState(last_refresh=since))

    def period(self, now: float) -> float:
        """Days since the last refresh run (the first run: since the page
        refreshed or crawled longest ago): a run's budget is spent over it."""
        last = (
            max(self.runs) if self.runs else min((page.state.last_refresh for page in self.pages.values()), default=now)
        )
        return now - last if now > last else 1.0

    def live(self) -> list[RefreshedPage]:
        """The pages still worth refreshing (not seen deleted), in a stable order."""
        return [page for _, page in sorted(self.pages.items()) if not page.deleted]

    def save(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(
            json.dumps(
                {
                    "format": FORMAT,
                    "runs": self.runs,
                    "pages": {url: page.as_json() for url, page in sorted(self.pages.items())},
                }
            ),
            encoding="utf-8",
        )
        os.replace(temporary, self.path)
