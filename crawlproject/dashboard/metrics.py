"""Prometheus metrics of a crawl (prometheus_client, the text exposition
format), from the same state the dashboard shows, so the two never disagree.

Names follow Prometheus's conventions (``_total`` counters, base units), each
with ``spider`` and ``worker`` labels so that the workers of a Redis crawl,
scraped one port each, sum up in a query: ``sum by (spider)
(crawl_pages_total)``. docs/dashboard.md has an example scrape config.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from prometheus_client.metrics_core import Metric


class CrawlCollector:
    """A custom collector: every scrape reads fresh snapshots — one worker's
    (a crawl serving its own), or every worker's (``scrapy dashboard --redis``)."""

    def __init__(self, states: Callable[[], list[dict[str, Any]]], spider: str):
        self.states = states
        self.spider = spider

    def collect(self) -> Iterator[Metric]:
        families: dict[str, Metric] = {}
        for state in self.states():
            for family in self._families(state):
                known = families.setdefault(family.name, family)
                if known is not family:
                    known.samples.extend(family.samples)
        yield from families.values()

    def _families(self, state: dict[str, Any]) -> Iterator[Metric]:
        labels = {"spider": self.spider, "worker": state["worker"]}
        names, values = list(labels), list(labels.values())
        pages = state["pages"]

        def counter(name: str, help_text: str, value: float) -> CounterMetricFamily:
            family = CounterMetricFamily(name, help_text, labels=names)
            family.add_metric(values, value)
            return family

        def gauge(name: str, help_text: str, value: float) -> GaugeMetricFamily:
            family = GaugeMetricFamily(name, help_text, labels=names)
            family.add_metric(values, value)
            return family

        statuses = CounterMetricFamily("crawl_pages", "Pages fetched (failed fetches: status=\"failed\")",
                                       labels=[*names, "status"])
        for status, count in sorted(state["statuses"].items()):
            statuses.add_metric([*values, status], count)
        yield statuses
        yield counter("crawl_pages_ok", "Pages answered 2xx", pages["ok"])
        yield counter("crawl_dead_links", "Links that led to no page (4xx/5xx or a failed fetch)", pages["dead"])
        relevant = CounterMetricFamily("crawl_relevant_pages", "Relevant pages, by the crawl's own judge "
                                       "(its calls, at the threshold in force), by FOCUS_LABELS, by the user's labels",
                                       labels=[*names, "by"])
        relevant.add_metric([*values, "judge"], pages["judged_relevant"])
        if pages["labelled_relevant"] is not None:
            relevant.add_metric([*values, "labels"], pages["labelled_relevant"])
        relevant.add_metric([*values, "user"], state["labels"]["relevant"])
        yield relevant
        yield counter("crawl_relevance_sum", "Sum of the crawl's own relevance verdicts", pages["relevance_sum"])
        yield gauge("crawl_harvest_ratio", "Relevant over pages answered 2xx (by FOCUS_LABELS when given, else by "
                    "the judge: the progress line's harvest)", pages["harvest"])
        yield gauge("crawl_judged_harvest_ratio", "Relevant by the crawl's own judge over pages answered 2xx",
                    pages.get("judged_harvest", pages["harvest"]))
        yield gauge("crawl_pages_per_second", "Pages per second over the last minute", state["rates"]["1min"])
        yield gauge("crawl_frontier_queued", "URLs queued in the frontier", state["frontier"]["queued"])
        refused = CounterMetricFamily("crawl_refused_urls", "URLs refused (robots.txt, scope, network safety, traps)",
                                      labels=[*names, "reason"])
        for reason, count in sorted(state["refusals"].items()):
            refused.add_metric([*values, reason], count)
        yield refused
        yield counter("crawl_politeness_waits", "Requests held back for a host's turn", state["politeness"]["waits"])
        yield counter(
            "crawl_user_labels", "Pages the user labelled", state["labels"]["relevant"] + state["labels"]["irrelevant"]
        )
        yield gauge("crawl_finished", "1 once the crawl has ended", 1.0 if state["finished"] else 0.0)
