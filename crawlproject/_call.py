"""``python -m crawlproject._call CALL ANSWER``: a second
``crawlproject.crawl`` of one program, in a process of its own
(crawlproject.api; Twisted runs once per process)."""

from __future__ import annotations

import sys
from pathlib import Path

from crawlproject.api import answer_call

if __name__ == "__main__":
    answer_call(Path(sys.argv[1]), Path(sys.argv[2]))
