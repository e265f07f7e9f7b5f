"""Spiders: one per strategy, all sharing FocusedSpider (subclass it per topic)."""
