"""Replay of WARC files on 127.0.0.1: the web the tests, benchmarks and demo crawl."""

#: Scrapy settings for crawling a replay as fast as the machine allows. The
#: project's defaults are polite to real sites (crawlproject/settings.py);
#: a replay on loopback is nobody's site, so the demo, the benchmarks, the
#: evaluation runner and the tests pass these (robots.txt delays still hold).
LOOPBACK_SPEED: dict[str, str] = {"DOWNLOAD_DELAY": "0", "CONCURRENT_REQUESTS_PER_DOMAIN": "8"}
