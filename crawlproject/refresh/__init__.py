"""Re-crawling what users would notice: user-centric refresh scheduling
(docs/methods.md §5) and the baselines it is compared with.

* :mod:`~crawlproject.refresh.changes` — what changed between two versions
  of a page (5-word shingles, terms added and removed);
* :mod:`~crawlproject.refresh.estimate` — a page's change rate λ from what
  refreshes observed (Cho & Garcia-Molina's estimator for incomplete
  change histories);
* :mod:`~crawlproject.refresh.workload` — a query workload (``query<TAB>frequency``)
  and a generator that derives one from a corpus's own text;
* :mod:`~crawlproject.refresh.quality` — repository quality Q(W_L) against
  the live web;
* :mod:`~crawlproject.refresh.gain` — the gain ΔQ of a refresh: the per-term
  score→rank maps F_w, refitted from a term → score index kept beside the
  search collection;
* :mod:`~crawlproject.refresh.policies` — refresh policies, one class each
  (uniform, staleness-based, embarrassment-based, user-centric);
* :mod:`~crawlproject.refresh.simulate` — a repository refreshed week by
  week on a dated WARC, for the benchmark (and its state, handed to the
  refresh spider);
* :mod:`~crawlproject.refresh.state` — what the refresh spider keeps between runs.
"""
