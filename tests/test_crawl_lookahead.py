"""The look-ahead crawlers end to end: `scrapy train --kind …` on the real
WebKB corpus, real crawls of the replayed corpus with each, and the errors
a user gets for bad input."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from crawlproject.models.layer_classifier import ContextGraphModel
from crawlproject.models.link_value_model import LinkValueModel
from crawlproject.policy.scope import site_of
from crawlproject.strategies.infospiders import DEAD_PENALTY
from tests.conftest import ROOT, UNIVERSITY_HOMES, WEBKB_LABELS, WEBKB_WARC, run_crawl


def train(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603
        [
            sys.executable,
            "-m",
            "scrapy",
            "train",
            "--labels",
            str(WEBKB_LABELS),
            "--cache-dir",
            str(ROOT / ".cache"),
            *args,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("lookahead")
    found = {}
    for kind, extra in (("context-graph", []), ("link-value", ["--value-scope", "domain"])):
        path = folder / f"{kind}.npz"
        done = train("--warc", str(WEBKB_WARC), "--kind", kind, "--good", "course", "-o", str(path), *extra)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "targets (course)" in done.stdout and f"{kind} model written" in done.stdout
        found[kind] = path
    return found


def crawl(spider: str, folder: Path, proxy: str, pages: int, extra: list[str], **settings: Any) -> Any:
    result = run_crawl(
        spider, folder, UNIVERSITY_HOMES, proxy,
        settings={"FOCUS_OK_PAGECOUNT": pages, "FOCUS_STORE_PAGES": "false", **settings}, extra_args=extra,
    )
    assert result.returncode == 0, result.log[-3000:]
    return result


def test_context_graph_crawl_pops_the_nearest_layer_first(
    models: dict[str, Path], webkb_replay: Any, tmp_path: Path
) -> None:
    model = ContextGraphModel.load(models["context-graph"])
    assert model.depth == 3 and int(model.report["pages_per_layer"]["0"]) > 500  # WebKB has ~900 course pages
    result = crawl("contextgraph", tmp_path, webkb_replay.proxy_url, 120, ["-a", f"model={models['context-graph']}"])
    pages = [r for r in result.history if r["status"] == 200]
    assert len(pages) >= 120
    assert all(0.0 <= r["relevance"] <= 1.0 for r in pages if r["relevance"] is not None)
    # a link's score is −layer + confidence of the page it was found on
    scores = [r["score"] for r in result.history if r["score"] is not None]
    assert all(-model.other <= s < 1 for s in scores)
    assert any(s > 0 for s in scores)  # links of pages placed in layer 0 were followed


def test_link_value_crawl_keeps_learning(models: dict[str, Path], webkb_replay: Any, tmp_path: Path) -> None:
    model = LinkValueModel.load(models["link-value"])
    assert model.report["links_per_bin"][0] > sum(model.report["links_per_bin"][1:])  # most links lead nowhere
    assert model.value_scope == "domain"  # --value-scope: each site's own course pages count
    result = crawl("linkvalue", tmp_path, webkb_replay.proxy_url, 120, ["-a", f"model={models['link-value']}"])
    assert result.summary.get("focused", {}).get("link_value/learned", 0) > 50
    assert (
        result.summary["focused"].get("link_value/sibling_raises", 0) > 0
    )  # siblings of links that proved their worth
    off = crawl("linkvalue", tmp_path / "off", webkb_replay.proxy_url, 60, ["-a", f"model={models['link-value']}"],
                FOCUS_LINK_VALUE_ONLINE="false")
    assert "link_value/learned" not in off.summary.get("focused", {})
    assert "link_value/sibling_raises" not in off.summary.get("focused", {})


def test_infospiders_crawl_runs_a_population(webkb_replay: Any, tmp_path: Path) -> None:
    result = crawl("infospiders", tmp_path, webkb_replay.proxy_url, 150, ["-a", "query=course syllabus homework"],
                   FOCUS_INFOSPIDERS_AGENTS=4)
    pages = [r for r in result.history if r["status"] == 200]
    assert len(pages) >= 150
    assert any(r["relevance"] and r["relevance"] > 0 for r in pages)  # pages sharing the query's words
    stats = result.summary["focused"]
    born, died = stats.get("infospiders/born", 0), stats.get("infospiders/died", 0)
    assert stats["infospiders/alive"] == 4 + born - died >= 1  # the population's books balance


def test_a_site_bound_crawl_spends_its_pages_at_home(
    models: dict[str, Path], webkb_replay: Any, tmp_path: Path
) -> None:
    """From the four department homes, a topic bound to one university —
    a context graph trained with --value-scope domain --home, InfoSpiders
    with FOCUS_HOME — crawls that university; the same crawls without a
    home spread over all four."""
    texas = "http://www.cs.utexas.edu/"
    model = tmp_path / "cg-texas.npz"
    done = train("--warc", str(WEBKB_WARC), "--kind", "context-graph", "--good", "course", "--value-scope", "domain",
                 "--home", texas, "-o", str(model))
    assert done.returncode == 0, done.stderr[-2000:]

    def pages(result: Any) -> list[dict[str, Any]]:
        found = [r for r in result.history if r["status"] == 200 and r["url"] not in UNIVERSITY_HOMES]
        assert len(found) >= 90
        return found

    def at_home(records: list[dict[str, Any]]) -> float:
        return sum(site_of(r["url"], "domain") == "utexas.edu" for r in records) / len(records)

    proxy = webkb_replay.proxy_url
    # One page at a time (FOCUS_REPEATABLE): where a crawl goes must not hang on
    # which of its concurrent fetches answered first (it did under CI's load).
    same = {"FOCUS_REPEATABLE": True}
    bound = pages(crawl("contextgraph", tmp_path / "cg", proxy, 100, ["-a", f"model={model}"], **same))
    unbound = pages(crawl("contextgraph", tmp_path / "cg-open", proxy, 100, ["-a", f"model={models['context-graph']}"],
                          **same))
    query = ["-a", "query=course syllabus homework"]
    spiders = pages(crawl("infospiders", tmp_path / "is", proxy, 100, query, FOCUS_HOME=texas, **same))
    spiders_open = pages(crawl("infospiders", tmp_path / "is-open", proxy, 100, query, **same))
    # every page off home came by a link queued below every link at home: at
    # "other" with confidence 0, or dropped with the dead agents' links …
    other = ContextGraphModel.load(model).other
    assert all(r["score"] == -other for r in bound if site_of(r["url"], "domain") != "utexas.edu")
    assert all(r["score"] < -DEAD_PENALTY / 2 for r in spiders if site_of(r["url"], "domain") != "utexas.edu")
    # … so the crawl stays home: all but its first fetches, which may take the
    # links of a seed away from home that arrived before Texas' (all there was)
    later = {name: at_home(records[50:]) for name, records in (
        ("cg", bound), ("cg-open", unbound), ("is", spiders), ("is-open", spiders_open))}
    assert later["cg"] >= 0.9 and at_home(unbound) < 0.5, later
    assert later["is"] > later["is-open"] + 0.2, later  # agents away from home starve


def test_bad_lookahead_input_gets_clear_errors(models: dict[str, Path], webkb_replay: Any, tmp_path: Path) -> None:
    done = train("--warc", str(WEBKB_WARC), "--kind", "link-value", "-o", str(tmp_path / "m.npz"))
    assert done.returncode != 0 and "needs --good" in done.stderr
    done = train(
        "--warc", str(WEBKB_WARC), "--kind", "context-graph", "--good", "nosuchcategory", "-o", str(tmp_path / "m.npz")
    )
    assert done.returncode != 0 and "nothing to learn from" in done.stderr
    done = train("--pages", str(tmp_path), "--kind", "context-graph", "--good", "course", "-o", str(tmp_path / "m.npz"))
    assert done.returncode != 0 and "give --warc" in done.stderr
    done = train(
        "--warc", str(WEBKB_WARC), "--kind", "link-value", "--good", "course", "--value-scope", "site", "-o", "m.npz"
    )
    assert done.returncode != 0 and "invalid choice: 'site'" in done.stderr
    done = train(
        "--warc", str(WEBKB_WARC), "--kind", "link-value", "--good", "course", "--home", "http://x.edu/", "-o", "m.npz"
    )
    assert done.returncode != 0 and "give --value-scope domain|host too" in done.stderr
    for spider, args, message in (
        ("linkvalue", [], "needs a model"),
        ("linkvalue", ["-a", f"model={models['context-graph']}"], "not a crawlproject/link-value/5 model"),
        ("contextgraph", ["-a", f"model={tmp_path / 'missing.npz'}"], "does not exist"),
    ):
        result = run_crawl(spider, tmp_path / spider, UNIVERSITY_HOMES, webkb_replay.proxy_url, extra_args=args)
        assert result.returncode != 0 and message in result.log, result.log[-2000:]


def test_context_graph_from_a_search_index_backlink_queries(webkb_replay: Any, tmp_path: Path) -> None:
    """Diligenti et al. built layers with a search engine's backlink
    queries: a crawl indexed with FOCUS_INDEX_DIR serves as that engine."""
    index = tmp_path / "index"
    crawl("breadthfirst", tmp_path / "crawl", webkb_replay.proxy_url, 200, [], FOCUS_INDEX_DIR=str(index),
          FOCUS_INDEX_COMMIT_PAGES=50)
    model_path = tmp_path / "cg.npz"
    done = train(
        "--index", str(index), "--kind", "context-graph", "--good", "course", "--depth", "2", "-o", str(model_path)
    )
    assert done.returncode == 0, done.stderr[-2000:]
    model = ContextGraphModel.load(model_path)
    layers = {int(k): v for k, v in model.report["pages_per_layer"].items()}
    assert layers[0] > 0 and layers[1] > 0  # course pages and pages linking to them, by backlinks
    assert sum(layers.values()) >= 200  # every indexed page with text: a layer or "other"
    wrong = train("--index", str(index), "--kind", "link-value", "--good", "course", "-o", str(tmp_path / "lv.npz"))
    assert wrong.returncode != 0 and "no anchors" in wrong.stderr
    missing = train(
        "--index", str(tmp_path / "nothing"), "--kind", "context-graph", "--good", "course", "-o", str(model_path)
    )
    assert missing.returncode != 0 and "not a search index" in missing.stderr
