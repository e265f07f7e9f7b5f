"""Crawling strategies: how the links of a fetched page are scored (SPEC §2)."""
