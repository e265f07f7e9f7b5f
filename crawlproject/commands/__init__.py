"""Scrapy commands of crawlproject (COMMANDS_MODULE): ``crawl`` (Scrapy's,
with one-line start-up errors), ``replay``, ``train``, ``topics``, ``evaluate``.
Their shared error handling is in crawlproject.commands._cli."""
