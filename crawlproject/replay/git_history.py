"""A news-like web that really changes, built from a blog kept as dated
Markdown in git: the weekly states of the site as its history
has them, as a dated WARC in the format of ../shared/corpora/phpdoc-evolving
(one ``response`` record per version, dated when it went live; a 404 record
when a page goes), for the refresh benchmark and the replay's ``--as-of``.

    python -m crawlproject.replay.git_history REPO OUT --start 2019-01-07 --weeks 156

REPO is a clone of a blog whose posts are ``posts/YYYY-MM-DD-slug.md`` with
a front matter (``title``, ``author``) — the layout of blog.rust-lang.org
before 2025 (``posts/inside-rust/`` is its second blog). Each week the site
is the tree of the last commit before that week: every post rendered from
its Markdown (markdown-it) at its real URL (``/YYYY/MM/DD/slug.html``), and
each blog's front page listing its posts newest first, grouped by year, as
the real site's. The template is one for the whole history; what changes is
what the history changed — new posts, edited posts, posts removed — and the
front pages that list them.

OUT gets ``evolving.warc.gz``, ``versions.tsv`` (url, version, live from,
live until, body SHA-1) and a README saying what was built from what.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import re
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

_POST = re.compile(r"^posts/(?:(?P<blog>[\w-]+)/)?(?P<date>\d{4}-\d{2}-\d{2})-(?P<slug>[^/]+)\.md$")
_FRONT = re.compile(r"\A---\s*\n(?P<head>.*?)\n---\s*\n", re.DOTALL)
_FIELD = re.compile(r"^(?P<name>\w+):\s*(?P<value>.*)$", re.MULTILINE)
WEEK = timedelta(weeks=1)


@dataclass(frozen=True)
class Post:
    url: str
    blog: str  #: "" for the main blog, else its folder ("inside-rust")
    day: str  #: YYYY-MM-DD
    title: str
    author: str
    body: str  #: the post's HTML


def git_output(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout  # noqa: S603, S607


def commit_before(repo: Path, moment: datetime) -> str | None:
    """The last commit (first parents) before *moment*; None before the first."""
    found = git_output(repo, "rev-list", "-1", "--first-parent", f"--before={moment.isoformat()}", "HEAD").strip()
    return found or None


def posts_at(repo: Path, commit: str, host: str, rendered: dict[str, Post | None]) -> list[Post]:
    """The posts of the tree at *commit*; a blob rendered once (*rendered*:
    blob id → post, kept across weeks)."""
    posts = []
    for line in git_output(repo, "ls-tree", "-r", commit, "posts").splitlines():
        meta, path = line.split("\t", 1)
        blob = meta.split()[2]
        if blob not in rendered:
            rendered[blob] = _render(repo, blob, path, host)
        post = rendered[blob]
        if post is not None:
            posts.append(post)
    return posts


def _render(repo: Path, blob: str, path: str, host: str) -> Post | None:
    from markdown_it import MarkdownIt

    found = _POST.match(path)
    if found is None:
        return None  # not a post (an image, a README)
    text = git_output(repo, "cat-file", "-p", blob)
    front = _FRONT.match(text)
    fields = {m["name"]: m["value"].strip().strip("\"'") for m in _FIELD.finditer(front["head"])} if front else {}
    body = text[front.end():] if front else text
    day, blog = found["date"], found["blog"] or ""
    url = f"http://{host}/{blog + '/' if blog else ''}{day.replace('-', '/')}/{found['slug']}.html"
    title = fields.get("title") or found["slug"].replace("-", " ")
    return Post(url, blog, day, title, fields.get("author", ""), MarkdownIt("commonmark").enable("table").render(body))


def _page(title: str, main: str, host: str) -> bytes:
    """The site's one template: its navigation, the page, its footer."""
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title></head><body>"
        f"<header><nav><a href='http://{host}/'>Rust Blog</a> <a href='http://{host}/inside-rust/'>Inside Rust</a> "
        "<a href='https://www.rust-lang.org/'>Rust homepage</a></nav></header>"
        f"<main>{main}</main><footer><p>Get help! Documentation · Contact the Rust team · Maintained by the Rust team."
        "</p></footer></body></html>"
    ).encode()


