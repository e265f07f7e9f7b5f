"""What the crawler learns, apart from the strategies that turn a model's
verdict into link scores (crawlproject.strategies):

* :mod:`.taxonomy`, :mod:`.taxonomy_classifier` — the category tree and the
  hierarchical naive Bayes page classifier (docs/methods.md §2, Chakrabarti et al.);
  :mod:`.online` its learning from the crawl; :mod:`.examples` training
  examples and the held-out report;
* :mod:`.distiller` — the HITS distiller's hubs over the crawled graph;
* :mod:`.graph`, :mod:`.training_graph` — layers and discounted values over a
  link graph, and the training graph from a corpus or crawl;
* :mod:`.context_graph` — Diligenti et al.'s layer classifier;
* :mod:`.link_value`, :mod:`.page_classifier` — Rennie & McCallum's learned
  link value;
* :mod:`.modelfile` — model files as arrays and JSON, never pickle.
"""
