"""Scrapy's own scheduler and engine tests, run against our scheduler.

A project that enables the add-on runs every spider on the frontier
scheduler, so Scrapy's tests of its scheduler, engine and crawl loop are our
contract. This fetches the test suite of the installed Scrapy release (its
source distribution, from the package index, once: kept in ``.scrapy-tests/``)
and runs the files below with :mod:`scripts.scrapy_contract_plugin`, which
makes :class:`~crawlproject.frontier.scheduler.FrontierScheduler` the
scheduler everywhere.

    .venv/bin/python -m scripts.scrapy_contract            # what make test runs
    .venv/bin/python -m scripts.scrapy_contract -- -k dont_filter -x
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Scrapy's test files that exercise the scheduler: the scheduler itself, the
#: engine and its loop, crawls end to end, start requests, closing, budgets.
FILES = (
    "test_scheduler.py",
    "test_scheduler_base.py",
    "test_crawl.py",
    "test_engine.py",
    "test_engine_loop.py",
    "test_engine_close_spider.py",
    "test_engine_download.py",
    "test_engine_stop_download_bytes.py",
    "test_engine_stop_download_headers.py",
    "test_closespider.py",
    "test_dupefilters.py",
    "test_spider_start.py",
    "test_spidermiddleware_start.py",
    "test_spidermiddleware_process_start.py",
    "test_spidermiddleware_output_chain.py",
    "test_request_cb_kwargs.py",
    "test_request_left.py",
    "test_request_attribute_binding.py",
    "test_downloaderslotssettings.py",
    "test_pipeline_crawl.py",
)

#: Tests of Scrapy's own scheduler internals, not of the scheduler contract.
EXCEPTED = {
    "tests/test_scheduler.py::TestMigration::test_migration":
        "the on-disk state of Scrapy's DownloaderAwarePriorityQueue from older releases",
    "tests/test_scheduler.py::TestIncompatibility::test_incompatibility":
        "DownloaderAwarePriorityQueue's refusal of CONCURRENT_REQUESTS_PER_IP",
    "tests/test_scheduler.py::test_scheduler_without_crawler":
        "Scheduler(dupefilter) with no crawler: our scheduler is built from a crawler",
    "tests/test_engine_close_spider.py::test_exception_scheduler":
        "deletes Scheduler.dqs, an attribute only Scrapy's scheduler has",
}


def scrapy_tests(cache: Path) -> Path:
    """The installed Scrapy release's tests, downloaded once into *cache*."""
    release = version("scrapy")
    folder = cache / release
    if (folder / "tests").is_dir():
        return folder
    with tempfile.TemporaryDirectory() as download:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
             f"scrapy=={release}", "-d", download],
            check=True,
        )
        (archive,) = Path(download).glob("*.tar.gz")
        partial = cache / f"{release}.partial"
        with tarfile.open(archive) as tar:
            prefix = f"scrapy-{release}/"
            members = [
                member for member in tar.getmembers()
                if member.name.startswith(prefix)
                and member.name[len(prefix):].split("/")[0] in ("tests", "conftest.py", "pyproject.toml")
            ]
            for member in members:
                member.name = member.name[len(prefix):]
            tar.extractall(partial, members=members, filter="data")
        partial.rename(folder)
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, default=ROOT / ".scrapy-tests")
    parser.add_argument("--workers", default="2", help="pytest-xdist processes")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args(argv)
    folder = scrapy_tests(args.cache)
    command = [
        sys.executable, "-m", "pytest", "-p", "scripts.scrapy_contract_plugin", "-p", "no:cacheprovider",
        "-n", args.workers, "-q", "--timeout", "300",
        *(f"tests/{name}" for name in FILES),
        *(f"--deselect={test}" for test in EXCEPTED),
        *args.pytest_args,
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    print(f"Scrapy {version('scrapy')}'s own tests with crawlproject's scheduler ({len(FILES)} files, "
          f"{len(EXCEPTED)} tests of Scrapy's internals excepted)", flush=True)
    return subprocess.run(command, cwd=folder, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
