"""Shared by the benchmarks: machine facts, and writing a benchmark's section.

Every benchmark writes its full section to ``bench/results/sections/<name>.md``
(:func:`write_section`); ``BENCHMARKS.md`` is the page people read first: one
row per benchmark with its headline figure, its target, when and at which
commit it was measured, its command and a link to the section — rebuilt from
the sections each time one is written (:func:`build_index`). A section's
headline and target live in it, as two HTML comments its benchmark (or a
person, after reading the run) writes: ``<!-- figure: … -->`` and
``<!-- target: … -->``.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import platform
import re
import signal
import statistics
import subprocess
import threading
import zlib
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "BENCHMARKS.md"
SECTIONS = ROOT / "bench" / "results" / "sections"

#: The order of the index: the groups a reader looks for, then the rest by name.
GROUPS = (
    ("Scheduler and frontier", ("slots", "spill", "frontier", "throughput", "long-crawl", "resilience", "faults")),
    ("Distributed crawling", ("distributed", "distributed-synthetic")),
    ("Demo", ("demo",)),
    # Measured as users crawl (issue 49): one request per host, a delay; one table per corpus.
    ("Crawl quality, as users crawl", ("quality-webkb", "quality-phpdoc-evolving", "quality-docsweb", "politeness-",
                                       "steady-")),
    ("Verdicts a user can check", ("answers",)),
    ("Crawl quality, earlier: measured at delay 0, most before issues 35–37 changed the scheduler and the learner",
     ("runs-quality-", "learner-", "quality-", "examples-", "labels-", "lookahead-", "exploration-", "sweep-",
      "focused-", "queries-", "infospiders-", "link-value-", "judges-", "prior-quality-", "screen-")),
    ("Refresh and search", ("refresh-", "symbiosis-")),
    ("Collections", ("extraction", "render-")),
)


#: crawls this benchmark process runs now (run_child): stopped with it
_CHILDREN: set[subprocess.Popen[str]] = set()
_CHILDREN_LOCK = threading.Lock()
#: set once the benchmark is told to stop: a thread pool's queued crawls
#: would otherwise still start, one by one, after the stop
_STOPPING = threading.Event()


def run_child(command: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(command, cwd=ROOT, capture_output=True, text=True)``
    for a crawl of a benchmark that runs many at once (from threads): the
    child is stopped with the benchmark (:func:`stop_children_on_exit`)
    rather than left to write into folders a next run has cleared; once the
    benchmark is stopping, no child starts (a failed crawl, said)."""
    with _CHILDREN_LOCK:
        if _STOPPING.is_set():
            return subprocess.CompletedProcess(command, 1, "", "the benchmark is stopping: not started")
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # noqa: S603
        _CHILDREN.add(process)
    with process:
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
        finally:
            with _CHILDREN_LOCK:
                _CHILDREN.discard(process)
    return subprocess.CompletedProcess(command, process.returncode, out, err)


def stop_children_on_exit() -> None:
    """From the benchmark's main thread: SIGTERM (and any exit) stops the
    crawls run_child started — each writes its summary with reason
    ``shutdown``, which a later ``--reuse-crawls`` runs again."""
    def stop(*_: object) -> None:
        _STOPPING.set()
        with _CHILDREN_LOCK:
            for process in _CHILDREN:
                process.terminate()

    def on_signal(signum: int, _frame: object) -> None:
        stop()
        raise SystemExit(128 + signum)

    atexit.register(stop)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)


def code_stamp(*modules: str) -> str:
    """What code made a cached result: a hash of the source of *modules*
    (a package: every .py file under it). A cache kept under this stamp is
    made anew after any change to that code, so a re-run measures the
    code it is run at.

    >>> code_stamp("bench.common") == code_stamp("bench.common") != code_stamp("bench.common", "bench")
    True
    """
    files: set[Path] = set()
    for name in modules:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            raise ValueError(f"no module {name}")
        if spec.submodule_search_locations:
            files.update(p for folder in spec.submodule_search_locations for p in Path(folder).rglob("*.py"))
        else:
            files.add(Path(spec.origin))
    stamp = 0
    for path in sorted(files):
        stamp = zlib.crc32(path.read_bytes(), zlib.crc32(path.name.encode(), stamp))
    return f"{stamp:08x}"


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores ({cpu}), {memory:.0f} GiB, Python {platform.python_version()}"


