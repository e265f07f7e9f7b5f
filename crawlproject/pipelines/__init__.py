"""Item pipelines: what a crawl leaves behind (docs/methods.md §1)."""
