"""The add-on in a user's own Scrapy project: README's "Use it in
your own Scrapy project" run as written, in a project made by
``scrapy startproject``, with crawlproject installed as a package."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, SHARED, examples_crawl_script

SECTION = "## Use it in your own Scrapy project"


def readme_blocks() -> list[tuple[str, str, str]]:
    """(language, the text before it, code) of each fenced block of the section."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index(SECTION):]
    section = section[: section.index("\n## ", len(SECTION))]
    parts = section.split("```")  # text, block, text, block, …
    blocks = []
    for before, block in zip(parts[0::2], parts[1::2]):
        language, _, code = block.partition("\n")
        blocks.append((language.strip(), before, code))
    return blocks


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment, with the pip its Python brings (not
    upgraded: 3.11's is 23.2.1, which leaves extras such as lxml's
    ``html_clean`` out), and crawlproject installed by that pip as the README
    says, every dependency resolved by it (an import left out of
    our declared dependencies fails here)."""
    venv = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)  # noqa: S603
    installing = subprocess.run(  # noqa: S603
        # --no-compile: bytecode is written on first import instead of pip compiling every module it installs
        [str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check", "--no-compile", str(ROOT)],
        capture_output=True, text=True, timeout=900,
    )
    assert installing.returncode == 0, installing.stderr[-3000:]
    return venv / "bin" / "python"


def run(python: Path, command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    words = shlex.split(command)
    assert words[0] == "scrapy", command
    environment = {**os.environ, "PYTHONPATH": ""}  # nothing of the checkout on the path
    return subprocess.run(  # noqa: S603
        [str(python), "-m", "scrapy", *words[1:]], cwd=cwd, capture_output=True, text=True, timeout=300,
        env=environment,
    )


def test_the_installed_package_declares_its_dependencies(installed: Path) -> None:
    requires = subprocess.run(  # noqa: S603
        [str(installed), "-c", "import importlib.metadata as m; print('\\n'.join(m.requires('crawlproject')))"],
        capture_output=True, text=True, check=True, cwd="/",
    ).stdout.lower()
    for dependency in ("scrapy", "scrapy-redis", "scikit-learn", "w3lib", "protego", "warcio", "lxml[-_]html[-_]clean"):
        assert re.search(rf"^{dependency}\b", requires, flags=re.MULTILINE), (dependency, requires)


def test_readme_user_project_runs_as_written(installed: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "shared").symlink_to(SHARED)
    blocks = readme_blocks()
    setup, settings, spider, plain, crawls = blocks
    # The install line is this test's own (above); the project is made as written.
    assert setup[2].splitlines()[0] == "pip install ./main"
    for line in setup[2].splitlines()[1:]:
        if line.startswith("scrapy "):
            made = run(installed, line, work)
            assert made.returncode == 0, made.stderr[-2000:]
    project = work / "courses"
    with (project / "courses" / "settings.py").open("a", encoding="utf-8") as f:
        f.write("\n" + settings[2])
    for before, code in ((spider[1], spider[2]), (plain[1], plain[2])):
        name = re.findall(r"`courses/spiders/(\w+\.py)`", before)[-1]
        (project / "courses" / "spiders" / name).write_text(code, encoding="utf-8")
    results = [run(installed, line, project) for line in crawls[2].strip().splitlines()]
    for result in results:
        assert result.returncode == 0, result.stderr[-3000:]
    focused, plain_crawl, settings_value = results
    assert settings_value.stdout.strip() == "100000"

    # The focused spider: items exported, robots.txt fetched, best-first order.
    items = [json.loads(line) for line in (project / "items.jsonl").read_text().splitlines()]
    assert len(items) >= 100 and all(isinstance(item["url"], str) for item in items)
    assert "body" not in items[0]  # raw content stays out of the feed
    assert "'robotstxt/request_count'" in focused.stderr
    # a focused crawl logs at INFO unless the project says otherwise (Scrapy's DEBUG: a line per
    # request); the process's own first lines, before any crawler, are Scrapy's
    crawl_log = focused.stderr[focused.stderr.index("Enabled addons"):]
    assert " DEBUG: " not in crawl_log and " INFO: " in crawl_log
    folders = list((project / "crawls").glob("cornell_courses-*"))
    assert len(folders) == 1
    summary = json.loads((folders[0] / "summary.json").read_text())
    assert summary["strategy"] == "best-first" and summary["pages_fetched"] >= 100
    # its collection (trafilatura and what it imports, as installed): pages with their text, and a report
    collected = [json.loads(line) for part in (folders[0] / "collection").glob("*.jsonl")
                 for line in part.read_text().splitlines()]
    assert len(collected) == summary["pages_ok"] >= 20  # every page answered 200 (WebKB's links are mostly dead)
    assert sum(len(page.get("text") or "") > 200 for page in collected) >= 0.8 * len(collected)
    assert "focus/component_failed" not in focused.stderr and "Traceback" not in focused.stderr
    assert "cornell_courses" in (folders[0] / "report.html").read_text(encoding="utf-8")
    history = [json.loads(line) for line in (folders[0] / "history.jsonl").read_text().splitlines()]
    # In the frontier's order (the history's own order is the order 8 concurrent fetches answered in).
    popped = [row["popped"] for row in history]
    assert all(isinstance(number, int) and number >= 1 for number in popped) and len(set(popped)) == len(popped)
    # Scored by the strategy; the frontier's best-first order among the slots
    # that can take a request is proven against a model in test_frontier_memory
    # (with 8 fetches in flight, popped order here also mixes hosts).
    assert len({row["score"] for row in history if row["score"] is not None}) >= 3

    # The plain spider: its own items, Scrapy's rules for statuses, a summary from its responses.
    # Scrapy's order (last in, first out: depth-first into WebKB's dead links) and an exact
    # budget of 100 pages: one item per page answered 200.
    plain_items = [json.loads(line) for line in (project / "plain.jsonl").read_text().splitlines()]
    summary_lines = plain_crawl.stderr[plain_crawl.stderr.index("Crawl summary"):]
    fetched = int(re.search(r"pages_fetched: (\d+)", summary_lines)[1])  # type: ignore[index]
    ok = int(re.search(r"pages_ok: (\d+)", summary_lines)[1])  # type: ignore[index]
    assert fetched == 100
    assert len(plain_items) == ok >= 20 and set(plain_items[0]) == {"url", "title"}
    assert "priority order" in summary_lines
    assert "Ignoring response <404" in plain_crawl.stderr or "'httperror/response_ignored_count'" in plain_crawl.stderr


def test_a_project_without_the_add_on_line_stops_with_one_line(installed: Path, tmp_path: Path) -> None:
    """Without ``ADDONS``, no component of ours runs: the replay setting was
    ignored and the crawl went to the live web without a word."""
    made = run(installed, "scrapy startproject forgetful", tmp_path)
    assert made.returncode == 0, made.stderr[-2000:]
    project = tmp_path / "forgetful"
    _, _, spider, plain, crawls = readme_blocks()
    (project / "forgetful" / "spiders" / "cornell.py").write_text(spider[2], encoding="utf-8")
    (project / "forgetful" / "spiders" / "plain.py").write_text(plain[2], encoding="utf-8")
    focused_line, plain_line, _ = crawls[2].strip().splitlines()
    for line in (focused_line, plain_line):  # a focused spider; a plain one given a FOCUS_* setting
        stopped = run(installed, line.replace(" -o items.jsonl", "").replace(" -o plain.jsonl", ""), project)
        errors = [row for row in stopped.stderr.splitlines() if row.startswith("scrapy crawl: error:")]
        assert stopped.returncode == 2 and len(errors) == 1, stopped.stderr[-3000:]
        assert "add-on is not enabled: add ADDONS = {'crawlproject.addon.FocusedCrawlAddon': 0}" in errors[0]
        assert "Traceback" not in stopped.stderr and "Crawled (" not in stopped.stderr
    # a plain spider with no setting of ours is Scrapy's business: it starts (and is refused nothing by us)
    quiet = run(installed, "scrapy crawl plain -s CLOSESPIDER_PAGECOUNT=1 -s DOWNLOAD_TIMEOUT=1 -s RETRY_TIMES=0",
                project)
    assert "add-on is not enabled" not in quiet.stderr and "Spider opened" in quiet.stderr


def test_a_script_on_a_terminal_crawls_from_example_pages(installed: Path, tmp_path: Path) -> None:
    """crawlproject.crawl() after a plain pip install, on a terminal: its
    progress bar (tqdm was not a dependency), and a topic trained from example
    pages by a child ``scrapy train`` that keeps the replay setting (it ran
    where no project was, and fetched from the live web: "no relevant example
    page could be fetched")."""
    import fcntl
    import pty
    import struct
    import termios

    script = examples_crawl_script(12, "[len(c), c.summary['judge']['judge']]")
    terminal, side = pty.openpty()
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a terminal 100 columns wide
    with subprocess.Popen([str(installed), "-c", script], cwd=tmp_path, stdin=subprocess.DEVNULL,  # noqa: S603
                          stdout=subprocess.PIPE, stderr=side, env={**os.environ, "PYTHONPATH": ""}) as child:
        os.close(side)
        shown = b""
        while True:  # the terminal's side, until the child closes it
            try:
                chunk = os.read(terminal, 65536)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
        assert child.stdout is not None
        printed = child.stdout.read().decode()
        assert child.wait(timeout=600) == 0, shown.decode(errors="replace")[-3000:]
    os.close(terminal)
    pages, judge = json.loads(printed.splitlines()[-1])
    assert pages == 12 and "examples" in judge, judge
    assert (tmp_path / "out" / "topic.npz").is_file()
    assert re.search(rb"crawling: +100%.*12/12", shown), shown[-2000:]