def median(values: list[float]) -> float:
    return statistics.median(values)


def commit() -> str:
    """The checkout's commit (``+`` when the work tree differs from it)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+" if dirty else "")


def write_section(name: str, body: str, figure: str = "", target: str = "") -> None:
    """Write benchmark *name*'s section (its stamp first), then the index.
    *figure* and *target* are its headline; a benchmark that gives no figure
    leaves the row's headline empty until a person reads the new run (an
    earlier run's headline is never kept beside new figures); the target stays."""
    path = SECTIONS / f"{name}.md"
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    target = target or _comment(old, "target")
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    head = f"<!-- figure: {figure} -->\n<!-- target: {target} -->\n" if figure or target else ""
    SECTIONS.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{head}_Measured {stamp} on {machine()}, code at {commit()}._\n\n{body.strip()}\n",
                    encoding="utf-8")
    build_index()


def build_index() -> None:
    """BENCHMARKS.md: one row per section, grouped, newest figures only."""
    sections = {path.stem: path.read_text(encoding="utf-8") for path in sorted(SECTIONS.glob("*.md"))}
    placed: set[str] = set()
    lines = [
        "# Benchmarks",
        "",
        "Every current figure, one row per benchmark: the headline, its target (from the issue that "
        "asked for it), when and at which commit it was measured, and the command that measures it "
        "again. The full section — tables, every run, plots and a reading — is behind the link "
        "(`bench/results/sections/`). A benchmark that is run again replaces its section and its row; "
        "nothing older stays beside it. Ratios are measured within one run: the machine is shared "
        "and noisy.",
        "",
    ]
    for title, prefixes in GROUPS:
        names = [n for p in prefixes for n in sections  # in the order the group names them
                 if n not in placed and (n == p or (p.endswith("-") and n.startswith(p)))]
        names = list(dict.fromkeys(names))
        if not names:
            continue
        placed.update(names)
        lines += [f"## {title}", "", "| benchmark | headline | target | measured | command |", "|---|---|---|---|---|"]
        lines += [_row(name, sections[name]) for name in names]
        lines.append("")
    rest = [n for n in sections if n not in placed]
    if rest:
        lines += ["## Other", "", "| benchmark | headline | target | measured | command |", "|---|---|---|---|---|"]
        lines += [_row(name, sections[name]) for name in rest]
        lines.append("")
    BENCHMARKS.write_text("\n".join(lines), encoding="utf-8")


def _row(name: str, text: str) -> str:
    measured = re.search(r"_Measured (\d{4}-\d\d-\d\d)[^_]*?(?:code at ([0-9a-f]{7,}\+?))?\._", text)
    date = measured[1] if measured else "—"
    code = measured[2] if measured and measured[2] else (_code_named(text) or "—")
    command = re.search(r"`((?:\.venv/bin/)?(?:python|make)[^`]*)`", text)
    shown = command[1] if command else "—"
    if len(shown) > 90:
        shown = shown[:87] + "…"
    cell = lambda value: value.replace("|", "\\|") or "—"  # noqa: E731
    return (f"| [{name}](bench/results/sections/{name}.md) | {cell(_comment(text, 'figure'))} "
            f"| {cell(_comment(text, 'target'))} | {date}, {code} | `{cell(shown)}` |")


def _comment(text: str, field: str) -> str:
    found = re.search(rf"<!-- {field}: (.*?) -->", text)
    return found[1].strip() if found else ""


def _code_named(text: str) -> str:
    found = re.search(r"(?:code at|measured at|Measured at) ([0-9a-f]{7})", text)
    return found[1] if found else ""
