"""Build a web of documentation sites from Debian's documentation packages:
real HTML under each site's public URLs, packed as a WARC the replay serves,
and a labels file from the pages' own up-links (docs/evaluation.md, "Webs of
our own").

    .venv/bin/python -m bench.build_docs_web --web pyweb [--out .cache/corpora/pyweb]

Each package's HTML is its project's documentation as Sphinx built it;
Debian ships it unchanged. A page is served at the site's public address
plus its path under the package's ``html/`` folder, links are left as the
generator wrote them (relative), and everything that is not a page (images,
style sheets, scripts, other sites) is a dead end, as on the web.

A page's category is ``site/`` + the chain of its parents' titles, where a
parent is the page whose table of contents (Sphinx's ``toctree``, the
relation its "up" links and breadcrumbs are drawn from) lists it first, read
breadth-first from the site's index; on the index, the heading or caption
of the table that lists a page heads its chain. A page no table of contents
reaches (an index of names, highlighted source, release announcements) is
``site/<its top folder>``, or ``site/root``.

The packages are fetched with ``apt-get download`` (Debian's registry) at
the versions named below when the registry still has them, else at its
current version (said in one line, and recorded in ``manifest.tsv``).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import subprocess
import sys
import tempfile
import uuid
from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from urllib.parse import urldefrag, urljoin

from lxml import html as lxml_html
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from bench.common import ROOT


@dataclass(frozen=True)
class Site:
    name: str  #: the category's first part
    package: str
    version: str  #: the version the web was first built from
    base: str  #: the public address the package's html/ folder is served at


#: Webs this script builds. Not from postgresql-doc, sqlite3-doc,
#: python3.11-doc, python-django-doc, python-scrapy-doc, git-doc or
#: debian-reference: those are kept out for an independent check.
WEBS: dict[str, tuple[Site, ...]] = {
    "pyweb": (
        Site("flask", "python-flask-doc", "2.2.2-3", "http://flask.palletsprojects.com/en/2.2.x/"),
        Site("werkzeug", "python-werkzeug-doc", "2.2.2-3+deb12u1", "http://werkzeug.palletsprojects.com/en/2.2.x/"),
        Site("jinja", "python-jinja2-doc", "3.1.2-1+deb12u3", "http://jinja.palletsprojects.com/en/3.1.x/"),
        Site("click", "python-click-doc", "8.1.3-2", "http://click.palletsprojects.com/en/8.1.x/"),
        Site("requests", "python-requests-doc", "2.28.1+dfsg-1", "http://requests.readthedocs.io/en/latest/"),
        Site("aiohttp", "python-aiohttp-doc", "3.8.4-1+deb12u2", "http://docs.aiohttp.org/en/v3.8.4/"),
        Site("tornado", "python-tornado-doc", "6.2.0-3+deb12u4", "http://www.tornadoweb.org/en/branch6.2/"),
        Site("pytest", "python-pytest-doc", "7.2.1-2", "http://docs.pytest.org/en/7.2.x/"),
        Site("celery", "python-celery-doc", "5.2.6-5", "http://docs.celeryq.dev/en/v5.2.6/"),
        Site("babel", "python-babel-doc", "2.10.3-1", "http://babel.pocoo.org/en/latest/"),
        Site("pygments", "python-pygments-doc", "2.14.0+dfsg-1", "http://pygments.org/"),
        Site("sqlalchemy", "python-sqlalchemy-doc", "1.4.46+ds1-1", "http://docs.sqlalchemy.org/en/14/"),
    ),
}

#: When every record was "fetched": a fixed time, so the same packages give the same WARC.
RECORD_DATE = datetime(2026, 12, 7, tzinfo=UTC)


def fetch_package(site: Site, into: Path) -> tuple[Path, str]:
    """The package's .deb in *into* (pinned version if the registry has it), and its version."""
    for wanted in (f"{site.package}={site.version}", site.package):
        done = subprocess.run(["apt-get", "download", wanted], cwd=into, capture_output=True, text=True)  # noqa: S603,S607
        if done.returncode == 0:
            break
    else:
        raise SystemExit(f"apt-get download {site.package} failed: {done.stderr.strip()[-300:]} "
                         "(run `apt-get update` first)")
    deb = max(into.glob(f"{site.package}_*.deb"), key=lambda p: p.stat().st_mtime)
    version = deb.name.split("_")[1].replace("%3a", ":")
    if version != site.version:
        print(f"  {site.package}: the registry has {version}, not {site.version}: built from {version}", flush=True)
    return deb, version


def html_root(deb: Path, into: Path) -> Path:
    subprocess.run(["dpkg-deb", "-x", str(deb), str(into)], check=True)  # noqa: S603,S607
    roots = sorted(into.glob("usr/share/doc/*/html"))
    if not roots:
        raise SystemExit(f"{deb.name} has no usr/share/doc/*/html folder")
    return roots[0]


def pages_of(root: Path) -> dict[str, bytes]:
    """Every HTML page under *root*, by its path relative to it (symlinks followed)."""
    pages = {}
    for path in sorted(root.rglob("*.html")):
        relative = path.relative_to(root).as_posix()
        if relative.startswith(("_static/", "_sources/", "_images/")) or not path.is_file():
            continue
        pages[relative] = path.read_bytes()
    return pages


