"""A web whose persistent pages' answers change, built from the history of
the Python Enhancement Proposals (a clone of github.com/python/peps): each
week the site is the tree of the last commit before it, as a dated WARC in
phpdoc-evolving's format (crawlproject.replay.git_history writes it).

    python -m crawlproject.replay.pep_history CLONE OUT --start 2020-01-06 --weeks 156

The pages: every PEP at its URL (``/pep-NNNN/``) with its header (author,
status, type, Python version, resolution) above its text, and the index
(PEP 0) listing every PEP under its status, as the real index does. A PEP's
page persists for years while what it answers turns over: a draft becomes
accepted, then final, or is rejected or withdrawn; a release schedule PEP's
"expected" dates become "actual" ones, release after release; the index
moves a PEP from section to section. That is the regime user-centric
refresh is about: persistent pages whose answers change, unlike a blog's
posts, written once.

The reStructuredText is rendered by a small reader of its own (headings,
paragraphs, bullet lists, literal blocks; comments and directives left
out): a docutils build of thousands of versions would take an hour, and
the benchmark indexes the text, not its styling.
"""

from __future__ import annotations

import argparse
import html
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from crawlproject.replay.git_history import build, git_output, history_command, report

if TYPE_CHECKING:
    from collections.abc import Callable

_PEP_FILE = re.compile(r"^(?:peps/)?pep-(?P<number>\d{4})\.(?:txt|rst)$")
_HEADER = re.compile(r"^(?P<name>[A-Za-z-]+):\s*(?P<value>.*)$")
_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+])\1{2,}\s*$")
#: the index's sections, in its order: (heading, the statuses listed under it)
SECTIONS = (
    ("Meta-PEPs and other active PEPs (processes, guidelines)", {"Active"}),
    ("Provisional PEPs (provisionally accepted; interface may still change)", {"Provisional"}),
    ("Accepted PEPs (accepted; may not be implemented yet)", {"Accepted"}),
    ("Open PEPs (under consideration)", {"Draft"}),
    ("Finished PEPs (done, with a stable interface)", {"Final"}),
    ("Deferred PEPs (postponed pending further research or updates)", {"Deferred"}),
    ("Abandoned, Withdrawn, and Rejected PEPs", {"Rejected", "Withdrawn", "Superseded", "April Fool!"}),
)
HOST = "peps.python.org"


@dataclass(frozen=True)
class Pep:
    number: int
    title: str
    status: str
    kind: str  #: Standards Track, Informational, Process
    header: dict[str, str]
    body: str  #: the text, as HTML

    @property
    def url(self) -> str:
        return f"http://{HOST}/pep-{self.number:04d}/"


def parse(number: int, text: str) -> Pep:
    """A PEP from its source: the RFC 822 header, then reStructuredText."""
    lines = text.replace("\r\n", "\n").split("\n")
    header: dict[str, str] = {}
    last = ""
    position = 0
    for position, line in enumerate(lines):  # noqa: B007 (the body starts where the header ends)
        if not line.strip():
            break
        found = _HEADER.match(line)
        if found:
            last = found["name"]
            header[last] = found["value"].strip()
        elif last and line[:1].isspace():
            header[last] += " " + line.strip()
    return Pep(number, header.get("Title", f"PEP {number}"), header.get("Status", "Draft"),
               header.get("Type", "Standards Track"), header, render_rst(lines[position:]))