def site(posts: list[Post], host: str) -> dict[str, bytes]:
    """Every page of the site for these posts: the posts and each blog's front page."""
    pages = {}
    for post in posts:
        byline = f"{post.day}{' · ' + html.escape(post.author) if post.author else ''}"
        pages[post.url] = _page(f"{post.title} | Rust Blog", f"<article><h1>{html.escape(post.title)}</h1>"
                                f"<p class='byline'>{byline}</p>{post.body}</article>", host)
    for blog in sorted({post.blog for post in posts}):
        listed = sorted((p for p in posts if p.blog == blog), key=lambda p: (p.day, p.url), reverse=True)
        sections: list[str] = []
        year: str | None = None
        for post in listed:
            if post.day[:4] != year:
                year = post.day[:4]
                sections.append(f"</ul><h2>Posts in {year}</h2><ul>" if sections else f"<h2>Posts in {year}</h2><ul>")
            sections.append(f"<li>{post.day} <a href='{post.url}'>{html.escape(post.title)}</a></li>")
        name = "Inside Rust Blog" if blog else "Rust Blog"
        pages[f"http://{host}/{blog + '/' if blog else ''}"] = _page(
            name, f"<h1>{name}</h1>{''.join(sections)}</ul>", host
        )
    return pages


@dataclass
class Built:
    weeks: int = 0
    versions: int = 0
    deletions: int = 0
    urls: int = 0


def weekly_states(repo: Path, start: datetime, weeks: int,
                  site_at: Callable[[str], dict[str, bytes]]) -> Iterator[tuple[datetime, str, dict[str, bytes]]]:
    """(week's moment, commit, the site's pages) for every week with a commit
    before it; *site_at* renders the site of a commit."""
    for week in range(weeks):
        moment = start + week * WEEK
        commit = commit_before(repo, moment)
        if commit is not None:
            yield moment, commit, site_at(commit)


def blog_site(repo: Path, host: str) -> Callable[[str], dict[str, bytes]]:
    """The blog's site as of a commit (each post's Markdown rendered once)."""
    rendered: dict[str, Post | None] = {}
    return lambda commit: site(posts_at(repo, commit, host, rendered), host)


