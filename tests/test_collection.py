"""The collection a crawl hands back: items with title,
language, verdict and the link that led there; with FOCUS_COLLECTION the
main text and Markdown of every page, relevant and irrelevant pages apart,
one Markdown file per relevant page; the WARC's metadata records."""

from __future__ import annotations

import json
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from crawlproject.replay.process import ReplayProcess
from tests.conftest import run_crawl, write_warc
from tests.test_replay_server import fetch

HTML = [("Content-Type", "text/html")]
QUERY = "gnuplot terminal driver"


def _page(title: str, heading: str, paragraphs: list[str], links: str = "", lang: str = "en") -> bytes:
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (f'<html lang="{lang}"><head><title>{title}</title></head><body><nav><a href="/">Home</a> '
            f'<a href="/about">About us</a></nav><main><h1>{heading}</h1>{body}<ul><li>first point</li>'
            f"<li>second point</li></ul></main>{links}<footer>Copyright the site</footer></body></html>").encode()


TOPICAL = [
    "The gnuplot terminal driver writes the plot to an output device: a terminal, a file, a window.",
    "Each gnuplot terminal driver has options of its own; set terminal chooses the driver.",
    "A terminal driver of gnuplot may draw lines, points and text in many ways.",
]


def _site(tmp_path: Path) -> Path:
    return write_warc(tmp_path / "site.warc.gz", [
        ("http://docs.test/", 200, HTML, _page(
            "Docs home", "Welcome", ["Pages about many things."],
            '<a href="/term">Terminal drivers of gnuplot</a> <a href="/cake">Baking a cake</a>')),
        ("http://docs.test/term", 200, HTML, _page("Gnuplot terminals", "Terminal drivers", TOPICAL,
                                                    '<a href="/term2">More gnuplot terminal drivers</a>')),
        ("http://docs.test/term2", 200, HTML, _page("More terminals", "Gnuplot terminal drivers", TOPICAL[::-1],
                                                     lang="en-GB")),
        ("http://docs.test/cake", 200, HTML, _page(
            "Baking", "A cake", ["Butter, sugar and flour are mixed and baked for an hour in a warm oven.",
                                 "The cake cools on a rack before it is cut and served with cream."], lang="")),
    ])


