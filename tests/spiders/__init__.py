"""Spiders the tests run with ``scrapy runspider`` (plain Scrapy spiders, not ours)."""