def build(repo: Path, out: Path, start: datetime, weeks: int, host: str = "blog.rust-lang.org",
          site_at: Callable[[str], dict[str, bytes]] | None = None, what: str = "") -> Built:
    """Write the evolving web of *weeks* weekly states from *start* into
    *out*: the blog's (:func:`blog_site`), or the site *site_at* renders per
    commit, which *what* describes in the README."""
    out.mkdir(parents=True, exist_ok=True)
    built = Built()
    live: dict[str, tuple[str, datetime, int]] = {}  # url → (body SHA-1, live from, version index)
    history: list[tuple[str, int, datetime, datetime | None, str]] = []
    with (out / "evolving.warc.gz").open("wb") as f:
        writer = WARCWriter(f, gzip=True)
        for moment, commit, pages in weekly_states(repo, start, weeks, site_at or blog_site(repo, host)):
            built.weeks += 1
            when = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
            changed_at = git_output(repo, "show", "-s", "--format=%cI", commit).strip()
            for url, body in pages.items():
                digest = hashlib.sha1(body).hexdigest()  # noqa: S324 (an ETag, not a secret)
                if url in live and live[url][0] == digest:
                    continue
                if url in live:
                    history.append((url, live[url][2], live[url][1], moment, live[url][0]))
                version = live[url][2] + 1 if url in live else 0
                live[url] = (digest, moment, version)
                _record(writer, url, 200, body, when, changed_at, digest)
                built.versions += 1
            for url in [url for url in live if url not in pages and live[url][0] != "gone"]:
                history.append((url, live[url][2], live[url][1], moment, live[url][0]))
                live[url] = ("gone", moment, live[url][2] + 1)
                _record(writer, url, 404, b"Not Found", when, changed_at, None)
                built.deletions += 1
    for url, (digest, since, version) in live.items():
        if digest != "gone":
            history.append((url, version, since, None, digest))
    built.urls = len(live)
    rows = ["url\tversion_index\tlive_from\tlive_until\tbody_sha1"] + [
        f"{url}\t{version}\t{since:%Y-%m-%dT%H:%M:%SZ}\t{until:%Y-%m-%dT%H:%M:%SZ}\t{digest}"
        if until
        else f"{url}\t{version}\t{since:%Y-%m-%dT%H:%M:%SZ}\t\t{digest}"
        for url, version, since, until, digest in sorted(history)
    ]
    (out / "versions.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    origin = _origin(repo)
    (out / "README.md").write_text(
        f"# An evolving web from {origin}\n\nBuilt by crawlproject.replay from the "
        f"git history of {origin}: {built.weeks} weekly states from {start:%Y-%m-%d}, {built.urls} URLs, "
        f"{built.versions} versions and {built.deletions} deletions in `evolving.warc.gz` (phpdoc-evolving's format: "
        "a record per version, dated when it went live; a 404 record when a page went). "
        + (what or "Each post is rendered from its Markdown at its real URL; each blog's front page lists its posts "
           "by year.") + "\n", encoding="utf-8")
    return built


def _origin(repo: Path) -> str:
    """Where the clone came from (its path when it has no origin)."""
    found = subprocess.run(["git", "-C", str(repo), "config", "--get", "remote.origin.url"],  # noqa: S603, S607
                           capture_output=True, text=True, check=False)
    return found.stdout.strip() or str(repo)


def _record(writer: WARCWriter, url: str, status: int, body: bytes, when: str, modified: str, etag: str | None) -> None:
    headers = [
        ("Content-Type", "text/html; charset=utf-8"),
        ("Content-Length", str(len(body))),
        ("Last-Modified", datetime.fromisoformat(modified).astimezone(UTC).strftime("%a, %d %b %Y %H:%M:%S GMT")),
    ]
    if etag is not None:
        headers.append(("ETag", f'"{etag}"'))
    http = StatusAndHeaders(f"{status} {'OK' if status == 200 else 'Not Found'}", headers, protocol="HTTP/1.1")
    writer.write_record(writer.create_warc_record(url, "response", payload=BytesIO(body), length=len(body),
                                                  http_headers=http, warc_headers_dict={"WARC-Date": when}))


def history_command(parser: argparse.ArgumentParser, argv: list[str] | None, repo_help: str,
                    start: str) -> tuple[argparse.Namespace, datetime]:
    """The command line of a web built from a git history: the clone, the
    corpus folder, the first week and how many; a bad one is one line."""
    parser.add_argument("repo", type=Path, help=repo_help)
    parser.add_argument("out", type=Path, help="the corpus folder to write")
    parser.add_argument("--start", default=start, help="the first week (YYYY-MM-DD)")
    parser.add_argument("--weeks", type=int, default=156)
    args = parser.parse_args(argv)
    try:
        first = datetime.fromisoformat(args.start).replace(tzinfo=UTC)
    except ValueError:
        parser.error(f"--start {args.start!r}: a date, YYYY-MM-DD")
    if not (args.repo / ".git").exists() and not (args.repo / "HEAD").exists():
        parser.error(f"{args.repo}: not a git repository")
    return args, first


def report(out: Path, built: Built) -> int:
    print(f"{out}: {built.weeks} weeks, {built.urls} URLs, {built.versions} versions, {built.deletions} deletions")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="blog.rust-lang.org")
    clone = "a clone of the blog (its posts/ folder of dated Markdown)"
    args, start = history_command(parser, argv, clone, "2019-01-07")
    return report(args.out, build(args.repo, args.out, start, args.weeks, args.host))


if __name__ == "__main__":
    sys.exit(main())
