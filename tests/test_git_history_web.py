"""A news-like evolving web built from a blog's git history:
each week the site as the last commit before it has it, every version a
dated record, a post removed a 404 — read back by the refresh simulation."""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

from crawlproject.refresh.simulate import load_evolving_web
from crawlproject.replay import git_history

START = datetime(2020, 1, 6, 12, tzinfo=UTC)  # a Monday noon


def _commit(repo: Path, when: datetime, message: str) -> None:
    stamp = when.strftime("%Y-%m-%dT%H:%M:%S+00:00")
    environment = {**os.environ, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp, "GIT_AUTHOR_NAME": "t",
                   "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)  # noqa: S603, S607
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", message], check=True, env=environment)  # noqa: S603, S607


def _post(repo: Path, name: str, title: str, text: str) -> None:
    (repo / "posts").mkdir(exist_ok=True)
    (repo / "posts" / name).write_text(f'---\nlayout: post\ntitle: "{title}"\nauthor: A. Writer\n---\n\n{text}\n')


def test_a_blogs_history_becomes_a_dated_web(tmp_path: Path) -> None:
    repo = tmp_path / "blog"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)  # noqa: S603, S607
    _post(repo, "2020-01-01-Hello.md", "Hello", "The first *post* of the harbour blog.")
    _commit(repo, START - timedelta(days=2), "hello")
    _post(repo, "2020-01-08-Ferries.md", "Ferries", "The ferry timetable changes.")
    _commit(repo, START + timedelta(days=5), "ferries")
    _post(repo, "2020-01-01-Hello.md", "Hello", "The first *post* of the harbour blog, corrected.")
    _commit(repo, START + timedelta(days=12), "fix")
    (repo / "posts" / "2020-01-08-Ferries.md").unlink()
    _commit(repo, START + timedelta(days=19), "remove ferries")

    built = git_history.build(repo, tmp_path / "web", START, weeks=4, host="blog.test")
    assert (built.weeks, built.urls, built.deletions) == (4, 3, 1)
    web = load_evolving_web(tmp_path / "web" / "evolving.warc.gz", cache_dir=None, text="whole")
    versions = {url.removeprefix("http://blog.test"): [version for _, version in timeline]
                for url, timeline in zip(web.urls, web.timeline, strict=True)}
    hello, ferries = "/2020/01/01/Hello.html", "/2020/01/08/Ferries.html"
    assert len(versions[hello]) == 2  # written, then corrected in week 2
    assert len(versions[ferries]) == 2 and versions[ferries][-1] == -1  # posted in week 1, gone in week 3
    assert len(versions["/"]) == 3  # the front page: one post, two, one again
    first, corrected = (web.texts[v] for v in versions[hello])
    assert "The first post of the harbour blog." in first and "corrected" in corrected
    front = web.texts[versions["/"][1]]
    assert "Posts in 2020" in front and "Ferries" in front and "Hello" in front
    assert (tmp_path / "web" / "versions.tsv").read_text().count(
        "\n"
    ) == 1 + 6  # a row per version, deletions closing one
