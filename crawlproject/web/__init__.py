"""The web as the crawler sees it — the lowest layer: URLs and their
canonical keys (:mod:`.urls`), a fetched page and its links (:mod:`.page`),
the words around a link (:mod:`.linkcontext`), text into terms
(:mod:`.text`), which responses are pages (:mod:`.content`) and the request
meta keys every layer above shares (:mod:`.meta`)."""
