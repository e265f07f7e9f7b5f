"""The topical search engine that lives in symbiosis with the crawler (docs/methods.md §4).

* :mod:`~crawlproject.search.document` — what the engine keeps of a fetched
  page: title, text, and the terms near each of its links (its *votes* for
  the pages it links to);
* :mod:`~crawlproject.search.collection` — one collection: the pages, the
  link graph and the votes in SQLite, and the full-text index in tantivy
  (BM25 over three fields: the reference-directed vote field, the text,
  the title); incremental: votes for pages not fetched yet wait for them;
* :mod:`~crawlproject.search.engine` — an index folder whose current
  collection is swapped atomically, searched with snippets and backlinks;
* :mod:`~crawlproject.search.server` — the search page and the JSON API;
* :mod:`~crawlproject.search.symbiosis` — the nightly loop: the users'
  queries choose the seeds, best-first crawls refocus the collection.

Why tantivy: an embedded library (no server to run), BM25, on-disk segments
and atomic commits, with readers that keep answering while a writer
commits; its Python bindings accept our own terms (the crawler's analyzer:
Unicode tokens, stopwords, Porter stems), so the engine and the crawler
agree on what a term is. Whoosh is unmaintained; Lucene and Elasticsearch
need a JVM or a server.
"""
