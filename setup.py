"""`scrapyd-deploy` builds the project's egg with `python setup.py bdist_egg`:
the metadata, package data and Scrapy's settings entry point are in
pyproject.toml."""

from setuptools import setup

setup()