def test_items_carry_title_language_verdict_and_the_link_that_led_there(tmp_path: Path) -> None:
    with ReplayProcess(str(_site(tmp_path))) as replay:
        result = run_crawl("bestfirst", tmp_path / "out", ["http://docs.test/"], replay.proxy_url, query=QUERY,
                           settings={"FOCUS_COLLECTION": True, "FOCUS_WARC_OUTPUT": True})
    assert result.returncode == 0, result.log[-3000:]
    by_url = {record["url"]: record for record in result.history}
    term, cake = by_url["http://docs.test/term"], by_url["http://docs.test/cake"]
    assert term["title"] == "Gnuplot terminals" and term["language"] == "en"
    assert by_url["http://docs.test/term2"]["language"] == "en-gb"
    assert term["found_via"] == "Terminal drivers of gnuplot" and cake["found_via"] == "Baking a cake"
    assert by_url["http://docs.test/"]["found_via"] is None  # a seed
    assert term["relevant"] is True and cake["relevant"] is False
    assert term["relevant"] == (term["relevance"] >= 0.5)
    assert "text" not in term and "markdown" not in term  # the history stays one short line per page

    collection = tmp_path / "out" / "collection"
    relevant = [json.loads(line) for line in (collection / "relevant.jsonl").read_text().splitlines()]
    irrelevant = [json.loads(line) for line in (collection / "irrelevant.jsonl").read_text().splitlines()]
    assert {r["url"] for r in relevant} == {"http://docs.test/term", "http://docs.test/term2"}
    assert {r["url"] for r in irrelevant} == {"http://docs.test/", "http://docs.test/cake"}
    cake_page = next(r for r in irrelevant if r["url"] == "http://docs.test/cake")
    assert cake_page["language"] == cake["language"] == "en"  # it declares none: detected in its main text
    page = next(r for r in relevant if r["url"] == "http://docs.test/term")
    assert TOPICAL[1] in page["text"]
    assert "About us" not in page["text"] and "Copyright" not in page["text"]  # navigation and footer left out
    assert "- first point" in page["markdown"] and page["relevance"] == term["relevance"]
    assert not (collection / "irrelevant").exists()
    files = sorted((collection / "relevant").glob("*.md"))
    assert len(files) == 2
    text = next(f for f in files if "docs-test-term-" in f.name).read_text()
    head, _, markdown = text.removeprefix("---\n").partition("\n---\n")
    front = {line.split(": ", 1)[0]: json.loads(line.split(": ", 1)[1]) for line in head.splitlines()}
    assert front["title"] == "Gnuplot terminals" and front["relevant"] is True
    assert front["found_via"] == "Terminal drivers of gnuplot" and front["url"] == "http://docs.test/term"
    assert TOPICAL[0] in markdown

    # The WARC: each response has a metadata record beside it, with the verdict.
    warc = tmp_path / "out" / "crawl.warc.gz"
    responses, metadata = {}, {}
    with warc.open("rb") as f:
        for record in ArchiveIterator(f):
            if record.rec_type == "response":
                responses[record.rec_headers.get_header("WARC-Record-ID")] = record.rec_headers.get_header(
                    "WARC-Target-URI"
                )
            elif record.rec_type == "metadata":
                fields = dict(line.split(": ", 1) for line in record.content_stream().read().decode().splitlines())
                metadata[responses[record.rec_headers.get_header("WARC-Concurrent-To")]] = fields
    assert set(metadata) == set(by_url)
    assert metadata["http://docs.test/term"]["relevant"] == "true"
    assert metadata["http://docs.test/cake"]["anchor"] == "Baking a cake"
    assert float(metadata["http://docs.test/term"]["relevance"]) == term["relevance"]
    # and the crawl's WARC replays, its metadata records aside
    with ReplayProcess(str(warc)) as again:
        status, _, body = fetch(again.proxy_url, "http://docs.test/term")
    assert status == 200 and TOPICAL[0].encode() in body


def test_without_a_collection_items_carry_no_text_and_no_folder_is_made(tmp_path: Path) -> None:
    with ReplayProcess(str(_site(tmp_path))) as replay:
        result = run_crawl("breadthfirst", tmp_path / "out", ["http://docs.test/"], replay.proxy_url)
    assert result.returncode == 0, result.log[-3000:]
    assert all(record["relevant"] is None for record in result.history)  # no judge, no verdict
    assert {record["title"] for record in result.history} >= {"Docs home", "Baking"}
    assert not (tmp_path / "out" / "collection").exists()


def test_a_page_that_declares_no_language_gets_the_one_its_text_is_in() -> None:
    """WebKB's 1997 pages declare none: their items said language None (in a
    collection the page's main text is what is read: above)."""
    from scrapy.http import HtmlResponse

    from crawlproject.web.extract import language_of
    from crawlproject.web.page import Page

    def language(html: str, headers: dict[str, str] | None = None) -> str | None:
        response = HtmlResponse("http://u.test/", body=html.encode(), headers=headers or {}, encoding="utf-8")
        return language_of(response, Page.from_response(response).text)

    english = " ".join(TOPICAL)
    german = ("Der Treiber eines Terminals schreibt die Grafik auf ein Ausgabegerät, in eine Datei oder in ein "
              "Fenster. Jeder Treiber hat eigene Optionen, und der Befehl wählt den Treiber aus, der gebraucht wird.")
    assert language(f"<html><body><p>{english}</p></body></html>") == "en"
    assert language(f"<html><body><p>{german}</p></body></html>") == "de"
    assert language("<html><body><p>gnuplot terminal drivers</p></body></html>") is None  # too short to tell
    assert language(f'<html lang="fr"><body><p>{english}</p></body></html>') == "fr"  # what a page declares wins
    assert language(f"<html><body><p>{english}</p></body></html>", {"Content-Language": "en-US, de"}) == "en-us"


