"""The replay proxy, for real, over the WebKB WARC and hand-made WARCs."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from crawlproject.replay.archive import WarcArchive
from crawlproject.replay.process import ReplayError, ReplayProcess
from tests.conftest import ROOT, WEBKB_WARC, html, write_warc


def fetch(proxy: str, url: str) -> tuple[int, dict[str, str], bytes]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": proxy}))
    try:
        with opener.open(url, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_serves_archived_status_headers_and_body(webkb_replay: ReplayProcess) -> None:
    archive = WarcArchive(WEBKB_WARC)
    urls = list(archive.urls())[:200:20]
    expected_responses = [archive.lookup(url) for url in urls]
    archive.close()
    for url, expected in zip(urls, expected_responses):
        assert expected is not None
        status, headers, body = fetch(webkb_replay.proxy_url, url)
        assert status == expected.status
        assert body == expected.body
        assert headers["Content-Length"] == str(len(expected.body))
        assert headers.get("Content-Type") == dict(expected.headers).get("Content-Type")


def test_unknown_url_is_404_and_canonical_spelling_is_found(webkb_replay: ReplayProcess) -> None:
    assert fetch(webkb_replay.proxy_url, "http://not-in-the-corpus.example/x")[0] == 404
    # The archive has http://www.cs.utk.edu (no slash) and Cornell's home page.
    assert fetch(webkb_replay.proxy_url, "http://WWW.CS.UTK.EDU:80/")[0] == 200
    assert fetch(webkb_replay.proxy_url, "http://www.cs.cornell.edu/index.html#x")[0] == 200


def test_connect_to_port_80_tunnels_plain_http(webkb_replay: ReplayProcess) -> None:
    # Playwright's own fetch (the renderer's, middlewares.render) tunnels http URLs through a
    # proxy with CONNECT host:80; the replay spoke TLS in every tunnel, so the fetch hung up
    import http.client

    host, port = webkb_replay.proxy_url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    connection.set_tunnel("www.cs.cornell.edu", 80)
    connection.request("GET", "/index.html")
    response = connection.getresponse()
    assert response.status == 200 and b"Cornell" in response.read()
    connection.close()


def test_robots_default_allows_all(webkb_replay: ReplayProcess) -> None:
    status, _, body = fetch(webkb_replay.proxy_url, "http://www.cs.wisc.edu/robots.txt")
    assert status == 200 and b"Disallow:\n" in body and b"Disallow: /" not in body


def test_robots_rules_per_host_from_json(tmp_path: Path) -> None:
    warc = write_warc(tmp_path / "t.warc.gz", [("http://a.test/", 200, [("Content-Type", "text/html")], html("a"))])
    rules = tmp_path / "robots.json"
    rules.write_text(
        json.dumps({"a.test": "User-agent: *\nDisallow: /private/\n", "*": "User-agent: *\nDisallow: /\n"})
    )
    with ReplayProcess(str(warc), robots=str(rules)) as replay:
        assert b"/private/" in fetch(replay.proxy_url, "http://a.test/robots.txt")[2]
        assert b"Disallow: /\n" in fetch(replay.proxy_url, "http://other.test/robots.txt")[2]


def test_latency_is_applied(tmp_path: Path) -> None:
    import time

    warc = write_warc(tmp_path / "t.warc.gz", [("http://a.test/", 200, [("Content-Type", "text/html")], html("a"))])
    with ReplayProcess(str(warc), latency_ms=300) as replay:
        started = time.monotonic()
        assert fetch(replay.proxy_url, "http://a.test/")[0] == 200
        assert time.monotonic() - started >= 0.3


def test_missing_warc_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ReplayError, match=r"stopped at start-up \(exit code 2\): replay: no such file: "):
        ReplayProcess(str(tmp_path / "missing.warc.gz"), startup_timeout=30)


@contextmanager
def replay_command(warc: Path) -> Iterator[tuple[str, list[str]]]:
    """`scrapy replay --warc WARC` running: its proxy URL, and once stopped
    its stderr lines (in the list yielded with it)."""
    process = subprocess.Popen(  # noqa: S603
        [sys.executable, "-m", "scrapy", "replay", "--warc", str(warc), "--port", "0"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    stderr: list[str] = []
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("REPLAY READY"), process.stderr.read() if process.stderr else line
        yield f"http://127.0.0.1:{int(line.split('port=')[1].split()[0])}", stderr
    finally:
        process.terminate()
        stderr.extend(process.communicate(timeout=20)[1].splitlines())  # also closes the pipes


def test_scrapy_replay_command_serves_until_stopped() -> None:
    with replay_command(WEBKB_WARC) as (proxy, _):
        assert fetch(proxy, "http://www.cs.cornell.edu/")[0] == 200


def test_https_pages_replay_under_their_own_urls(tmp_path: Path) -> None:
    # A WARC of today's web is https; the replay answered CONNECT with 501,
    # so every https page was a failed fetch.
    from tests.conftest import run_crawl

    warc = write_warc(tmp_path / "secure.warc.gz", [
        ("https://secure.test/", 200, [("Content-Type", "text/html")],
         html('<a href="/a.html">a</a> <a href="https://secure.test:8443/b.html">b</a> '
              '<a href="http://plain.test/">plain</a> <a href="https://gone.test/">gone</a>')),
        ("https://secure.test/a.html", 200, [("Content-Type", "text/html")], html("page a")),
        ("https://secure.test:8443/b.html", 200, [("Content-Type", "text/html")], html("page b")),
        ("http://plain.test/", 200, [("Content-Type", "text/html")], html("plain page")),
    ])
    result = run_crawl(
        "breadthfirst", tmp_path / "crawl", ["https://secure.test/"], None, None, {"FOCUS_REPLAY_WARC": str(warc)},
    )
    assert result.returncode == 0, result.log[-3000:]
    status = {row["url"]: row["status"] for row in result.history}
    assert status == {
        "https://secure.test/": 200, "https://secure.test/a.html": 200, "https://secure.test:8443/b.html": 200,
        "http://plain.test/": 200, "https://gone.test/": 404,
    }, status
    assert " ERROR: " not in result.log
    assert "certificate is not valid" not in result.log  # a certificate per host, naming it


def _cut_warc(tmp_path: Path, gzip: bool) -> tuple[Path, list[str]]:
    """A WARC of three pages cut off inside its third record's body, as a
    full disk or an interrupted copy leaves it; the URLs of the pages."""
    import os

    from warcio.archiveiterator import ArchiveIterator

    pages = [
        (f"http://cut.test/{n}", 200, [("Content-Type", "text/html")], html(os.urandom(4000).hex())) for n in range(3)
    ]
    whole = write_warc(tmp_path / "whole.warc.gz", pages)
    if not gzip:  # the same records, uncompressed
        import gzip as gz

        whole = tmp_path / "whole.warc"
        whole.write_bytes(gz.decompress((tmp_path / "whole.warc.gz").read_bytes()))
    with whole.open("rb") as f:
        iterator = ArchiveIterator(f)
        offsets = [iterator.get_record_offset() for _ in iterator]
    cut = tmp_path / f"cut{''.join(whole.suffixes)}"
    data = whole.read_bytes()
    cut.write_bytes(data[: offsets[2] + (len(data) - offsets[2]) * 2 // 3])
    return cut, [url for url, *_ in pages]


@pytest.mark.parametrize("gzip", [True, False])
def test_a_warc_cut_off_inside_a_record_is_said_and_its_torn_page_not_served(tmp_path: Path, gzip: bool) -> None:
    # Warcio ends its iteration at a torn record without a
    # word, and the replay served the first part of the archive as if whole.
    cut, urls = _cut_warc(tmp_path, gzip)
    with replay_command(cut) as (proxy, stderr):
        assert [fetch(proxy, url)[0] for url in urls] == [200, 200, 404]
    warnings = [line for line in stderr if "is cut off" in line]
    assert len(warnings) == 1, stderr[-20:]
    assert (
        f"{cut} is cut off: it ends inside a record, so only the 2 complete responses before it are read" in warnings[0]
    )
    assert not any("Traceback" in line for line in stderr)


def test_pages_read_from_a_cut_off_warc_are_the_whole_ones_and_the_cut_is_said(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from crawlproject.corpus.reader import archived_pages

    cut, urls = _cut_warc(tmp_path, gzip=True)
    with caplog.at_level("WARNING"):
        read = [url for url, _ in archived_pages(cut)]
    assert read == urls[:2]
    assert [r.message for r in caplog.records if "is cut off" in r.message] == [
        f"{cut} is cut off: it ends inside a record, so only the 2 complete responses before it are read"
        " and the rest of the archive is missing; copy or write the file again"
    ]


def test_a_warc_is_scanned_once_and_its_cached_index_says_what_the_scan_said(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A replay of WebKB spent 2 s scanning the WARC at every start (each
    crawl with FOCUS_REPLAY_WARC, each crawl of a symbiosis night). The index
    is cached: the second open reads no record, and a cut-off file is still
    said to be cut off."""
    import crawlproject.replay.archive as archive_module

    cut, urls = _cut_warc(tmp_path, gzip=True)
    cache = tmp_path / "cache"
    WarcArchive(cut, cache_dir=cache).close()
    assert len(list(cache.glob("warc-index-*.pickle"))) == 1

    def no_scan(*args: object) -> None:
        raise AssertionError("the WARC was scanned again")

    monkeypatch.setattr(archive_module, "ArchiveIterator", no_scan)
    caplog.clear()
    with caplog.at_level("WARNING"):
        again = WarcArchive(cut, cache_dir=cache)
    assert list(again.urls()) == urls[:2] and again.cut_off
    assert sum("is cut off" in r.message for r in caplog.records) == 1
    again.close()
    monkeypatch.undo()
    # A file written again is a new file: scanned, not read from the old index.
    pages = [("http://new.test/", 200, [("Content-Type", "text/html")], html("new"))]
    write_warc(cut, pages)
    rewritten = WarcArchive(cut, cache_dir=cache)
    assert list(rewritten.urls()) == ["http://new.test/"] and not rewritten.cut_off
    rewritten.close()


