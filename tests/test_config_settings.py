from __future__ import annotations

import pytest
from scrapy.settings import Settings

from crawlproject import config, config_check
from crawlproject.config import SettingsError


def test_defaults_apply_when_unset() -> None:
    assert config.get_int(Settings(), "FOCUS_FRONTIER_MAX", minimum=1) == 100000


@pytest.mark.parametrize(
    ("getter", "name", "value", "message"),
    [
        (config.get_int, "FOCUS_FRONTIER_MAX", "abc", "FOCUS_FRONTIER_MAX must be a whole number"),
        (config.get_int, "FOCUS_FRONTIER_MAX", "0", "FOCUS_FRONTIER_MAX must be ≥ 1, got 0"),
        (config.get_int, "FOCUS_FRONTIER_MAX", 2.5, "must be a whole number"),
        (config.get_float, "FOCUS_ROBOTSTXT_EXPIRY", "soon", "must be a number"),
        (config.get_float, "FOCUS_ROBOTSTXT_EXPIRY", "nan", "NaN"),
        (config.get_bool, "FOCUS_STEMMING", "maybe", "must be true or false"),
    ],
)
def test_bad_values_fail_with_a_clear_message(getter, name, value, message) -> None:  # type: ignore[no-untyped-def]
    settings = Settings({name: value})
    with pytest.raises(SettingsError, match=message):
        getter(settings, name, minimum=1) if getter is not config.get_bool else getter(
            settings, name
        )


def test_choice_lists_the_allowed_values() -> None:
    settings = Settings({"FOCUS_FRONTIER_ORDER": "random"})
    with pytest.raises(SettingsError, match="one of fifo, score"):
        config.get_choice(settings, "FOCUS_FRONTIER_ORDER", {"score", "fifo"})


def test_unknown_setting_name_is_a_programming_error() -> None:
    with pytest.raises(KeyError):
        config.get_int(Settings(), "FOCUS_NO_SUCH_THING")


def test_every_setting_is_documented_with_its_default() -> None:
    from pathlib import Path

    rows = {
        line.split("|")[1].strip().strip("`"): line
        for line in (Path(__file__).parents[1] / "docs" / "settings.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| `FOCUS_")
    }
    assert set(rows) == set(config.SETTINGS)


def test_the_add_on_checks_every_setting_once() -> None:
    settings = Settings({"FOCUS_FRONTIER_MAX": 5, "FOCUS_LEARNER_EXPLORE": 1.5})
    with pytest.raises(SettingsError, match=r"FOCUS_LEARNER_EXPLORE must be from 0\.0 to 1\.0, got 1\.5"):
        config_check.check_settings(settings)
    with pytest.raises(SettingsError, match="unknown setting FOCUS_LERNER_RATE; did you mean FOCUS_LEARNER_RATE"):
        config_check.check_settings(Settings({"FOCUS_LERNER_RATE": 0.1}))
    with pytest.raises(SettingsError, match="CLOSESPIDER_ITEMCOUNT must be ≥ 0, got -1"):
        config_check.check_settings(Settings({"CLOSESPIDER_ITEMCOUNT": -1}))
    config_check.check_settings(Settings({"FOCUS_FRONTIER_MAX": 5, "CLOSESPIDER_PAGECOUNT": 0}))  # in range: silent


def test_a_misspelt_scrapy_setting_is_said_and_another_add_ons_is_not_refused() -> None:
    """Before, -s CLOSESPIDER_PAGECONT=20 crawled the whole site (653 pages), exit 0."""
    for typo, meant in (("CLOSESPIDER_PAGECONT", "CLOSESPIDER_PAGECOUNT"), ("DOWNLOAD_DELAYS", "DOWNLOAD_DELAY"),
                        ("CONCURRENT_REQUEST_PER_DOMAIN", "CONCURRENT_REQUESTS_PER_DOMAIN"),
                        ("ROBOTSTXT_OBY", "ROBOTSTXT_OBEY"), ("DEPTH_LIMT", "DEPTH_LIMIT")):
        with pytest.raises(SettingsError, match=f"unknown setting {typo}; did you mean {meant}\\?"):
            config_check.check_settings(Settings({typo: 1}))
    # names no known one resembles (another add-on's, the project's own) pass, as do add-ons' defaults
    config_check.check_settings(Settings({"REDIS_URL": "redis://127.0.0.1:6379", "MY_PIPELINE_BATCH": 3}))
    addon_default = Settings()
    addon_default.set("PLAYWRIGHT_LAUNCH_OPTION", {}, priority="addon")
    config_check.check_settings(addon_default)


def test_scrapy_s_pages_without_an_item_limit_closes_the_crawl() -> None:
    # Our CloseSpider replaced Scrapy's page counting by the page budget and dropped
    # CLOSESPIDER_PAGECOUNT_NO_ITEM with it: the setting was accepted and never fired.
    from scrapy import Spider
    from scrapy.http import Request, Response
    from scrapy.utils.test import get_crawler

    from crawlproject.frontier.budget import CloseSpider

    crawler = get_crawler(Spider, {"CLOSESPIDER_PAGECOUNT_NO_ITEM": 3})
    extension = CloseSpider.from_crawler(crawler)
    reasons: list[str] = []
    extension._close_spider = reasons.append  # type: ignore[method-assign] # noqa: SLF001 (the engine's side is Scrapy's)
    spider = Spider("s")
    for url in ("http://h/1", "http://h/2"):
        extension.page_count(Response(url), Request(url), spider)
    extension.item_scraped({}, spider)  # an item: the count starts again
    for url in ("http://h/3", "http://h/4"):
        extension.page_count(Response(url), Request(url), spider)
    assert reasons == []
    extension.page_count(Response("http://h/5"), Request("http://h/5"), spider)
    assert reasons == ["closespider_pagecount_no_item"]
