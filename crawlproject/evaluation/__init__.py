"""Evaluation of focused crawlers (docs/methods.md §3): topics from a labelled corpus,
metrics over crawl histories, significance across topics, reports."""