def title_of(tree: lxml_html.HtmlElement) -> str:
    for heading in tree.xpath("//h1"):
        text = " ".join(heading.text_content().replace("¶", " ").split())
        if text:
            return text
    titles = tree.xpath("//title")
    return " ".join(titles[0].text_content().split("—")[0].split()) if titles else ""


def toc_children(tree: lxml_html.HtmlElement, page: str) -> list[tuple[str, str]]:
    """The pages the tables of contents of *page* list, in order, each with
    the heading or caption of its table (the index's sections)."""
    children = []
    for wrapper in tree.xpath('//div[contains(concat(" ", normalize-space(@class), " "), " toctree-wrapper ")]'):
        caption = wrapper.xpath('.//*[contains(@class, "caption-text")]')
        heading = caption[0].text_content() if caption else ""
        if not heading:
            section = wrapper.xpath(
                "ancestor::section[1]/*[self::h2 or self::h3][1] | ancestor::div[@class='section'][1]/*[self::h2 "
                "or self::h3][1]"
            )
            heading = section[0].text_content() if section else ""
        heading = " ".join(heading.replace("¶", " ").split())
        # the table's own entries; deeper levels are the children's own tables (or sections of a page)
        for link in wrapper.xpath(
            './/li[contains(concat(" ", normalize-space(@class), " "), " toctree-l1 ")]/a[@href]'
        ):
            href = urldefrag(link.get("href"))[0]
            if not href or "://" in href:
                continue
            target = PurePosixPath(urljoin(page, href)).as_posix()
            if target.endswith("/"):
                target += "index.html"
            children.append((target, heading))
    return children


def categories(site: Site, pages: dict[str, bytes]) -> dict[str, str]:
    """Each page's category (see the module's docstring)."""
    trees, titles = {}, {}
    for path, body in pages.items():
        try:
            trees[path] = lxml_html.fromstring(body)
        except (ValueError, lxml_html.etree.ParserError):
            continue
        titles[path] = title_of(trees[path])
    chains: dict[str, list[str]] = {}
    if "index.html" in trees:
        chains["index.html"] = []
        queue = deque(["index.html"])
        while queue:
            parent = queue.popleft()
            for child, heading in toc_children(trees[parent], parent):
                if child in chains or child not in trees:
                    continue
                head = [heading] if parent == "index.html" and heading else []
                chains[child] = chains[parent] + ([titles[parent]] if parent != "index.html" else head)
                queue.append(child)
    labels = {}
    for path in pages:
        chain = chains.get(path)
        if chain is None:
            top = path.split("/")[0] if "/" in path else "root"
            chain = [top]
        elif not chain:
            chain = ["root"]
        parts = [part.replace("/", "-") for part in chain if part]
        labels[path] = "/".join([site.name, *parts])
    return labels


def response_record(writer: WARCWriter, url: str, body: bytes) -> None:
    headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8"),
                                          ("Content-Length", str(len(body)))], protocol="HTTP/1.1")
    record = writer.create_warc_record(
        url, "response", payload=io.BytesIO(body), http_headers=headers,
        warc_headers_dict={"WARC-Date": RECORD_DATE.strftime("%Y-%m-%dT%H:%M:%SZ"),
                           "WARC-Record-ID": f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, url)}>"},
    )
    writer.write_record(record)


def build(web: str, out: Path) -> None:
    sites = WEBS[web]
    out.mkdir(parents=True, exist_ok=True)
    warc_path, labels_path = out / f"{web}.warc.gz", out / "labels.tsv"
    rows, manifest, count = [], [], 0
    partial = warc_path.with_suffix(".partial")
    with tempfile.TemporaryDirectory() as scratch, partial.open("wb") as stream:
        writer = WARCWriter(stream, gzip=True)
        for site in sites:
            folder = Path(scratch) / site.name
            folder.mkdir()
            deb, version = fetch_package(site, folder)
            pages = pages_of(html_root(deb, folder / "tree"))
            labels = categories(site, pages)
            for path, body in pages.items():
                url = site.base + path  # the replay serves index.html under its folder's URL too
                response_record(writer, url, body)
                rows.append((url, labels[path]))
                count += 1
            manifest.append((site.name, site.package, version, site.base, str(len(pages))))
            print(f"  {site.name}: {len(pages)} pages from {site.package} {version}", flush=True)
    partial.replace(warc_path)
    with labels_path.open("w", encoding="utf-8", newline="") as f:
        csv.writer(f, delimiter="\t", lineterminator="\n").writerows(sorted(rows))
    with (out / "manifest.tsv").open("w", encoding="utf-8", newline="") as f:
        writer_tsv = csv.writer(f, delimiter="\t", lineterminator="\n")
        writer_tsv.writerow(("site", "package", "version", "base", "pages"))
        writer_tsv.writerows(manifest)
    digest = hashlib.sha256(warc_path.read_bytes()).hexdigest()[:16]
    print(f"{web}: {count} pages on {len(sites)} sites → {warc_path} (sha256 {digest}…), {labels_path}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--web", choices=sorted(WEBS), default="pyweb")
    parser.add_argument("--out", type=Path, default=None, help="default .cache/corpora/WEB")
    args = parser.parse_args()
    build(args.web, (args.out or ROOT / ".cache" / "corpora" / args.web).resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
