"""Watching and steering a running crawl (docs/dashboard.md): the state a
crawl shows (:mod:`.watch`), its web server and page (:mod:`.server`,
``page.html``), its Prometheus metrics (:mod:`.metrics`) and the labels a
user gives it (:mod:`.labels`). The extension that serves them from the
crawl is crawlproject.extensions.dashboard; ``scrapy dashboard`` serves a
crawl read back from its folder or from Redis."""
