"""What a user runs: the demo and a distributed crawl (``.venv/bin/python -m scripts.demo``)."""
