# crawlproject: `make demo` sets up and runs a focused crawl of the bundled
# corpus; `make test` sets up and runs the whole test suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CORPUS ?= ../shared/corpora/webkb
STAMP := $(VENV)/.installed
# Test processes (pytest-xdist): most tests wait on crawls, servers and
# subprocesses, so three share a 2-core machine well (a clean clone's `make test`:
# 18 min 11 s at 182 % CPU with three, 19 min 30 s at 168 % with two); a file stays
# on one process, and the longest files (tests/durations.json) are handed out first.
TEST_WORKERS ?= 3

.PHONY: setup demo test lint bench clean

setup: $(STAMP)

$(STAMP): requirements.txt requirements-dev.txt pyproject.toml
	command -v redis-server >/dev/null && command -v chromedriver >/dev/null && command -v prometheus >/dev/null || { apt-get update -qq && apt-get install -y -qq redis-server chromium chromium-driver prometheus; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt
	# the project itself, as a package: its Scrapy commands (entry points) and the add-on
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(STAMP)

demo: setup
	$(BIN)/python -m scripts.demo --corpus $(CORPUS)

lint: setup
	$(BIN)/ruff check crawlproject tests bench scripts
	$(BIN)/mypy crawlproject
	$(BIN)/lint-imports

test: setup lint
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder
	# Scrapy's own scheduler and engine tests, with our scheduler as Scrapy's
	$(BIN)/python -m scripts.scrapy_contract --workers $(TEST_WORKERS)

# Reproduces the frontier and throughput tables of BENCHMARKS.md, with the
# arguments recorded there (each script rewrites its own section).
bench: setup
	$(BIN)/python -m bench.frontier --sizes 10000,100000,1000000 --repeats 3
	$(BIN)/python -m bench.throughput --corpus $(CORPUS) --pages 1000 --repeats 7 --long-pages 11000

clean:
	rm -rf crawls .pytest_cache .mypy_cache .ruff_cache
