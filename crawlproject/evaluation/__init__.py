"""Evaluation of focused crawlers (SPEC §3): topics from a labelled corpus,
metrics over crawl histories, significance across topics, reports."""
