"""Scrapy middlewares: the crawler's manners (docs/methods.md §1)."""
