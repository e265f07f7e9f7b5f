"""Topic classification over a taxonomy (SPEC §2, the focused crawler).

* :mod:`~crawlproject.classify.taxonomy` — the category tree, any depth.
* :mod:`~crawlproject.classify.model` — hierarchical naive Bayes (scikit-learn),
  Pr(c|p) for every node, saved and loaded as arrays and JSON (.npz, no pickle).
* :mod:`~crawlproject.classify.training` — training examples from a labels file
  plus a WARC or a crawl's page repository, and the held-out report.
"""
