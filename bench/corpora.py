"""The bundled corpora's constants that the benchmarks, the demo and the tests share."""

#: The four universities' computer-science department home pages in WebKB:
#: the seeds of the demo, the throughput benchmark and the crawl tests.
WEBKB_DEPARTMENT_HOMES = (
    "http://www.cs.cornell.edu/",
    "http://www.cs.utexas.edu/",
    "http://www.cs.washington.edu/",
    "http://www.cs.wisc.edu/",
)
