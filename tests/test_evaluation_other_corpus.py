"""The whole quality pipeline, unchanged, on a corpus it was never developed
on: a generated web with a 3-level taxonomy, other hosts, other words."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, html, write_warc

LEAVES = ["arts/music/jazz", "arts/music/opera", "arts/film", "science/physics/optics", "science/biology"]
WORDS = {
    "jazz": "saxophone swing improvisation trumpet bebop",
    "opera": "aria soprano libretto tenor overture",
    "film": "cinema director screenplay actor camera",
    "optics": "lens photon laser refraction mirror",
    "biology": "cell protein enzyme gene organism",
}


def generated_corpus(folder: Path, pages_per_leaf: int = 14) -> tuple[Path, Path]:
    rng = random.Random(11)
    pages: dict[str, str] = {}
    for leaf in LEAVES:
        host = leaf.split("/")[-1] + ".example.org"
        for i in range(pages_per_leaf):
            pages[f"http://{host}/p{i}.html"] = leaf
    portal = "http://portal.example.net/"
    urls = list(pages)
    records, labels = [], ["url\tcategory"]
    for url, leaf in pages.items():
        same = [u for u in urls if pages[u] == leaf and u != url]
        targets = rng.sample(same, 3) + rng.sample(urls, 2) + ["http://gone.example.com/dead"]
        words = WORDS[leaf.split("/")[-1]]
        body = " ".join(f'<a href="{t}">{words.split()[j % 5]}</a>' for j, t in enumerate(targets))
        records.append((url, 200, [("Content-Type", "text/html")], html(f"<p>{words} {words}</p>{body}")))
        labels.append(f"{url}\t{leaf}")
    # a portal two links before everything: portal -> index pages -> leaves
    index_links = ""
    for leaf in LEAVES:
        index = f"http://portal.example.net/{leaf.replace('/', '-')}/"
        members = [u for u in urls if pages[u] == leaf][:4]
        records.append((index, 200, [("Content-Type", "text/html")],
                        html("".join(f'<a href="{m}">item</a>' for m in members))))
        labels.append(f"{index}\tportal")
        index_links += f'<a href="{index}">{leaf}</a>'
    records.append((portal, 200, [("Content-Type", "text/html")], html(index_links)))
    labels.append(f"{portal}\tportal")
    warc = write_warc(folder / "generated.warc.gz", records)
    (folder / "labels.tsv").write_text("\n".join(labels) + "\n")
    return warc, folder / "labels.tsv"


def test_quality_benchmark_runs_unchanged_on_another_corpus(tmp_path: Path) -> None:
    corpus = tmp_path / "generated"
    corpus.mkdir()
    generated_corpus(corpus)
    out, data = tmp_path / "results", tmp_path / "data"
    done = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "bench.quality", "--corpus", str(corpus), "--topics", "2", "--tasks", "1",
         "--budgets", "10,30", "--strategies", "breadth-first,best-first,path-oracle",
         "--no-write", "--out", str(out), "--data", str(data)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    topics = [json.loads(line) for line in (data / "topics.jsonl").read_text().splitlines()]
    assert len(topics) == 2
    assert (out / "topic-ids.txt").read_text().split() == [t["id"] for t in topics]
    result = json.loads((data / "eval.json").read_text())
    assert len((out / "per-topic.tsv").read_text().splitlines()) == 1 + len(result["crawls"]) * 2
    categories = {t["category"] for t in topics}
    assert categories <= {"arts", "arts/music", "arts/music/jazz", "arts/music/opera", "arts/film",
                          "science", "science/physics", "science/physics/optics", "science/biology", "portal"}
    assert {c["strategy"] for c in result["crawls"]} == {"breadth-first", "best-first", "path-oracle"}
    assert (out / "report.md").read_text().count("| path-oracle |") >= 2
    assert (out / "task1-harvest.png").exists()
    # Run again into the same folders: the earlier crawls are made anew (a
    # crawl refuses a folder that holds another; this failed every crawl before).
    again = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "bench.quality", "--corpus", str(corpus), "--topics", "2", "--tasks", "1",
         "--budgets", "10,30", "--strategies", "breadth-first", "--no-write", "--out", str(out), "--data", str(data)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    assert "replacing" in again.stdout and "crawl folders of an earlier run" in again.stdout