def render_rst(lines: list[str]) -> str:
    """Headings, paragraphs, bullet items and literal blocks as HTML."""
    out: list[str] = []
    block: list[str] = []
    literal = False

    def flush() -> None:
        if block:
            text = html.escape(" ".join(part.strip() for part in block))
            if literal:
                out.append(f"<pre>{html.escape(chr(10).join(block))}</pre>")
            elif block[0].lstrip().startswith(("- ", "* ")):
                out.append(f"<ul><li>{text.lstrip('-* ')}</li></ul>")
            else:
                out.append(f"<p>{text}</p>")
            block.clear()

    skipping = False
    for number, line in enumerate(lines):
        following = lines[number + 1] if number + 1 < len(lines) else ""
        if _UNDERLINE.match(line) and (not block or len(line.strip()) < len(block[-1].strip())):
            continue  # an overline, or the underline of a heading already written
        if line.strip() and _UNDERLINE.match(following) and len(following.strip()) >= len(line.strip()):
            flush()
            literal = skipping = False
            out.append(f"<h2>{html.escape(line.strip())}</h2>")
            continue
        if not line.strip():
            flush()
            continue
        indented = line[:1].isspace()
        if skipping and indented:
            continue
        skipping = False
        if line.startswith(".."):  # a comment or a directive, and its indented body
            flush()
            skipping = True
            continue
        if not block:
            literal = indented and bool(out) and out[-1].endswith("::</p>")
        if line.lstrip().startswith(("- ", "* ")) and block and not literal:
            flush()
        block.append(line)
    flush()
    return "".join(out).replace("</ul><ul>", "")


def peps_at(repo: Path, commit: str, rendered: dict[str, Pep]) -> list[Pep]:
    """The PEPs of the tree at *commit* (a blob parsed once: *rendered*)."""
    found = []
    for line in git_output(repo, "ls-tree", "-r", commit).splitlines():
        meta, path = line.split("\t", 1)
        name = _PEP_FILE.match(path)
        if name is None:
            continue
        blob = meta.split()[2]
        if blob not in rendered:
            rendered[blob] = parse(int(name["number"]), git_output(repo, "cat-file", "-p", blob))
        found.append(rendered[blob])
    return sorted(found, key=lambda pep: pep.number)


def _page(title: str, main: str) -> bytes:
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title></head>"
            f"<body><header><nav><a href='http://{HOST}/'>Python Enhancement Proposals</a> "
            "<a href='https://www.python.org/'>Python</a></nav></header>"
            f"<main>{main}</main><footer><p>Copyright: public domain. Source: github.com/python/peps.</p></footer>"
            "</body></html>").encode()


def site(peps: list[Pep]) -> dict[str, bytes]:
    """Every PEP's page and the index."""
    pages = {}
    shown = ("Author", "Status", "Type", "Topic", "Created", "Python-Version", "Resolution", "Superseded-By")
    for pep in peps:
        rows = "".join(f"<tr><th>{name}</th><td>{html.escape(pep.header[name])}</td></tr>"
                       for name in shown if pep.header.get(name))
        pages[pep.url] = _page(f"PEP {pep.number} – {pep.title}",
                               f"<h1>PEP {pep.number} – {html.escape(pep.title)}</h1><table>{rows}</table>{pep.body}")
    sections = []
    for heading, statuses in SECTIONS:
        listed = [pep for pep in peps if pep.status in statuses]
        items = "".join(
            f"<li>{pep.kind[:1]}{pep.status[:1]} <a href='{pep.url}'>PEP {pep.number}</a> "
            f"{html.escape(pep.title)} — {html.escape(pep.header.get('Author', ''))}</li>"
            for pep in listed
        )
        sections.append(f"<h2>{html.escape(heading)}</h2><ul>{items}</ul>")
    pages[f"http://{HOST}/"] = _page(
        "PEP 0 – Index of Python Enhancement Proposals (PEPs)",
        "<h1>PEP 0 – Index of Python Enhancement Proposals (PEPs)</h1>" + "".join(sections),
    )
    return pages


def pep_site(repo: Path) -> Callable[[str], dict[str, bytes]]:
    """The site as of a commit."""
    rendered: dict[str, Pep] = {}
    return lambda commit: site(peps_at(repo, commit, rendered))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args, start = history_command(parser, argv, "a clone of github.com/python/peps", "2020-01-06")
    built = build(args.repo, args.out, start, args.weeks, HOST, pep_site(args.repo),
                  "Each PEP is rendered at its URL with its header (status, type, Python version) above its text; "
                  "the index (PEP 0) lists every PEP under its status.")
    return report(args.out, built)


if __name__ == "__main__":
    sys.exit(main())
