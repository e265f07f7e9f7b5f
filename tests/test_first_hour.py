"""A user's first hour: plain Scrapy habits work, outputs never mix,
every mistake gets one clear line, progress a person can read."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import psutil
import pytest

from crawlproject.replay.process import ReplayProcess
from tests.conftest import (
    FAST_REPLAY_SETTINGS,
    ROOT,
    UNIVERSITY_HOMES,
    WEBKB_LABELS,
    WEBKB_WARC,
    run_crawl,
)

CORNELL = "http://www.cs.cornell.edu/"


def scrapy(
    *args: str, cwd: Path = ROOT, settings: dict[str, Any] | None = None, timeout: int = 180
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "scrapy", *args]
    for name, value in (settings or {}).items():
        command += ["-s", f"{name}={value}"]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout)  # noqa: S603


def last_line(completed: subprocess.CompletedProcess[str]) -> str:
    return completed.stderr.strip().splitlines()[-1]


# -- 1. outputs never mix ---------------------------------------------------------------


def test_parallel_crawls_write_apart(webkb_replay: ReplayProcess, tmp_path: Path) -> None:
    settings = {
        **FAST_REPLAY_SETTINGS, "FOCUS_REPLAY_PROXY": webkb_replay.proxy_url, "CLOSESPIDER_ITEMCOUNT": 40,
        "FOCUS_OUTPUT_DIR": str(tmp_path / "crawls/%(name)s-%(job)s"), "LOG_LEVEL": "WARNING",
    }
    command = [sys.executable, "-m", "scrapy", "crawl", "breadthfirst", "-a", f"seeds={CORNELL}"]
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    runs = [subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True) for _ in range(3)]  # noqa: S603
    for run in runs:
        _, stderr = run.communicate(timeout=180)
        assert run.returncode == 0, stderr[-2000:]
    folders = sorted((tmp_path / "crawls").iterdir())
    assert len(folders) == 3
    for folder in folders:
        orders = [json.loads(line)["order"] for line in (folder / "history.jsonl").read_text().splitlines()]
        assert orders == list(range(1, len(orders) + 1)) and len(orders) >= 40
        summary = json.loads((folder / "summary.json").read_text())
        assert summary["pages_fetched"] == len(orders)


def test_an_output_folder_of_another_crawl_is_refused_and_a_resumed_crawl_writes_on(
    webkb_replay: ReplayProcess, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    first = run_crawl("breadthfirst", out, [CORNELL], webkb_replay.proxy_url, settings={"CLOSESPIDER_ITEMCOUNT": 20})
    assert first.returncode == 0, first.log[-2000:]
    again = run_crawl("breadthfirst", out, [CORNELL], webkb_replay.proxy_url, settings={"CLOSESPIDER_ITEMCOUNT": 20})
    assert again.returncode == 2
    assert (
        f"scrapy crawl: error: FOCUS_OUTPUT_DIR '{out}' already holds another crawl (a breadthfirst crawl started "
        in again.log
    )
    assert len(again.history) == len(first.history)  # untouched
    # With JOBDIR: the second run resumes the first, in the same folder, numbering on.
    jobdir = tmp_path / "job"
    settings = {"CLOSESPIDER_ITEMCOUNT": 15, "JOBDIR": str(jobdir), "CONCURRENT_REQUESTS": 1}
    resumed_out = tmp_path / "resumed"
    one = run_crawl("bestfirst", resumed_out, [CORNELL], webkb_replay.proxy_url, "course", settings)
    # A budget is the crawl's: the resumed run is given 30 for the whole crawl.
    two = run_crawl("bestfirst", tmp_path / "ignored", [CORNELL], webkb_replay.proxy_url, "course",
                    {**settings, "CLOSESPIDER_ITEMCOUNT": 30})
    assert one.returncode == 0 and two.returncode == 0, two.log[-2000:]
    history = [json.loads(line) for line in (resumed_out / "history.jsonl").read_text().splitlines()]
    assert [r["order"] for r in history] == list(range(1, len(history) + 1))
    assert len(history) >= 30
    assert len({r["canonical_url"] for r in history}) == len(history), "a page fetched twice"
    assert json.loads((resumed_out / "summary.json").read_text())["resumed_after_pages"] == len(one.history)
    assert not (tmp_path / "ignored" / "history.jsonl").exists()


def test_pages_are_scrapy_items_for_feed_exports(webkb_replay: ReplayProcess, tmp_path: Path) -> None:
    feed = tmp_path / "pages.jsonl"
    result = run_crawl(
        "bestfirst", tmp_path / "out", [CORNELL], webkb_replay.proxy_url, "course",
        settings={"CLOSESPIDER_ITEMCOUNT": 30}, extra_args=["-o", str(feed)],
    )
    assert result.returncode == 0, result.log[-2000:]
    exported = [json.loads(line) for line in feed.read_text().splitlines()]
    assert [item["canonical_url"] for item in exported] == [r["canonical_url"] for r in result.history]
    assert {"url", "status", "score", "relevance", "order"} <= set(exported[0])
    assert "body" not in exported[0] and "outlinks" not in exported[0]


# -- 2. plain Scrapy habits ---------------------------------------------------------------


def test_a_genspider_spider_that_yields_dicts_runs_in_this_project(webkb_replay: ReplayProcess, tmp_path: Path) -> None:
    made = scrapy("genspider", "example", "www.cs.cornell.edu", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    spider_file = tmp_path / "example.py"
    source = spider_file.read_text()
    assert "def parse(self, response):" in source
    spider_file.write_text(source.replace("start_urls = [\"https://", "start_urls = [\"http://").replace(
        "        pass",
        '        yield {"url": response.url, "title": response.css("title::text").get()}\n'
        "        for href in response.css(\"a::attr(href)\").getall()[:5]:\n"
        "            yield response.follow(href, callback=self.parse)",
    ))
    feed = tmp_path / "items.jsonl"
    result = scrapy(
        "runspider", str(spider_file), "-o", str(feed),
        settings={**FAST_REPLAY_SETTINGS, "FOCUS_REPLAY_PROXY": webkb_replay.proxy_url, "CLOSESPIDER_ITEMCOUNT": 15},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Error processing" not in result.stderr and "KeyError" not in result.stderr
    items = [json.loads(line) for line in feed.read_text().splitlines()]
    assert len(items) >= 15 and all(set(item) == {"url", "title"} for item in items)
    assert not (ROOT / "crawls" / "example").exists()


def test_a_topic_spider_subclass_uses_its_class_attributes(webkb_replay: ReplayProcess, tmp_path: Path) -> None:
    spider_file = tmp_path / "courses.py"
    spider_file.write_text(textwrap.dedent(f"""
        from crawlproject.spiders import BestFirstSpider

        class CourseSpider(BestFirstSpider):
            name = "courses"
            query = "course syllabus lecture homework"
            start_urls = ["{CORNELL}"]
            custom_settings = {{"CLOSESPIDER_ITEMCOUNT": 12}}
    """))
    result = scrapy(
        "runspider", str(spider_file),
        settings={**FAST_REPLAY_SETTINGS, "FOCUS_REPLAY_PROXY": webkb_replay.proxy_url,
                  "FOCUS_OUTPUT_DIR": str(tmp_path / "out"), "CONCURRENT_REQUESTS": 1},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    history = [json.loads(line) for line in (tmp_path / "out/history.jsonl").read_text().splitlines()]
    assert history[0]["url"] == CORNELL
    assert 12 <= len(history) <= 13  # custom_settings applied (one request at a time: one in flight at most)
    assert any(r["relevance"] and r["relevance"] > 0 for r in history)  # its query is used


def test_the_abstract_base_spider_is_not_listed() -> None:
    listed = scrapy("list")
    assert listed.returncode == 0
    names = listed.stdout.split()
    # the focus spider, its twelve aliases (one per strategy) and refresh
    assert "focus" in names and "bestfirst" in names and "focused-base" not in names and len(names) == 14


# -- 3. every mistake: one clear line, nothing left running ----------------------------------


@pytest.mark.parametrize(
    ("arguments", "settings", "message"),
    [
        (
            ["-a", "query=course"],
            {"FOCUS_FRONTIER_MAX": "lots"},
            "scrapy crawl: error: FOCUS_FRONTIER_MAX must be a whole number ≥ 1, got 'lots'",
        ),
        (
            ["-a", "qurey=course"],
            {},
            "scrapy crawl: error: unknown spider argument -a qurey: did you mean 'query'? 'bestfirst' takes "
            "follow_links, good, model, query, scope, seeds, sitemaps, strategy, strategy_label, task, topic_id (a "
            "spider subclass declares its own as class attributes)",
        ),
        (
            ["-a", "query=course", "-a", "seeds=ftp://ftp.example.org/,mailto:x@y.org"],
            {},
            "scrapy crawl: error: seed 'ftp://ftp.example.org/' cannot be crawled (bad scheme): seeds must be "
            "http:// or https:// URLs with a host",
        ),
        (
            ["-a", "query=course"],
            {"FOCUS_LABELS": str(WEBKB_LABELS), "FOCUS_RELEVANT": "courses"},
            f"scrapy crawl: error: FOCUS_RELEVANT names 'courses', but no page of {WEBKB_LABELS} is labelled "
            "'courses' or below it; its top categories are: course, department, faculty, other, project, staff, "
            "student",
        ),
        (
            ["-a", "query=course"],
            {"FOCUS_REPLAY_WARC": str(WEBKB_WARC), "FOCUS_REPLAY_PROXY": "http://127.0.0.1:9"},
            "scrapy crawl: error: FOCUS_REPLAY_WARC and FOCUS_REPLAY_PROXY are both set: set FOCUS_REPLAY_WARC to "
            "start "
            "a replay for this crawl, or FOCUS_REPLAY_PROXY to use one already running",
        ),
        (
            ["-a", "query=course"],
            {"FOCUS_REPLAY_PROXY": "http://127.0.0.1:9"},
            "scrapy crawl: error: FOCUS_REPLAY_PROXY http://127.0.0.1:9 does not answer (Connection refused): start it "
            "with `scrapy replay --warc FILE --port PORT`, or set FOCUS_REPLAY_WARC instead",
        ),
        # A misspelled name, a negative budget, strategies and frontiers that are not there
        (
            ["-a", "query=course"],
            {"FOCUS_FRONTEIR_MAX": "5"},
            "scrapy crawl: error: unknown setting FOCUS_FRONTEIR_MAX; did you mean FOCUS_FRONTIER_MAX? "
            "(every FOCUS_* setting is in docs/settings.md)",
        ),
        (
            ["-a", "query=course"],
            {"CLOSESPIDER_PAGECOUNT": "-5"},
            "scrapy crawl: error: CLOSESPIDER_PAGECOUNT must be ≥ 0, got -5",
        ),
        # Scrapy's own names misspelt (the budget was silently gone: 653 pages, exit 0)
        (
            ["-a", "query=course"],
            {"CLOSESPIDER_PAGECONT": "20"},
            "scrapy crawl: error: unknown setting CLOSESPIDER_PAGECONT; did you mean CLOSESPIDER_PAGECOUNT? "
            "(Scrapy's settings: https://docs.scrapy.org/en/latest/topics/settings.html)",
        ),
        (
            ["-a", "query=course"],
            {"FOCUS_STRATEGY": "crawlproject.nope.Nope"},
            "scrapy crawl: error: FOCUS_STRATEGY='crawlproject.nope.Nope' cannot be imported: "
            "No module named 'crawlproject.nope'",
        ),
        (
            ["-a", "query=course"],
            {"FOCUS_STRATEGY": "sharksearch"},
            "scrapy crawl: error: FOCUS_STRATEGY='sharksearch' names no strategy: did you mean 'shark-search'? Give a "
            "strategy name (best-first, breadth-first, context-graph, fish-search, focused, infospiders, link-learner, "
            "link-value, oracle, path-oracle, random, shark-search) or the import path of a CrawlStrategy class",
        ),
        (
            ["-a", "query=course"],
            {"FOCUS_FRONTIER_BACKEND": "foo.Bar"},
            "scrapy crawl: error: FOCUS_FRONTIER_BACKEND='foo.Bar' cannot be imported: No module named 'foo'",
        ),
        (
            ["-a", "query=course"],
            {"FOCUS_REPLAY_PROXY": "http://127.0.0.1.evil.example:80"},
            "scrapy crawl: error: FOCUS_REPLAY_PROXY must be http://127.0.0.1:PORT (a loopback address and a port), "
            "got 'http://127.0.0.1.evil.example:80'",
        ),
    ],
)
def test_start_up_mistakes_stop_with_one_line(
    tmp_path: Path, arguments: list[str], settings: dict[str, str], message: str
) -> None:
    completed = scrapy("crawl", "bestfirst", "-a", f"seeds={CORNELL}", *arguments,
                       settings={"FOCUS_OUTPUT_DIR": str(tmp_path / "out"), **settings})
    assert completed.returncode == 2
    assert last_line(completed) == message
    assert "Traceback" not in completed.stderr and "Task exception" not in completed.stderr


def test_an_unknown_spider_is_one_line_with_a_suggestion() -> None:
    completed = scrapy("crawl", "bestfrist")
    assert completed.returncode == 2
    assert last_line(completed).startswith(
        "scrapy crawl: error: no spider named 'bestfrist': did you mean 'bestfirst'? The project's spiders: bestfirst,"
    )
    assert "Traceback" not in completed.stderr


def test_a_model_file_that_is_not_ours_says_so(tmp_path: Path) -> None:
    garbage = tmp_path / "model.npz"
    garbage.write_bytes(b"\x80\x04 certainly not a model" * 50)
    completed = scrapy("crawl", "focused", "-a", f"seeds={CORNELL}", "-a", f"model={garbage}", "-a", "good=course",
                       settings={"FOCUS_OUTPUT_DIR": str(tmp_path / "out")})
    assert completed.returncode == 2
    assert last_line(completed) == (
        f"scrapy crawl: error: {garbage} is not a crawlproject model file (a model is a .npz of arrays and JSON); "
        "train one with `scrapy train`"
    )
    assert "allow_pickle" not in completed.stderr


def test_settings_shows_the_add_ons_defaults() -> None:
    shown = scrapy("settings", "--get", "FOCUS_FRONTIER_MAX")
    assert shown.returncode == 0 and shown.stdout.strip() == "100000"
    assert (
        scrapy("settings", "--get", "SCHEDULER").stdout.strip() == "crawlproject.frontier.scheduler.FrontierScheduler"
    )
    assert scrapy("settings", "--getbool", "REMOTE_CONTROL_ENABLED").stdout.strip() == "False"


@pytest.mark.parametrize("command", ["train", "replay"])
def test_help_headings_are_the_sections_only(command: str) -> None:
    shown = scrapy(command, "-h")
    lines = shown.stdout.splitlines()
    headings = [lines[i - 1] for i, line in enumerate(lines) if i and set(line) in ({"="}, {"-"})]
    assert set(headings) <= {
        "Usage",
        "Options",
        "Global Options",
        "Look-ahead models (--kind context-graph | link-value)",
        "A topic from example pages (--examples)",
    }
    assert "Options" in headings


def test_the_remote_control_server_is_off_unless_asked_for(webkb_replay: Any, tmp_path: Path) -> None:
    quiet = run_crawl("breadthfirst", tmp_path / "a", [CORNELL], webkb_replay.proxy_url,
                      settings={"CLOSESPIDER_ITEMCOUNT": 5})
    assert quiet.returncode == 0 and "Remote control HTTP server" not in quiet.log
    asked = run_crawl("breadthfirst", tmp_path / "b", [CORNELL], webkb_replay.proxy_url,
                      settings={"CLOSESPIDER_ITEMCOUNT": 5, "REMOTE_CONTROL_ENABLED": True})
    assert asked.returncode == 0 and "Remote control HTTP server listening" in asked.log


def _replays_of(warc: Path) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        cmdline = process.info.get("cmdline") or []
        if "crawlproject.replay" in cmdline and str(warc) in cmdline:
            found.append(process)
    return found


def test_a_crawl_that_fails_at_start_up_leaves_no_replay_running(tmp_path: Path) -> None:
    warc = tmp_path / "mine.warc.gz"
    shutil.copy(WEBKB_WARC, warc)
    # A JOBDIR whose frontier is not one: found when the frontier opens, after the replay started.
    frontier = tmp_path / "job" / "frontier.sqlite"
    frontier.parent.mkdir()
    frontier.write_bytes(b"not a database" * 100)
    completed = scrapy("crawl", "bestfirst", "-a", f"seeds={CORNELL}", "-a", "query=course",
                       settings={"FOCUS_REPLAY_WARC": str(warc), "JOBDIR": str(tmp_path / "job"),
                                 "FOCUS_OUTPUT_DIR": str(tmp_path / "out")})
    assert completed.returncode == 2, completed.stderr[-2000:]
    assert last_line(completed) == (
        f"scrapy crawl: error: {frontier} is not a crawlproject frontier (file is not a database); start a new JOBDIR"
    )
    assert "Replaying" in completed.stderr  # it had started
    assert _replays_of(warc) == []


def test_a_replay_that_cannot_start_says_why_at_once(tmp_path: Path) -> None:
    bad = tmp_path / "bad.warc.gz"
    bad.write_text("not a warc")
    completed = scrapy("crawl", "bestfirst", "-a", f"seeds={CORNELL}", "-a", "query=course",
                       settings={"FOCUS_REPLAY_WARC": str(bad), "FOCUS_OUTPUT_DIR": str(tmp_path / "out")},
                       timeout=60)
    assert completed.returncode == 2
    assert last_line(completed).startswith(
        f"scrapy crawl: error: FOCUS_REPLAY_WARC {bad}: the replay server stopped at start-up (exit code 2): "
        f"replay: not a WARC file: {bad}"
    )


@pytest.fixture
def bad_files(tmp_path: Path) -> dict[str, Path]:
    not_warc = tmp_path / "pages.warc.gz"
    not_warc.write_text("these are not archived pages")
    labels = tmp_path / "labels.tsv"
    labels.write_text("http://a.example/\tcourse\nno tab on this line\n")
    return {"not_warc": not_warc, "labels": labels, "missing": tmp_path / "nowhere.warc.gz"}


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (
            ["train", "--labels", "{webkb_labels}", "--warc", "{not_warc}", "-o", "{tmp}/m.npz", "--cache-dir", ""],
            "scrapy train: error: not a WARC file: {not_warc} (it does not start with a WARC record)",
        ),
        (
            ["train", "--labels", "{webkb_labels}", "--warc", "{missing}", "-o", "{tmp}/m.npz"],
            "scrapy train: error: no such file: {missing}",
        ),
        (
            ["topics", "--warc", "{webkb_warc}", "--labels", "{labels}", "-o", "{tmp}/t.jsonl"],
            "scrapy topics: error: line 2 of {labels}: expected url<TAB>category, got ['no tab on this line']",
        ),
        (
            [
                "evaluate",
                "--warc",
                "{webkb_warc}",
                "--labels",
                "{webkb_labels}",
                "--topics",
                "{missing}",
                "{tmp}",
                "-o",
                "{tmp}/e.json",
            ],
            "scrapy evaluate: error: no such file: {missing}",
        ),
        (
            ["replay", "--warc", "{not_warc}", "--port", "0"],
            "replay: not a WARC file: {not_warc} (it does not start with a WARC record)",
        ),
        (["replay", "--warc", "{missing}", "--port", "0"], "replay: no such file: {missing}"),
    ],
)
def test_commands_say_what_is_wrong_with_their_input(
    tmp_path: Path, bad_files: dict[str, Path], command: list[str], message: str
) -> None:
    values = {**{k: str(v) for k, v in bad_files.items()}, "tmp": str(tmp_path),
              "webkb_labels": str(WEBKB_LABELS), "webkb_warc": str(WEBKB_WARC)}
    completed = scrapy(*[part.format(**values) for part in command], timeout=120)
    assert completed.returncode == 2, completed.stderr[-2000:]
    assert last_line(completed) == message.format(**values)
    assert "Traceback" not in completed.stderr


def test_topics_warn_of_queries_without_a_meaningful_word(tmp_path: Path) -> None:
    cache = str(ROOT / ".cache")
    # WebKB's course pages and its catch-all "other/misc": training on all 8,103 pages would cost a minute
    rows = WEBKB_LABELS.read_text(encoding="utf-8").splitlines()
    kept = [row for row in rows[1:] if row.split("\t")[1].startswith("course/") or row.endswith("\tother/misc")]
    labels = tmp_path / "labels.tsv"
    labels.write_text("\n".join([rows[0], *kept]) + "\n", encoding="utf-8")
    topics = scrapy("topics", "--warc", str(WEBKB_WARC), "--labels", str(labels),
                    "-o", str(tmp_path / "t.jsonl"), "--cache-dir", cache, timeout=300)
    assert topics.returncode == 0, topics.stderr[-2000:]
    warned = [line for line in topics.stderr.splitlines() if line.startswith("warning: topic")]
    assert warned == [
        "warning: topic other-misc (other/misc): its query 'misc' has no meaningful word (only stopwords or "
        "catch-all words like 'misc'): a query-driven crawler cannot use it"
    ]
    # train and topics count a labelled corpus the same way
    train = scrapy("train", "--labels", str(labels), "--warc", str(WEBKB_WARC), "-o", str(tmp_path / "m.npz"),
                   "--holdout", "0", "--cache-dir", cache, timeout=300)
    assert train.returncode == 0, train.stderr[-2000:]
    assert topics.stdout.splitlines()[0] == train.stdout.splitlines()[0]
    assert len(kept) == 1610
    assert topics.stdout.splitlines()[0].startswith("1574 labelled pages in 6 categories")


# -- 4. progress a person can read -------------------------------------------------------------


def test_a_short_crawl_shows_its_progress(webkb_replay: ReplayProcess, tmp_path: Path) -> None:
    result = run_crawl(
        "bestfirst", tmp_path, UNIVERSITY_HOMES, webkb_replay.proxy_url, "course",
        settings={"CLOSESPIDER_ITEMCOUNT": 100, "FOCUS_LABELS": str(WEBKB_LABELS), "FOCUS_RELEVANT": "course"},
    )
    assert result.returncode == 0, result.log[-2000:]
    lines = [line for line in result.log.splitlines() if "Progress:" in line]
    assert len(lines) >= 8
    assert "10/100 pages (10%)" in lines[0]
    assert all("pages/s" in line and "harvest" in line and "frontier" in line for line in lines[1:])


# -- the README, followed verbatim ---------------------------------------------------------------


def test_the_readme_topic_spider_section_works_as_written(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Your own topic spider", 1)[1].split("\n## ", 1)[0]
    blocks = section.split("```")
    python_source = next(b for b in blocks if b.startswith("python\n"))[len("python\n"):]
    commands = next(b.strip() for b in blocks[1::2] if not b.startswith("python")).splitlines()
    project = tmp_path / "checkout"
    shutil.copytree(ROOT, project, ignore=shutil.ignore_patterns(".venv", ".git", "crawls", ".cache", "bench"))
    (project / ".venv").symlink_to(ROOT / ".venv")
    (project.parent / "shared").symlink_to(ROOT.parent / "shared")
    (project / "crawlproject/spiders/courses.py").write_text(python_source, encoding="utf-8")
    environment = {**os.environ, "PYTHONPATH": ""}
    outputs = []
    for command in commands:
        completed = subprocess.run(command, shell=True, cwd=project, capture_output=True, text=True,  # noqa: S602
                                   timeout=300, env=environment)
        assert completed.returncode == 0, (command, completed.stderr[-3000:])
        outputs.append(completed)
    assert "courses" in outputs[0].stdout.split()
    exported = (project / "courses.jsonl").read_text().splitlines()
    assert len(exported) >= 100
    folders = list((project / "crawls").glob("courses-*"))
    assert len(folders) == 1 and (folders[0] / "summary.json").exists()
    assert "Progress:" in outputs[1].stderr
