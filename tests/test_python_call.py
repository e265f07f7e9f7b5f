"""crawlproject.crawl(…): a crawl from Python returns the
same pages as `scrapy crawl` with the same settings, with their text and
verdicts; a second call in the same process (Twisted runs once) too; a
crawl that cannot start says why in one exception."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from crawlproject.replay.process import ReplayProcess
from tests.conftest import (
    FAST_REPLAY_SETTINGS,
    ROOT,
    UNIVERSITY_HOMES,
    WEBKB_WARC,
    examples_crawl_script,
    run_crawl,
)

QUERY = "course syllabus homework"
#: a user's script, in a folder of its own: this checkout's crawlproject
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
BUDGET = 25


def settings(proxy: str) -> dict[str, Any]:
    # one request at a time: the crawl's order is the frontier's, the same in every run
    return {**FAST_REPLAY_SETTINGS, "FOCUS_REPLAY_PROXY": proxy, "CONCURRENT_REQUESTS": 1, "FOCUS_RANDOM_SEED": 1,
            "FOCUS_STORE_PAGES": False, "LOG_LEVEL": "WARNING"}


SCRIPT = """
import json, signal, sys
import crawlproject

settings, folder = json.loads(sys.argv[1]), sys.argv[2]
runs = []
def handlers():
    return signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)

for n in (1, 2):  # the second call: Twisted cannot run again in this process
    before = handlers()
    collection = crawlproject.crawl(seeds={seeds!r}, query={query!r}, budget={budget}, strategy="best-first",
                                    settings=settings, output_dir=f"{{folder}}/run{{n}}", progress=False)
    runs.append({{"pages": [[p["canonical_url"], p["relevance"], p["relevant"], p["title"], p.get("text")]
                            for p in collection],
                 "relevant": len(collection.relevant), "finish_reason": collection.finish_reason,
                 "folder": str(collection.folder), "summary_pages": collection.summary.get("pages_fetched"),
                 # the caller's own handlers after the call (Scrapy installs its own): Ctrl-C does
                 # to the program what it did before
                 "handlers_restored": handlers() == before, "handlers": [repr(h) for h in (*before, *handlers())]}})
