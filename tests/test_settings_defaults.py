"""The project's defaults are fit for real sites; Scrapy's own settings are used
where Scrapy has one (issue 9 §6)."""

from __future__ import annotations

from pathlib import Path

from scrapy.settings import Settings

from crawlproject import settings as project_settings
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
    assert _project().getint("URLLENGTH_LIMIT") == 256


def test_progress_follows_logstats_interval(webkb_replay: object, tmp_path: Path) -> None:
    result = run_crawl(
        "breadthfirst", tmp_path, UNIVERSITY_HOMES, webkb_replay.proxy_url,  # type: ignore[attr-defined]
        settings={"LOGSTATS_INTERVAL": 0.2, "CLOSESPIDER_ITEMCOUNT": 150, "CONCURRENT_REQUESTS": 2},
    )
    assert result.returncode == 0, result.log[-3000:]
    assert result.log.count("Progress:") >= 2
