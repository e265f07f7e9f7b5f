"""The repository stands alone and its map matches its tree: no
file cites the spec outside the checkout (every method is described in
docs/methods.md, cited as "methods.md §N"), and docs/architecture.md names
only folders and modules that exist, and every folder of the package."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.conftest import ROOT

PACKAGE = ROOT / "crawlproject"
#: folders a crawl writes (not code), named in architecture.md
OUTPUT_FOLDERS = {"collection/", "JOBDIR/focused/", "/gallery/", ".cache/"}  # made by use, not in a fresh checkout


def tracked_text_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,  # noqa: S607
                            capture_output=True, text=True, check=True).stdout.split()
    return [name for name in listed if name.endswith((".py", ".md", ".toml", ".txt", ".cfg", ".html", ".sh"))
            and not name.startswith("bench/results/")]


def test_no_file_cites_a_spec_outside_the_repository() -> None:
    citing = [
        name
        for name in tracked_text_files()
        if re.search("SPEC" + r" §|shared/" + "SPEC", (ROOT / name).read_text(encoding="utf-8", errors="replace"))
    ]
    assert citing == []


def test_every_cited_section_of_the_methods_exists() -> None:
    sections = set(re.findall(r"^## §(\d+)", (ROOT / "docs/methods.md").read_text(encoding="utf-8"), re.MULTILINE))
    cited: dict[str, set[str]] = {}
    for name in tracked_text_files():
        for number in re.findall(r"methods\.md §(\d+)", (ROOT / name).read_text(encoding="utf-8", errors="replace")):
            cited.setdefault(number, set()).add(name)
    assert cited and set(cited) <= sections, {n: sorted(names)[:3] for n, names in cited.items() if n not in sections}


def _exists(token: str) -> bool:
    if token in OUTPUT_FOLDERS:
        return True
    for base in (ROOT, PACKAGE):
        if (base / token).exists():
            return True
    # a bare module name in a folder's own table ("`memory.py`" under crawlproject/frontier/)
    return "/" not in token and any(PACKAGE.rglob(token))


def test_the_architecture_names_only_what_exists_and_every_folder() -> None:
    text = (ROOT / "docs/architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([\w./-]+(?:\.py|/))`", text))
    assert len(named) > 40
    assert sorted(token for token in named if not _exists(token)) == []
    layers = text[text.index("## Layers"):text.index("```", text.index("```", text.index("## Layers")) + 3)]
    folders = sorted(path.name for path in PACKAGE.iterdir() if path.is_dir() and (path / "__init__.py").exists())
    assert [folder for folder in folders if f"{folder}/" not in layers] == []


def test_the_architecture_drawing_is_drawn_from_the_code(tmp_path: Path) -> None:
    """docs/architecture.md's pictures come from scripts/draw_architecture.py:
    a box per file of the folder drawn, and every picture the page shows exists."""
    import sys

    drawn = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "scripts.draw_architecture", "--inside", "frontier", "-o", str(tmp_path / "f.png")],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=True,
    )
    files = [path for path in (PACKAGE / "frontier").glob("*.py") if path.read_text(encoding="utf-8").strip()]
    assert f"{len(files)} rooms" in drawn.stdout
    assert (tmp_path / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = (ROOT / "docs/architecture.md").read_text(encoding="utf-8")
    pictures = re.findall(r"\]\((architecture-[\w-]+\.png)\)", text)
    assert len(pictures) == 6 and all((ROOT / "docs" / name).is_file() for name in pictures)
