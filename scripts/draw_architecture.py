"""Draw the package's layers and imports from the code (docs/architecture.md).

    .venv/bin/python -m scripts.draw_architecture -o docs/architecture-packages.png
    .venv/bin/python -m scripts.draw_architecture --inside frontier -o docs/architecture-frontier-after.png
    .venv/bin/python -m scripts.draw_architecture --commit 847f740 -o docs/architecture-packages-before.png

A box is a folder of ``crawlproject`` (or a top-level module), its area the
lines of code in it; the rows are the layers ``pyproject.toml`` declares to
import-linter (top: may import every row below it); an arrow is "imports",
its width the number of modules that do. An arrow that runs up a row is
drawn red: import-linter refuses it. With ``--inside PACKAGE``, one folder's
files, each on the row of its longest chain of imports inside the folder.
``--commit`` draws the tree as it was at that commit (``git archive``).

The imports are grimp's (import-linter's own graph): imports under
``TYPE_CHECKING`` are left out, as the contracts leave them out.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from collections import Counter
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "crawlproject"


@dataclass
class Room:
    name: str  # a folder ("frontier/") or a module ("config.py")
    lines: int
    files: int
    row: int = 0


def lines_of(path: Path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def import_edges(tree: Path) -> list[tuple[str, str]]:
    """(importer, imported) for every direct import between modules of the
    package in *tree*, in a child process (the tree's package is imported by
    name: another checkout's must not mix with this one)."""
    code = (
        "import sys, grimp, json\n"
        f"graph = grimp.build_graph({PACKAGE!r}, exclude_type_checking_imports=True, cache_dir=None)\n"
        "edges = [(m, i) for m in graph.modules for i in graph.find_modules_directly_imported_by(m)]\n"
        "json.dump(edges, sys.stdout)\n"
    )
    done = subprocess.run(  # noqa: S603 (our own interpreter, fixed code)
        [sys.executable, "-c", code], cwd=tree, capture_output=True, text=True, check=True,
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
    )
    return [tuple(edge) for edge in json.loads(done.stdout)]  # type: ignore[misc]


def declared_layers(tree: Path) -> list[list[str]]:
    """The layers contract of *tree*'s pyproject.toml, top first, as room names."""
    config = tomllib.loads((tree / "pyproject.toml").read_text(encoding="utf-8"))
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract["type"] == "layers":
            return [[room_of(tree, name.strip()) for name in layer.split("|")] for layer in contract["layers"]]
    return []


def room_of(tree: Path, module: str, inside: str = "") -> str:
    """The room *module* is in: its folder under the package (or under *inside*), or its file."""
    base = [PACKAGE, *inside.split(".")] if inside else [PACKAGE]
    parts = module.split(".")[len(base):]
    if not parts:
        return "__init__.py"
    return parts[0] + "/" if tree.joinpath(*base, parts[0]).is_dir() else parts[0] + ".py"


def rooms_and_arrows(tree: Path, inside: str = "") -> tuple[dict[str, Room], Counter[tuple[str, str]]]:
    prefix = f"{PACKAGE}.{inside}" if inside else PACKAGE
    edges = [(a, b) for a, b in import_edges(tree) if a.startswith(prefix + ".") and b.startswith(prefix + ".")]
    rooms: dict[str, Room] = {}
    for path in sorted(tree.joinpath(*prefix.split(".")).rglob("*.py")):
        module = ".".join(path.relative_to(tree).with_suffix("").parts).removesuffix(".__init__")
        name = room_of(tree, module, inside)
        if name == "__init__.py" and lines_of(path) == 0:
            continue
        room = rooms.setdefault(name, Room(name, 0, 0))
        room.lines += lines_of(path)
        room.files += 1
    arrows: Counter[tuple[str, str]] = Counter()
    for importer, imported in edges:
        a, b = room_of(tree, importer, inside), room_of(tree, imported, inside)
        if a != b and a in rooms and b in rooms:
            arrows[a, b] += 1
    return rooms, arrows


def place_in_layers(rooms: dict[str, Room], layers: list[list[str]], arrows: Counter[tuple[str, str]]) -> int:
    """Each room's row: its declared layer's, else by its imports. Returns the rows."""
    declared = {name: row for row, layer in enumerate(layers) for name in layer}
    if declared:  # rooms outside the contract (the package's __init__, Scrapy's settings module): a row above
        for room in rooms.values():
            room.row = declared[room.name] + 1 if room.name in declared else 0
        return 1 + max(room.row for room in rooms.values())
    level: dict[str, int] = {}  # by the longest chain of imports below (a folder's own files)

    def depth(name: str, seen: frozenset[str] = frozenset()) -> int:
        if name not in level:
            below = [b for (a, b) in arrows if a == name and b not in seen]
            level[name] = 1 + max((depth(b, seen | {name}) for b in below), default=-1)
        return level[name]

    top = max(depth(room.name) for room in rooms.values())
    for room in rooms.values():
        room.row = top - depth(room.name)
    return 1 + max(room.row for room in rooms.values())


def draw(rooms: dict[str, Room], arrows: Counter[tuple[str, str]], rows: int, title: str, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    by_row: dict[int, list[Room]] = {}
    for room in sorted(rooms.values(), key=lambda r: (r.row, -r.lines)):
        by_row.setdefault(room.row, []).append(room)
    width, row_height, gap = 16.0, 1.0, 0.25
    scale = max(sum(r.lines ** 0.5 for r in row) for row in by_row.values())
    figure, axes = plt.subplots(figsize=(width, rows * row_height * 0.75 + 1.0))
    box: dict[str, tuple[float, float, float, float]] = {}  # x, y, w, h
    for row, members in by_row.items():
        y = (rows - 1 - row) * row_height
        widths = [(width - gap * (len(members) + 1)) * r.lines ** 0.5 / scale for r in members]
        x = (width - sum(widths) - gap * (len(members) - 1)) / 2
        for room, w in zip(members, widths, strict=True):
            h = row_height * 0.55
            box[room.name] = (x, y, w, h)
            axes.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.08",
                                          facecolor="#dce9f5" if room.name.endswith("/") else "#f3ead7",
                                          edgecolor="#5b6b7a", linewidth=1))
            label = f"{room.name}\n{room.lines:,} lines" + (f", {room.files} files" if room.files > 1 else "")
            axes.text(x + w / 2, y + h / 2, label, ha="center", va="center", fontsize=8 if w > 1.4 else 6)
            x += w + gap
    for (a, b), count in arrows.items():
        (xa, ya, wa, _), (xb, yb, wb, hb) = box[a], box[b]
        upward = rooms[a].row > rooms[b].row
        # Each end leans toward the other box: arrows run nearer upright than from centre to centre.
        start = (min(max(xb + wb / 2, xa + 0.1 * wa), xa + 0.9 * wa), ya)
        end = (min(max(xa + wa / 2, xb + 0.1 * wb), xb + 0.9 * wb), yb + hb)
        if rooms[a].row == rooms[b].row:
            start, end = (xa + wa / 2, ya + hb / 2), (xb + wb / 2, yb + hb / 2)
        axes.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=8,
                                       connectionstyle="arc3,rad=0.08", linewidth=0.4 + 0.35 * count ** 0.5,
                                       color="#c0392b" if upward else "#7f8c8d", alpha=0.9 if upward else 0.45))
    axes.set_xlim(-0.2, width + 0.2)
    axes.set_ylim(-0.3, rows * row_height)
    axes.axis("off")
    up = sum(1 for (a, b) in arrows if rooms[a].row > rooms[b].row)
    axes.set_title(f"{title} — {len(rooms)} rooms, {sum(r.lines for r in rooms.values()):,} lines, "
                   f"{len(arrows)} arrows, {up} up", fontsize=10)
    figure.tight_layout()
    figure.savefig(out, dpi=110)
    plt.close(figure)


def tree_at(commit: str, folder: Path) -> Path:
    """The repository's files at *commit*, unpacked in *folder*."""
    archive = subprocess.run(["git", "archive", commit, PACKAGE, "pyproject.toml"],  # noqa: S603,S607
                             cwd=ROOT, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", required=True, help="the PNG to write")
    parser.add_argument("--inside", default="", help="one folder of the package (e.g. frontier): its files")
    parser.add_argument("--commit", default="", help="draw the tree at this commit (default: the working tree)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        tree = tree_at(args.commit, Path(scratch)) if args.commit else ROOT
        if args.inside and not (tree / PACKAGE / args.inside).is_dir():
            print(f"draw_architecture: no folder {PACKAGE}/{args.inside} in that tree", file=sys.stderr)
            return 2
        rooms, arrows = rooms_and_arrows(tree, args.inside)
        layers = [] if args.inside else declared_layers(tree)
        rows = place_in_layers(rooms, layers, arrows)
        where = f"{PACKAGE}/{args.inside}/" if args.inside else f"{PACKAGE}/"
        draw(rooms, arrows, rows, f"{where} at {args.commit or 'the working tree'}", Path(args.output))
    print(f"{args.output}: {len(rooms)} rooms, {len(arrows)} arrows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
