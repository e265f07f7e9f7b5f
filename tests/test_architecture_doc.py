"""docs/architecture.md describes the code as it is: the ports' method lists
and signatures, the record size, and the worked example of adding a judge and
a strategy are checked against the code (the paths it names: tests/test_docs.py)."""

from __future__ import annotations

import inspect
import re
import sys
from typing import TYPE_CHECKING

from scrapy.utils.test import get_crawler

from crawlproject.frontier.base import Frontier
from crawlproject.frontier.items import HEADER
from crawlproject.judges.base import PageJudge
from crawlproject.strategies.base import CrawlStrategy, Topic
from crawlproject.strategies.factory import build_focus
from crawlproject.web.page import Link, Page
from tests.conftest import ROOT

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def paragraph(starting: str) -> str:
    """The text from *starting* to the next blank line or list item."""
    start = DOC.index(starting)
    ends = [end for end in (DOC.find("\n\n", start), DOC.find("\n* ", start)) if end > 0]
    return DOC[start:min(ends)]


def test_the_frontier_contract_lists_every_method_with_its_arguments() -> None:
    text = paragraph("**Frontier contract**")
    listed = set(re.findall(r"`(\w+)\(", text))
    methods = {name for name, _ in inspect.getmembers(Frontier, inspect.isfunction)
               if not name.startswith("_") or name == "__len__"}
    assert listed == methods
    assert f"{len(methods)} methods" in text
    for name in ("push", "claim"):
        written = re.search(rf"`{name}\(([^)]*)\)`", text)
        assert written is not None, name
        arguments = [p for p in inspect.signature(getattr(Frontier, name)).parameters if p != "self"]
        assert written.group(1).split(", ") == arguments, name


def test_the_judge_and_strategy_ports_name_only_methods_they_have() -> None:
    for starting, port in (("* **PageJudge**", PageJudge), ("* **CrawlStrategy**", CrawlStrategy)):
        named = set(re.findall(r"`(\w+)\(", paragraph(starting)))
        assert named and all(hasattr(port, name) for name in named), (port, named - set(dir(port)))


def test_the_record_size_it_gives_is_the_code_s() -> None:
    sizes = {int(size) for size in re.findall(r"a (\d+)-byte header", DOC)}
    assert sizes == {HEADER.size}


def test_the_worked_example_builds_a_crawl_s_judge_and_strategy(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    section = DOC[DOC.index("## Adding a judge or a strategy"):]
    code = re.search(r"```python\n# myproject/focus.py\n(.*?)```", section, re.S)
    assert code is not None
    (tmp_path / "myproject").mkdir()
    (tmp_path / "myproject" / "__init__.py").write_text("")
    (tmp_path / "myproject" / "focus.py").write_text(code.group(1))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "myproject", raising=False)
    command = re.search(r"-s FOCUS_JUDGE=(\S+) -s FOCUS_STRATEGY=(\S+)", section)
    assert command is not None
    settings = {"FOCUS_JUDGE": command.group(1), "FOCUS_STRATEGY": command.group(2), "FOCUS_JUDGE_LABELS": False}
    focus = build_focus(get_crawler(settings_dict=settings), Topic(query="course syllabus"))
    assert (focus.judge.name, focus.strategy.name) == ("term-share", "anchor-first")
    page = Page("http://u.test/", "the course syllabus and homework",
                [Link("http://u.test/a", "syllabus"), Link("http://u.test/b", "people")], meta={})
    relevance = focus.on_page(page)
    assert relevance == 1.0
    assert focus.strategy.score_links(page, relevance) == [1.1, 1.0]
