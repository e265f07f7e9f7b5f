"""The project's defaults are fit for real sites; Scrapy's own settings are used
where Scrapy has one."""

from __future__ import annotations

import json
from pathlib import Path

from scrapy.settings import Settings

from crawlproject import settings as project_settings
from crawlproject.addon import applied
from tests.conftest import UNIVERSITY_HOMES, run_crawl


def _project() -> Settings:
    settings = Settings()
    settings.setmodule(project_settings, priority="project")
    return settings


def test_defaults_are_polite_to_real_sites() -> None:
    settings = _project()
    polite_delay = settings.getfloat("DOWNLOAD_DELAY") >= 1 or settings.getbool("AUTOTHROTTLE_ENABLED")
    assert settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN") == 1 and polite_delay
    assert settings.getbool("ROBOTSTXT_OBEY")


def test_url_length_is_scrapys_setting() -> None:
    assert applied(_project()).getint("URLLENGTH_LIMIT") == 256


def test_concurrent_items_is_the_add_ons_unless_the_project_sets_it() -> None:
    assert applied(_project()).getint("CONCURRENT_ITEMS") == 16
    project = _project()
    project.set("CONCURRENT_ITEMS", 50, priority="project")
    assert applied(project).getint("CONCURRENT_ITEMS") == 50


def test_progress_follows_logstats_interval(webkb_replay: object, tmp_path: Path) -> None:
    result = run_crawl(
        "breadthfirst", tmp_path, UNIVERSITY_HOMES, webkb_replay.proxy_url,  # type: ignore[attr-defined]
        settings={"LOGSTATS_INTERVAL": 0.2, "CLOSESPIDER_ITEMCOUNT": 150, "CONCURRENT_REQUESTS": 2},
    )
    assert result.returncode == 0, result.log[-3000:]
    assert result.log.count("Progress:") >= 2


def test_a_users_extensions_keep_our_summary_and_budgets(webkb_replay: object, tmp_path: Path) -> None:
    """-s EXTENSIONS={...} used to replace the project's whole dict: no summary,
    no page budget (make bench's long run crashed on it). The add-on puts ours
    beside the user's."""
    result = run_crawl(
        "breadthfirst", tmp_path, UNIVERSITY_HOMES, webkb_replay.proxy_url,  # type: ignore[attr-defined]
        settings={"EXTENSIONS": json.dumps({"tests.probes.ReactorTicks": 0}), "REACTOR_TICK": 0.05,
                  "FOCUS_OK_PAGECOUNT": 30},
    )
    assert result.returncode == 0, result.log[-3000:]
    assert result.summary["finish_reason"] == "closespider_okpagecount"
    assert 30 <= result.summary["pages_ok"] <= 30 + 16
    assert "'test/reactor_longest_gap_ms'" in result.log  # the user's extension ran too
