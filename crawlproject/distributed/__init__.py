"""Several crawl processes on one Redis, laid out as scrapy-redis is: the
shared frontier (:mod:`.frontier`) and its Lua scripts (:mod:`.scripts`),
politeness shared across workers (:mod:`.politeness`) and seeds fed
through a Redis list (:mod:`.seeds`)."""
