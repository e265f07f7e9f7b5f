"""A query judge calibrated on the crawl's own pages (issue 50 §2): its
cosine is no probability, and a fixed 0.5 called none of the 109 relevant
pages of docsweb's gnuplot topic relevant though the crawl fetched them all."""

from __future__ import annotations

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
    assert result.summary["judge"]["precision"]["basis"] == "calibration"
    assert result.summary["remaining"]["found"] > 0.5 * len(relevant)  # "left" is estimated, not "unknown"
