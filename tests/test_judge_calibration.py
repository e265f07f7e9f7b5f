"""A query judge calibrated on the crawl's own pages: its
cosine is no probability, and a fixed 0.5 called none of the 109 relevant
pages of docsweb's gnuplot topic relevant though the crawl fetched them all."""

from __future__ import annotations

import json
import math
from pathlib import Path

from crawlproject.corpus.labels import is_relevant, load_labels
from crawlproject.judges.calibration import MIN_PAGES, CrawlCalibration
from tests.conftest import ROOT, run_crawl

DOCSWEB = ROOT.parent / "shared/corpora/docsweb"
TOPIC = "gnuplot/Gnuplot/Terminal types"
SEEDS = ["http://httpd.apache.org/docs/2.4/index.html", "http://www.sphinx-doc.org/en/5.3/index.html",
         "http://www.gnuplot.info/docs_5.4/index.html", "http://www.debian.org/doc/manuals/debian-handbook/index.html",
         "http://nodejs.org/docs/v18.20.4/api/index.html"]


def test_the_calibration_knows_nothing_before_it_has_pages_then_ranks_as_the_scores_do() -> None:
    calibration = CrawlCalibration()
    for n in range(MIN_PAGES - 1):
        calibration.observe(0.01 + 0.001 * n)
    assert calibration.probability(0.3) is None  # too few pages: the judge calls at its threshold
    for n in range(200):  # many pages with a few of the query's terms, some with many
        calibration.observe(0.02 + 0.0001 * n if n % 10 else 0.3 + 0.001 * n)
    probabilities = [calibration.probability(score) for score in (0.0, 0.02, 0.1, 0.3, 0.5, 0.9)]
    assert probabilities[0] == 0.0
    assert all(p is not None and 0 <= p <= 1 for p in probabilities)
    assert probabilities == sorted(probabilities)  # a higher score is never less likely relevant
    assert probabilities[1] < 0.5 < probabilities[-2] and not math.isnan(probabilities[-1])


def test_a_query_crawl_reports_the_relevant_pages_it_fetched_as_found(tmp_path: Path) -> None:
    result = run_crawl(
        "bestfirst", tmp_path / "out", SEEDS, None, query="gnuplot terminal driver output device",
        settings={"FOCUS_REPLAY_WARC": str(DOCSWEB / "docsweb.warc.gz"), "CLOSESPIDER_PAGECOUNT": 300,
                  "FOCUS_STORE_PAGES": False},
    )
    assert result.returncode == 0, result.log[-3000:]
    labels = load_labels(DOCSWEB / "labels.tsv")
    relevant = {r["canonical_url"] for r in result.history if is_relevant(labels.get(r["canonical_url"]), (TOPIC,))}
    assert len(relevant) >= 100  # the crawl fetches (nearly) all of them
    called = [r["canonical_url"] for r in result.history if r["relevant"]]
    right = sum(url in relevant for url in called)
    # with a fixed 0.5 the judge called none of them relevant (its highest relevance was 0.43)
    assert right >= 0.6 * len(relevant) and right >= 0.6 * len(called), (len(called), right, len(relevant))
    # the summary counts distinct pages: a near-duplicate of a page fetched before is no new one
    distinct = [r for r in result.history if r["relevant"] and not r.get("near_duplicate_of")]
    assert result.summary["relevant_called"] == len(distinct)
    # a mixture on cosines is no probability: it stated 91 % where the labels measured 36 %
    assert result.summary["judge"]["precision"] is None
    assert result.summary["remaining"]["found"] > 0.5 * len(relevant)  # "left" is estimated, not "unknown"


def test_pages_met_before_the_calibration_knew_are_called_again_when_the_crawl_ends(tmp_path: Path) -> None:
    """Seeds among the relevant pages: the crawl meets them first, before
    its calibration has the pages it fits on, and called them by a fixed 0.5
    none reaches. At the end the judge, fitted on all, calls them again, and
    the history, the collection and the summary say its final calls."""
    result = run_crawl(
        "bestfirst", tmp_path / "out", ["http://www.gnuplot.info/docs_5.4/node590.html",
                                         "http://www.gnuplot.info/docs_5.4/node627.html"],
        None, query="gnuplot terminal driver output device",
        settings={"FOCUS_REPLAY_WARC": str(DOCSWEB / "docsweb.warc.gz"), "CLOSESPIDER_PAGECOUNT": 120,
                  "FOCUS_COLLECTION": True},
    )
    assert result.returncode == 0, result.log[-3000:]
    labels = load_labels(DOCSWEB / "labels.tsv")
    early = [r for r in result.history if r.get("relevance") is not None][: MIN_PAGES - 1]
    early_relevant = [r for r in early if is_relevant(labels.get(r["canonical_url"]), (TOPIC,))]
    assert len(early_relevant) >= 10
    assert all(r.get("relevant_when_fetched") is False for r in early_relevant if r["relevant"])
    # as they were fetched: none (their cosine is below 0.5); 14 of 26 when this was written
    assert sum(r["relevant"] for r in early_relevant) >= 0.4 * len(early_relevant)
    collection = tmp_path / "out" / "collection"
    filed = {json.loads(line)["canonical_url"] for line in (collection / "relevant.jsonl").read_text().splitlines()}
    assert {r["canonical_url"] for r in early_relevant if r["relevant"]} <= filed
    assert not filed & {json.loads(line)["canonical_url"]
                        for line in (collection / "irrelevant.jsonl").read_text().splitlines()}
    assert len(list((collection / "relevant").glob("*.md"))) == len(filed)
    called = [r for r in result.history if r["relevant"] and not r.get("near_duplicate_of")]
    assert result.summary["relevant_called"] == len(called)
    assert result.summary["relevant_called_when_fetched"] < len(called)
