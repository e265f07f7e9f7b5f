"""The replay of a web that changes: the PHP manual's 52 weekly
states served as of a time t, the clock moved while serving, and conditional
requests answered with 304 — checked against the corpus's own versions.tsv."""

from __future__ import annotations

import csv
import hashlib
import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections import defaultdict
from collections.abc import Iterator
from datetime import timedelta
from email.utils import format_datetime, parsedate_to_datetime
from pathlib import Path
from typing import Any

import pytest

from crawlproject.replay.archive import format_time, parse_time
from crawlproject.replay.process import ReplayProcess
from tests.conftest import ROOT, run_crawl

EVOLVING = ROOT.parent / "shared" / "corpora" / "phpdoc-evolving"
WARC = EVOLVING / "evolving.warc.gz"
START = "2020-10-19T00:00:00Z"


@pytest.fixture(scope="module")
def versions() -> dict[str, list[dict[str, str]]]:
    """versions.tsv: URL → its versions, oldest first."""
    if not WARC.is_file():
        pytest.fail(f"the phpdoc-evolving corpus is missing at {EVOLVING}; put ../shared beside the repo")
    by_url: dict[str, list[dict[str, str]]] = defaultdict(list)
    with (EVOLVING / "versions.tsv").open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            by_url[row["url"]].append(row)
    return {url: sorted(rows, key=lambda row: int(row["version_index"])) for url, rows in by_url.items()}


@pytest.fixture(scope="module")
def replay() -> Iterator[ReplayProcess]:
    with ReplayProcess(str(WARC), as_of=START) as process:
        yield process