def test_settling_refiles_pages_whose_call_changed_and_keeps_a_line_it_cannot_read(tmp_path: Path) -> None:
    """The judge's final calls (crawlproject.corpus.collection.settle): a
    page moves between relevant and irrelevant with its Markdown file, keeps
    its first call, and a line cut short by a kill stays as it was."""
    from crawlproject.corpus.collection import file_name, settle, write_markdown

    def record(url: str, relevance: float, relevant: bool) -> dict[str, object]:
        return {"url": url, "canonical_url": url, "relevance": relevance, "relevant": relevant, "status": 200,
                "title": url, "markdown": f"# {url}"}

    pages = [record("http://a.test/1", 0.3, False), record("http://a.test/2", 0.1, True),
             record("http://a.test/3", 0.4, True)]
    (tmp_path / "history.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pages) + '{"url": "http://a.te\n')
    collection = tmp_path / "collection"
    collection.mkdir()
    (collection / "irrelevant.jsonl").write_text(json.dumps(pages[0]) + "\n")
    (collection / "relevant.jsonl").write_text(json.dumps(pages[1]) + "\n" + json.dumps(pages[2]) + "\n")
    for page in pages[1:]:
        write_markdown(collection, "relevant", page)

    refitted_on: list[list[float]] = []
    settled = settle(tmp_path, lambda met: refitted_on.append(met) is None, lambda relevance: relevance >= 0.25)

    assert refitted_on == [[0.3, 0.1, 0.4]]
    assert settled is not None and (settled.judged, settled.relevant, settled.changed) == (3, 2, 2)
    history = (tmp_path / "history.jsonl").read_text().splitlines()
    assert history[-1] == '{"url": "http://a.te'  # not a record: kept, not lost
    first = {r["url"]: r for r in map(json.loads, history[:-1])}
    assert [first[p["url"]]["relevant"] for p in pages] == [True, False, True]
    assert first["http://a.test/1"]["relevant_when_fetched"] is False
    assert "relevant_when_fetched" not in first["http://a.test/3"]
    relevant = [json.loads(line)["url"] for line in (collection / "relevant.jsonl").read_text().splitlines()]
    irrelevant = [json.loads(line)["url"] for line in (collection / "irrelevant.jsonl").read_text().splitlines()]
    assert (sorted(relevant), irrelevant) == (["http://a.test/1", "http://a.test/3"], ["http://a.test/2"])
    assert sorted(path.name for path in (collection / "relevant").glob("*.md")) == sorted(
        file_name(url) for url in relevant)
    assert "relevant: true" in (collection / "relevant" / file_name("http://a.test/1")).read_text()
    assert not list(tmp_path.rglob("*.settling"))


def test_a_collection_that_cannot_extract_stops_the_crawl_with_one_line(tmp_path: Path) -> None:
    """Installed by a pip that left lxml_html_clean out, trafilatura
    failed to import on every page — 300 tracebacks, no item, exit 0. Here
    the environment is as broken: a trafilatura that cannot be imported."""
    import subprocess
    import sys

    from tests.conftest import FAST_REPLAY_SETTINGS, ROOT, UNIVERSITY_HOMES, WEBKB_WARC

    broken = tmp_path / "broken" / "trafilatura"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text(
        "raise ImportError('lxml.html.clean module is now a separate project lxml_html_clean')\n")
    settings = {**FAST_REPLAY_SETTINGS, "FOCUS_REPLAY_WARC": str(WEBKB_WARC), "CLOSESPIDER_PAGECOUNT": 100,
                "FOCUS_COLLECTION": True, "FOCUS_OUTPUT_DIR": str(tmp_path / "out")}
    command = [sys.executable, "-m", "scrapy", "crawl", "bestfirst", "-a", f"seeds={UNIVERSITY_HOMES[0]}",
               "-a", "query=course"]
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    completed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=240,  # noqa: S603
                               env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{broken.parent}:{ROOT}"})
    assert completed.returncode == 1, completed.stderr[-3000:]
    said = "the collection could not extract the text of 10 pages in a row (ImportError: lxml.html.clean"
    assert completed.stderr.splitlines()[-1].startswith(f"scrapy crawl: error: {said}"), completed.stderr[-2000:]
    assert "Traceback" not in completed.stderr
    history = (tmp_path / "out" / "history.jsonl").read_text().splitlines()
    assert 10 <= len(history) < 100  # stopped early, and every page fetched is recorded
