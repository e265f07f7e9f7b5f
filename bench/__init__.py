"""The benchmarks and the evaluation harness: run as modules from the
checkout, ``.venv/bin/python -m bench.quality …``."""
