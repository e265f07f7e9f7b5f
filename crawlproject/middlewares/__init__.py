"""Scrapy middlewares: the crawler's manners (SPEC §1)."""