def test_a_cache_that_cannot_be_written_is_a_warning_not_a_bad_warc(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    """The index cache's own failures — a cache folder that cannot be made,
    a write that fails on a full disk — were reported as "not a WARC file":
    the replay did not start. The WARC is read all the same, with one warning
    each time, and nothing half-written is left."""
    import crawlproject.replay.archive as archive_module

    warc = tmp_path / "ok.warc.gz"
    write_warc(warc, [("http://ok.test/", 200, [("Content-Type", "text/html")], html("ok"))])
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    with caplog.at_level("WARNING"):
        archive = WarcArchive(warc, cache_dir=blocked / "cache")  # its folder cannot be made
    assert list(archive.urls()) == ["http://ok.test/"]
    archive.close()
    assert sum("Cannot write the cache" in r.message for r in caplog.records) == 1
    # a full disk: the cache's temporary file is /dev/full, where every write fails (ENOSPC)
    cache = tmp_path / "cache"
    cache.mkdir()
    name = f"warc-index-{archive_module.file_key(archive_module._index_version(), warc)}"
    (cache / f"{name}.tmp").symlink_to("/dev/full")
    caplog.clear()
    with caplog.at_level("WARNING"):
        archive = WarcArchive(warc, cache_dir=cache)
    assert list(archive.urls()) == ["http://ok.test/"]
    archive.close()
    assert [r.message for r in caplog.records if "Cannot write the cache" in r.message]
    assert sorted(path.name for path in cache.iterdir()) == [f"{name}.lock"]  # no cache, no temporary file


def test_a_replay_from_a_scrapyd_egg_caches_its_index(tmp_path: Path) -> None:
    """Scrapyd runs the project from an egg, a zip: the index's cache key
    read this module's source through its file path, which a zip has not,
    and every replay started from an egg failed as "not a WARC file"."""
    import zipfile

    egg = tmp_path / "project.egg"
    with zipfile.ZipFile(egg, "w") as archive:
        for path in (ROOT / "crawlproject").rglob("*.py"):
            archive.write(path, path.relative_to(ROOT).as_posix())
    cut, urls = _cut_warc(tmp_path, gzip=True)
    code = ("import sys; from pathlib import Path; from crawlproject.replay.archive import WarcArchive; "
            "assert '.egg' in sys.modules['crawlproject'].__file__; "
            f"print(list(WarcArchive({str(cut)!r}, cache_dir=Path({str(tmp_path / 'cache')!r})).urls()))")
    done = subprocess.run(  # noqa: S603
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(egg), "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == repr(urls[:2])
    assert len(list((tmp_path / "cache").glob("warc-index-*.pickle"))) == 1
