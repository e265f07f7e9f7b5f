"""A web whose persistent pages' answers change, built from the PEPs' git
history: a PEP's status turns over week by week and the index moves it from
section to section — read back by the refresh simulation."""

from __future__ import annotations

import subprocess
from datetime import timedelta
from pathlib import Path

from crawlproject.refresh.simulate import load_evolving_web
from crawlproject.replay import pep_history
from tests.test_git_history_web import START, _commit

PEP = """PEP: {number}
Title: {title}
Author: A. Proposer <a@example.org>
Status: {status}
Type: Standards Track
Created: 01-Jan-2020

Abstract
========

This PEP proposes {title}.

.. note:: a directive, not text

Specification::

    x = {number}
"""


def _pep(repo: Path, number: int, title: str, status: str) -> None:
    (repo / f"pep-{number:04d}.txt").write_text(PEP.format(number=number, title=title, status=status))


def test_a_peps_history_becomes_a_web_whose_answers_change(tmp_path: Path) -> None:
    repo = tmp_path / "peps"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)  # noqa: S603, S607
    _pep(repo, 572, "Assignment expressions", "Draft")
    _pep(repo, 557, "Data classes", "Final")
    _commit(repo, START - timedelta(days=2), "two peps")
    _pep(repo, 572, "Assignment expressions", "Accepted")
    _commit(repo, START + timedelta(days=5), "accept 572")
    _pep(repo, 572, "Assignment expressions", "Final")
    _commit(repo, START + timedelta(days=12), "572 final")

    built = pep_history.build(repo, tmp_path / "web", START, 4, pep_history.HOST, pep_history.pep_site(repo), "PEPs")
    assert (built.weeks, built.urls, built.deletions) == (4, 3, 0)
    web = load_evolving_web(tmp_path / "web" / "evolving.warc.gz", cache_dir=None, text="main")
    versions = {url.removeprefix(f"http://{pep_history.HOST}"): [version for _, version in timeline]
                for url, timeline in zip(web.urls, web.timeline, strict=True)}
    assert len(versions["/pep-0557/"]) == 1  # final from the start: one version
    draft, accepted, final = (web.texts[v] for v in versions["/pep-0572/"])
    assert "Draft" in draft and "Accepted" in accepted and "Final" in final
    assert "This PEP proposes Assignment expressions." in final and "x = 572" in final
    assert "a directive" not in final
    index = [web.texts[v] for v in versions["/"]]
    assert len(index) == 3
    open_section, finished = index[0].split("Finished PEPs")
    assert "Assignment expressions" in open_section and "Data classes" in finished
    assert "Assignment expressions" in index[-1].split("Finished PEPs")[1]


def test_the_header_and_its_continuation_lines_are_read() -> None:
    pep = pep_history.parse(
        8, "PEP: 8\nTitle: Style Guide\nAuthor: Guido,\n  Barry\nStatus: Active\nType: Process\n\nText.\n"
    )
    assert (pep.title, pep.status, pep.kind) == ("Style Guide", "Active", "Process")
    assert pep.header["Author"] == "Guido, Barry"
    assert pep.body == "<p>Text.</p>"
