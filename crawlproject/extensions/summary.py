"""The summary a crawl ends with (logged, and written to ``summary.json``):
what was fetched, what the frontier and the policies did, what the strategy
and its judge did, and — with labels — the true harvest and the judge's
precision by them. Read from the counts CrawlProgress keeps while the crawl
runs (crawlproject.extensions.progress) and the crawl's stats."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from crawlproject.corpus.output import CrawlOutput, earlier_runs
from crawlproject.strategies.factory import focus_of

if TYPE_CHECKING:
    from crawlproject.extensions.progress import CrawlProgress
    from crawlproject.strategies.factory import Focus

_FOCUSED_STATS = (
    "focus/classify/", "focus/hard/", "focus/distiller/", "focus/learning/", "focus/link_value/", "focus/infospiders/",
    "focus/learner/",
)


def crawl_summary(progress: CrawlProgress) -> dict[str, Any]:
    """What the crawl did, from *progress*'s counts and the crawl's stats."""
    elapsed = max(time.monotonic() - progress.started, 1e-9)
    stats = progress.crawler.stats
    assert stats is not None
    spider = progress.crawler.spider
    fetched, ok_pages, status_counts = progress.fetched, progress.ok_pages, dict(progress.status_counts)
    focus = focus_of(progress.crawler)
    strategy = getattr(spider, "strategy_label", None) or (focus.strategy.name if focus is not None else None)
    if not progress.fetched and progress.responses:  # a plain spider: its responses are its pages
        failed = stats.get_value("downloader/exception_count", 0) - stats.get_value(
            "robotstxt/exception_count", 0)
        status_counts = dict(progress.responses) | ({"failed": failed} if failed > 0 else {})
        fetched = sum(status_counts.values())
        ok_pages = sum(n for status, n in progress.responses.items() if status.startswith("2"))
        strategy = strategy or "priority order, as Scrapy's scheduler (a spider without a strategy)"
    earlier = earlier_runs(spider) if spider is not None else None
    result: dict[str, Any] = {
        "spider": spider.name if spider else None,
        # -a strategy_label=… names a variant (e.g. a batch size) in reports
        "strategy": strategy,
        "topic_id": getattr(spider, "topic_id", None),
        "task": getattr(spider, "task", None),
        "query": getattr(spider, "query", None) or None,
        "pages_fetched": fetched,
        "pages_ok": ok_pages,
        # the crawl's, across the runs of its JOBDIR (this run's above)
        "crawl_pages_fetched": fetched + (earlier.pages if earlier else 0),
        "crawl_pages_ok": ok_pages + (earlier.ok if earlier else 0),
        "status_counts": status_counts,
        "elapsed_seconds": round(elapsed, 3),
        "pages_per_second": round(fetched / elapsed, 2),
        "frontier_queued": stats.get_value("frontier/queued"),
        "frontier_evicted": stats.get_value("frontier/evicted", 0),
        "frontier_spilled": stats.get_value("frontier/spilled", 0),
        "robots_forbidden": stats.get_value("robotstxt/forbidden", 0),
        "urls_refused": {
            key.rsplit("/", 1)[1]: value
            for key, value in stats.get_stats().items()
            if key.startswith("focus/url_refused/")
        },
        "pages_truncated": stats.get_value("focus/page/truncated", 0),
        "scope": getattr(getattr(spider, "crawl_scope", None), "mode", None),
    }
    output = getattr(spider, "crawl_output", None)
    if isinstance(output, CrawlOutput) and output.resumed:
        # counts above are this run's; the history numbers on from the last
        result["resumed_after_pages"] = output.next_order - 1
    # What the strategy did: the focused crawler's classifier, distiller and
    # learner; the link-value learner; the InfoSpiders population.
    focused = {
        key.removeprefix("focus/"): value
        for key, value in stats.get_stats().items()
        if key.startswith(_FOCUSED_STATS)
    }
    if focused:
        result["focused"] = dict(sorted(focused.items()))
    for section in ("sitemap", "near_duplicates"):  # what sitemaps gave; mirrors and copies met
        found = {
            key.removeprefix(f"focus/{section}/"): value
            for key, value in stats.get_stats().items() if key.startswith(f"focus/{section}/")
        }
        if found:
            result[section + ("s" if section == "sitemap" else "")] = dict(sorted(found.items()))
    if progress.labels is not None:
        result["relevant_categories"] = list(progress.relevant)
        result["relevant_pages"] = progress.relevant_pages
        result["harvest_rate"] = (
            round(progress.relevant_pages / progress.ok_pages, 4) if progress.ok_pages else 0.0
        )
    if progress.relevance_count:
        result["mean_relevance"] = round(progress.relevance_sum / progress.relevance_count, 4)
    if focus is not None and focus.judge is not None:  # its verdicts: how many pages it called relevant, and how sure
        settled = stats.get_value("focus/verdicts/relevant")
        changed = bool(stats.get_value("focus/verdicts/changed"))  # calls made again at the crawl's end
        # its final calls, over the whole crawl (crawlproject.corpus.collection), else this run's
        result["relevant_called"] = progress.called_relevant if settled is None else settled
        if changed:
            result["relevant_called_when_fetched"] = progress.called_relevant
        result["judge"] = focus.describe()
        if progress.labels is not None:
            result["judge_by_labels"] = judge_by_labels(progress, focus, changed)
    if focus is not None and progress.remaining.fetches:
        final = progress.estimate_remaining() or progress.last_remaining
        if final is not None:
            result["remaining"] = final.as_dict() | {"from": progress.remaining_from}
            result["remaining_history"] = progress.remaining_history
    indexed = stats.get_value("search/indexed")
    if indexed is not None:  # FOCUS_INDEX_DIR: what the search index got
        result["pages_indexed"] = indexed
    return result

def judge_by_labels(progress: CrawlProgress, focus: Focus, settled: bool) -> dict[str, Any]:
    """How many of the judge's relevant calls (final: *settled* when the
    crawl's verdicts were called again) the labels say are relevant: its
    precision measured, beside the one it states."""
    from crawlproject.models.intervals import wilson

    called = right = 0
    for relevance, when_fetched, labelled in progress.labelled_verdicts.values():
        if focus.calls(relevance) if settled else when_fetched:
            called += 1
            right += labelled
    found: dict[str, Any] = {"called": called, "labelled_relevant": right}
    if called:
        low, high = wilson(right, called)
        found |= {"precision": round(right / called, 4), "low": round(low, 4), "high": round(high, 4)}
    return found
