"""A killed crawl's outputs: torn last lines and records are cut on resume,
never a parse error later."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from crawlproject.corpus.output import repair


def _warc_bytes(count: int) -> bytes:
    buffer = io.BytesIO()
    writer = WARCWriter(buffer, gzip=True)
    for i in range(count):
        body = f"<html>page {i} ".encode() * 50
        headers = StatusAndHeaders("200 OK", [("Content-Length", str(len(body)))], protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record(f"http://h/{i}", "response", payload=io.BytesIO(body),
                                                      length=len(body), http_headers=headers))
    return buffer.getvalue()


def test_torn_lines_and_records_are_cut_and_whole_ones_kept(tmp_path: Path) -> None:
    history = tmp_path / "history.jsonl"
    history.write_text("".join(json.dumps({"order": i}) + "\n" for i in range(1, 4)) + '{"order": 4, "ur')
    (tmp_path / "links.tsv").write_text("a\tb\tx\n")  # whole: untouched
    whole, torn = _warc_bytes(3), _warc_bytes(1)[:-25]
    (tmp_path / "crawl.warc.gz").write_bytes(whole + torn)
    cut = repair(tmp_path)
    assert cut == {"history.jsonl": len('{"order": 4, "ur'), "crawl.warc.gz": len(torn)}
    assert [json.loads(line)["order"] for line in history.read_text().splitlines()] == [1, 2, 3]
    assert (tmp_path / "links.tsv").read_text() == "a\tb\tx\n"
    with (tmp_path / "crawl.warc.gz").open("rb") as f:
        urls = [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(f)]
    assert urls == ["http://h/0", "http://h/1", "http://h/2"]
    assert gzip.decompress((tmp_path / "crawl.warc.gz").read_bytes())  # every member whole
    assert repair(tmp_path) == {}  # nothing more to cut


def test_a_history_torn_inside_its_only_line_is_emptied(tmp_path: Path) -> None:
    (tmp_path / "history.jsonl").write_text('{"order": 1, "url": "http://h/"')
    assert repair(tmp_path) == {"history.jsonl": 31}
    assert (tmp_path / "history.jsonl").read_text() == ""
