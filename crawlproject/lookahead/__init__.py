"""Learning to look ahead (SPEC §2; issue 15): what a link leads to, learnt
from the link graph and labels of earlier crawls or corpora.

* :mod:`.graph` — layers before the targets, discounted values of links.
* :mod:`.training` — a training graph (pages, labels, links with their
  anchors and context) from a corpus or a crawl's WARC.
* :mod:`.context_graph` — Diligenti et al.'s layer classifier.
* :mod:`.link_value` — Rennie & McCallum's Q-value of a link, learnt offline
  and kept learning online.
"""