print(json.dumps(runs))
"""


def test_the_python_call_returns_the_pages_scrapy_crawl_fetches_with_text_and_verdicts(tmp_path: Path) -> None:
    with ReplayProcess(str(WEBKB_WARC)) as replay:
        chosen = settings(replay.proxy_url)
        script = SCRIPT.format(seeds=UNIVERSITY_HOMES[:2], query=QUERY, budget=BUDGET)
        try:  # below the test's own timeout, so that a hang shows what the script printed
            completed = subprocess.run([sys.executable, "-c", script, json.dumps(chosen), str(tmp_path / "py")],  # noqa: S603
                                       cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=200)
        except subprocess.TimeoutExpired as hung:
            pytest.fail(f"the Python calls did not return in 200 s: {str(hung.stderr)[-3000:]}")
        assert completed.returncode == 0, completed.stderr[-3000:]
        first, second = json.loads(completed.stdout.splitlines()[-1])
        shell = run_crawl("focus", tmp_path / "shell", UNIVERSITY_HOMES[:2], replay.proxy_url, query=QUERY,
                          settings={**chosen, "CLOSESPIDER_PAGECOUNT": BUDGET, "FOCUS_COLLECTION": True},
                          extra_args=["-a", "strategy=best-first"])
    assert shell.returncode == 0, shell.log[-3000:]
    assert first["finish_reason"] == "closespider_pagecount" and len(first["pages"]) == BUDGET
    assert first["folder"] == str(tmp_path / "py" / "run1") and first["summary_pages"] == BUDGET
    # the same pages in the same order as `scrapy crawl`, with the same verdicts
    assert [(url, relevance) for url, relevance, *_ in first["pages"]] == \
        [(r["canonical_url"], r["relevance"]) for r in shell.history]
    assert [page[:2] for page in second["pages"]] == [page[:2] for page in first["pages"]]
    assert first["handlers_restored"] and second["handlers_restored"], (first["handlers"], second["handlers"])
    ok = [page for page in first["pages"] if page[3]]  # pages with a title: answered HTML
    assert ok and all(isinstance(relevant, bool) for _, _, relevant, _, _ in ok)
    assert sum(bool(text) for *_, text in ok) >= len(ok) // 2  # the main text of most pages
    assert first["relevant"] == sum(page[2] is True for page in first["pages"])


def test_a_python_call_that_cannot_start_raises_one_clear_error(tmp_path: Path) -> None:
    script = (  # twice: the second call's crawl runs in a child process, whose error the parent raises
        "import crawlproject\n"
        "for _ in range(2):\n"
        "    try:\n"
        "        crawlproject.crawl(seeds='http://example.test/', query='course', "
        "settings={'FOCUS_FRONTIER_MAX': 'lots',"
        " 'LOG_ENABLED': False}, output_dir='out', progress=False)\n"
        "    except crawlproject.CrawlError as error:\n"
        "        print('CrawlError:', error)\n"
    )
    completed = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=ENV, capture_output=True,  # noqa: S603
                               text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr[-3000:]
    lines = completed.stdout.splitlines()
    assert len(lines) == 2 and all(line.startswith("CrawlError: FOCUS_FRONTIER_MAX") for line in lines), \
        completed.stdout + completed.stderr[-2000:]
    assert "Traceback" not in completed.stderr


def test_a_python_call_with_example_pages_trains_its_topic_first(tmp_path: Path) -> None:
    # The gnuplot terminal pages of docsweb as the examples: `scrapy train --examples` makes the
    # topic model in the crawl's folder, and the crawl judges with it.
    script = examples_crawl_script(15, "[len(c), c.summary['judge']['judge'], c.finish_reason]",
                                   call=", progress=False", settings=", 'LOG_LEVEL': 'WARNING'")
    completed = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=ENV, capture_output=True,  # noqa: S603
                               text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]
    pages, judge, reason = json.loads(completed.stdout.splitlines()[-1])
    assert (tmp_path / "out" / "topic.npz").is_file()  # trained before the crawl, beside it
    assert pages == 15 and reason == "closespider_pagecount"
    assert judge != "query-tf" and "examples" in judge, judge


def test_a_script_without_a_main_guard_calls_crawl_twice_quietly(tmp_path: Path) -> None:
    """The README's snippet run from a file without ``if __name__ ==
    "__main__":`` — the second call's process ran the whole script again (its
    first crawl twice, 8.5 minutes), then failed; every call printed Scrapy's
    INFO log; ``collection[0]`` raised TypeError."""
    with ReplayProcess(str(WEBKB_WARC)) as replay:
        chosen = {**settings(replay.proxy_url)}
        chosen.pop("LOG_LEVEL")  # the call's own default: quiet
        (tmp_path / "script.py").write_text(
            "import crawlproject\n"
            f"for n in (1, 2):\n"
            f"    collection = crawlproject.crawl(seeds={UNIVERSITY_HOMES[:1]!r}, query={QUERY!r}, budget=8,"
            f" settings={chosen!r}, output_dir=f'out{{n}}', progress=False)\n"
            "    print('call', n, len(collection), collection[0]['url'], len(collection[1:3]),"
            " sum(1 for _ in collection), flush=True)\n"
        )
        completed = subprocess.run([sys.executable, "script.py"], cwd=tmp_path, env=ENV,  # noqa: S603
                                   capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr[-3000:]
    calls = completed.stdout.splitlines()
    assert [line.split()[:3] for line in calls] == [["call", "1", "8"], ["call", "2", "8"]], completed.stdout
    assert all(line.split()[3].startswith("http://") and line.split()[4:] == ["2", "8"] for line in calls)
    assert " INFO: " not in completed.stderr, completed.stderr[-2000:]
