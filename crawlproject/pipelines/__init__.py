"""Item pipelines: what a crawl leaves behind (SPEC §1)."""
