"""Pages on disk: labels files (:mod:`.labels`), a labelled WARC corpus read
once and cached (:mod:`.reader`), and a crawl's own output folder
(:mod:`.output`)."""
