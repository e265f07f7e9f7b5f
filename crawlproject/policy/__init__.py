"""What a crawl may fetch: the network-safety policy (:mod:`.netsafety`),
URL admission (:mod:`.admission`: one refusal function for every place
that checks a URL) and the crawl's scope and home sites (:mod:`.scope`)."""
