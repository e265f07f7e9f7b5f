"""Replay of archived web pages on 127.0.0.1 (an HTTP proxy over a WARC)."""