def fetch(proxy: str, url: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": proxy}))
    request = urllib.request.Request(url, headers={name.replace("_", "-"): value for name, value in headers.items()})
    try:
        with opener.open(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def changed_page(versions: dict[str, list[dict[str, str]]], count: int) -> tuple[str, list[dict[str, str]]]:
    return next(
        (url, rows) for url, rows in sorted(versions.items()) if len(rows) >= count and rows[0]["live_from"] == START
    )


def test_each_version_is_served_from_the_time_it_went_live(replay: ReplayProcess, versions: Any) -> None:
    url, rows = changed_page(versions, 3)
    for row in rows:
        moment = parse_time(row["live_from"])
        for t in (moment, moment + 3600):  # live from that second on
            replay.clock(t)
            status, headers, body = fetch(replay.proxy_url, url)
            assert status == 200 and hashlib.sha1(body).hexdigest() == row["body_sha1"], (url, row)  # noqa: S324
            assert headers["ETag"] == f'"{row["body_sha1"]}"'
        if row["version_index"] != "0":
            replay.clock(moment - 1)  # one second before: still the previous version
            assert hashlib.sha1(fetch(replay.proxy_url, url)[2]).hexdigest() != row["body_sha1"]  # noqa: S324


def test_pages_created_and_deleted_inside_the_window(replay: ReplayProcess, versions: Any) -> None:
    created = next(
        url for url, rows in sorted(versions.items()) if rows[0]["live_from"] > START and rows[0]["body_sha1"]
    )
    deleted = next(url for url, rows in sorted(versions.items()) if rows[-1]["live_until"])  # its last version ends
    born = parse_time(versions[created][0]["live_from"])
    replay.clock(born - 60)
    assert fetch(replay.proxy_url, created)[0] == 404  # not yet on the web
    replay.clock(born)
    assert fetch(replay.proxy_url, created)[0] == 200
    last = versions[deleted][-1]
    gone = parse_time(last["live_until"])
    replay.clock(gone - 60)
    assert fetch(replay.proxy_url, deleted)[0] == 200
    replay.clock(gone)
    assert fetch(replay.proxy_url, deleted)[0] == 404


def test_conditional_requests_get_304_until_the_page_changes(replay: ReplayProcess, versions: Any) -> None:
    url, rows = changed_page(versions, 2)
    replay.clock(START)
    status, headers, body = fetch(replay.proxy_url, url)
    etag, modified = headers["ETag"], headers["Last-Modified"]
    status, headers, body = fetch(replay.proxy_url, url, If_None_Match=etag)
    assert (status, body) == (304, b"") and headers["ETag"] == etag and "Content-Type" not in headers
    assert fetch(replay.proxy_url, url, If_None_Match=f'"nope", W/{etag}')[0] == 304  # a list, weak comparison
    assert fetch(replay.proxy_url, url, If_None_Match="*")[0] == 304
    assert fetch(replay.proxy_url, url, If_Modified_Since=modified)[0] == 304
    a_day_before = format_datetime(parsedate_to_datetime(modified) - timedelta(days=1), usegmt=True)
    assert fetch(replay.proxy_url, url, If_Modified_Since=a_day_before)[0] == 200
    # If-None-Match decides when both are sent (RFC 9110 §13.2.2): a different tag means 200.
    assert fetch(replay.proxy_url, url, If_None_Match='"other"', If_Modified_Since=modified)[0] == 200
    assert fetch(replay.proxy_url, url, If_Modified_Since="not a date")[0] == 200
    replay.clock(parse_time(rows[1]["live_from"]))  # the page changed
    status, headers, body = fetch(replay.proxy_url, url, If_None_Match=etag, If_Modified_Since=modified)
    assert status == 200 and hashlib.sha1(body).hexdigest() == rows[1]["body_sha1"]  # noqa: S324
    assert fetch(replay.proxy_url, url, If_Modified_Since=headers["Last-Modified"])[0] == 304


def test_the_clock_reads_and_refuses_bad_times(replay: ReplayProcess) -> None:
    state = replay.clock("2021-03-01")
    assert state["as_of"] == "2021-03-01T00:00:00Z" and state["dated"] is True
    assert state["first_record"] == START and str(state["last_record"]).startswith("2021-10")
    assert replay.clock()["as_of"] == "2021-03-01T00:00:00Z"
    with pytest.raises(ValueError, match="not a time: 'next tuesday'"):
        replay.clock("next tuesday")
    assert replay.clock()["as_of"] == "2021-03-01T00:00:00Z"  # unchanged
    assert format_time(parse_time("1614556800")) == "2021-03-01T00:00:00Z"


def test_a_bad_as_of_stops_the_replay_and_the_crawl_with_one_line(tmp_path: Path) -> None:
    started = subprocess.run([sys.executable, "-m", "crawlproject.replay", "--warc", str(WARC), "--as-of", "yesterday"],  # noqa: S603
                             capture_output=True, text=True, timeout=60)
    assert started.returncode == 2 and "not a time: 'yesterday'" in started.stderr
    crawl = subprocess.run([sys.executable, "-m", "scrapy", "crawl", "breadthfirst", "-a", "seeds=http://www.php.net/",  # noqa: S603
                            "-s", f"FOCUS_REPLAY_WARC={WARC}", "-s", "FOCUS_REPLAY_AS_OF=soon",
                            "-s", f"FOCUS_OUTPUT_DIR={tmp_path / 'crawl'}"],
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert crawl.returncode != 0 and "FOCUS_REPLAY_AS_OF: not a time: 'soon'" in crawl.stderr
    assert "Traceback" not in crawl.stderr


def test_a_crawl_as_of_a_date_fetches_that_dates_versions(versions: Any, tmp_path: Path) -> None:
    as_of = "2021-05-01T00:00:00Z"
    moment = parse_time(as_of)
    result = run_crawl("breadthfirst", tmp_path / "crawl", ["http://www.php.net/manual/en/index.php"], None,
                       settings={"FOCUS_REPLAY_WARC": str(WARC), "FOCUS_REPLAY_AS_OF": as_of,
                                 "CLOSESPIDER_ITEMCOUNT": 120})
    assert result.returncode == 0, result.log[-2000:]
    pages = [json.loads(line) for line in (tmp_path / "crawl" / "pages.jsonl").read_text().splitlines()]
    checked = 0
    for page in pages:
        rows = versions.get(page["url"])
        if page["status"] != 200 or not rows:
            continue
        live = [row for row in rows if parse_time(row["live_from"]) <= moment][-1]
        body = (tmp_path / "crawl" / page["file"]).read_bytes()
        assert hashlib.sha1(body).hexdigest() == live["body_sha1"], page["url"]  # noqa: S324
        checked += 1
    assert checked >= 100


DEDUP_BODY = b"<html><body>the schedule <a href='http://b.test/'>b</a></body></html>"


def dedup_warc(path: Path) -> Path:
    """A deduplicating crawler's WARC: a response of a.test, then revisit
    records — a.test again and mirror.test (same payload, by digest), b.test
    "not modified" (by URL and date) — and one whose response is elsewhere."""
    from io import BytesIO

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    def http(status: str, date: str) -> StatusAndHeaders:
        return StatusAndHeaders(status, [("Content-Type", "text/html"), ("Date", date)], protocol="HTTP/1.1")

    def response(uri: str, body: bytes) -> Any:
        return writer.create_warc_record(
            uri, "response", payload=BytesIO(body), length=len(body),
            http_headers=http("200 OK", "Mon, 01 Mar 2021 00:00:00 GMT"),
            warc_headers_dict={"WARC-Date": "2021-03-01T00:00:00Z"},
        )

    with path.open("wb") as f:
        writer = WARCWriter(f, gzip=True)
        first = response("http://a.test/", DEDUP_BODY)
        writer.write_record(first)
        writer.write_record(response("http://b.test/", b"b page"))
        digest = first.rec_headers.get_header("WARC-Payload-Digest")
        for uri, status, refers, by in (
            ("http://a.test/", "200 OK", "http://a.test/", digest),  # fetched again: same payload
            ("http://mirror.test/", "200 OK", "http://a.test/", digest),  # another URL, same payload
            ("http://b.test/", "304 Not Modified", "http://b.test/", "sha1:NOTTHEDIGEST"),  # by URL and date
            ("http://elsewhere.test/", "200 OK", "http://elsewhere.test/", "sha1:MISSING"),  # another WARC's
        ):
            writer.write_record(writer.create_revisit_record(
                uri, by, refers, "2021-03-01T00:00:00Z",
                http_headers=http(status, "Mon, 08 Mar 2021 00:00:00 GMT"),
                warc_headers_dict={"WARC-Date": "2021-03-08T00:00:00Z"},
            ))
    return path


def test_revisit_records_replay_with_the_payload_they_repeat(tmp_path: Path) -> None:
    # A deduplicating crawler (Heritrix, wget --warc-dedup) writes "revisit"
    # records without a body; the replay indexed only responses, so such a
    # capture was a 404, or an older version as of its date.
    from crawlproject.replay.archive import WarcArchive

    path = dedup_warc(tmp_path / "dedup.warc.gz")
    archive = WarcArchive(path)
    later = parse_time("2021-03-09")
    again = archive.lookup("http://a.test/", as_of=later)
    assert again is not None and again.body == DEDUP_BODY and ("Date", "Mon, 08 Mar 2021 00:00:00 GMT") in again.headers
    mirror = archive.lookup("http://mirror.test/")
    assert mirror is not None and mirror.status == 200 and mirror.body == DEDUP_BODY
    unchanged = archive.lookup("http://b.test/", as_of=later)
    assert unchanged is not None and (unchanged.status, unchanged.body) == (200, b"b page")
    assert archive.lookup("http://elsewhere.test/") is None and archive.unresolved_revisits == 1
    archive.close()
    with ReplayProcess(path) as replay:  # and served so, through the proxy
        proxy = urllib.request.ProxyHandler({"http": replay.proxy_url})
        with urllib.request.build_opener(proxy).open("http://mirror.test/", timeout=10) as answer:
            assert answer.status == 200 and answer.read() == DEDUP_BODY


def test_a_corpus_read_from_a_deduplicating_warc_holds_its_revisited_pages(tmp_path: Path) -> None:
    # Training and evaluation read a WARC as the replay serves it: the page
    # only a revisit record holds (mirror.test) was missing.
    from crawlproject.corpus.reader import archived_pages

    pages = dict(archived_pages(dedup_warc(tmp_path / "dedup.warc.gz")))
    assert set(pages) == {"http://a.test/", "http://b.test/", "http://mirror.test/"}
    mirror = pages["http://mirror.test/"]
    assert mirror is not None and "the schedule" in mirror.text and [link.key for link in mirror.links] == ["http://b.test/"]
