"""Every setting of a crawl checked once, before it starts (the add-on calls
:func:`check_settings`): a ``FOCUS_*`` name that is none of ours, another
name that is a misspelt Scrapy one, a value out of its range — one line
saying which, never a crawl that ignores it."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from crawlproject import config

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scrapy.settings import BaseSettings


#: How alike a name must be to one Scrapy knows to be taken for its typo
#: (difflib's ratio: CLOSESPIDER_PAGECONT ~ CLOSESPIDER_PAGECOUNT is 0.98)
TYPO_LIKENESS = 0.9


def scrapy_setting_names(settings: BaseSettings) -> set[str]:
    """The setting names a crawl knows besides ours: Scrapy's defaults and
    every name set below the project's own priority (the defaults of
    installed add-ons and extensions: scrapy-redis's, scrapy-playwright's)."""
    from scrapy.settings import SETTINGS_PRIORITIES, default_settings

    names = {name for name in dir(default_settings) if name.isupper()}
    below_project = SETTINGS_PRIORITIES["project"]
    return names | {name for name in settings.attributes if (settings.getpriority(name) or 0) < below_project}


def _typo_of(name: str, known: set[str]) -> str | None:
    """The known setting *name* is a typo of, if it is one."""
    if name in known:
        return None
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=TYPO_LIKENESS)
    return close[0] if close else None


def check_settings(settings: BaseSettings, known: Iterable[str] = ()) -> None:
    """Check every setting once, before a crawl starts: each ``FOCUS_*``
    name is one of ours (*known* adds names other components declare), no
    other name is a misspelt Scrapy one (``-s CLOSESPIDER_PAGECONT=20``
    crawled the whole site: a name nobody reads is no setting; a name no
    known one resembles is left alone, another add-on's), and each value —
    ours, and the Scrapy settings of :data:`crawlproject.config.SCRAPY_RANGES` — is in its
    range. Raise :class:`crawlproject.config.SettingsError` on the first problem."""
    ours = set(config.SETTINGS) | set(known)
    theirs = scrapy_setting_names(settings) | ours | set(config.RENAMED)
    for name in sorted(settings.attributes):
        if name in config.RENAMED and settings.get(name) is not None:
            import warnings

            from scrapy.exceptions import ScrapyDeprecationWarning

            warnings.warn(
                f"{name} is now called {config.RENAMED[name]}; the old name still works",
                ScrapyDeprecationWarning,
                stacklevel=2,
            )
            continue
        if name.startswith("FOCUS_") and name not in ours:
            close = difflib.get_close_matches(name, sorted(ours), n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            raise config.SettingsError(f"unknown setting {name}{hint} (every FOCUS_* setting is in docs/settings.md)")
        if not name.startswith("FOCUS_") and (meant := _typo_of(name, theirs)) is not None:
            raise config.SettingsError(f"unknown setting {name}; did you mean {meant}? (Scrapy's settings: "
                                "https://docs.scrapy.org/en/latest/topics/settings.html)")
    for name, spec in (*config.SETTINGS.items(), *config.SCRAPY_RANGES.items()):
        if spec.kind in ("int", "float") and settings.get(name) is None:
            continue  # unset: the default, which is in range
        config.GETTERS[spec.kind](settings, name)


#: The add-on's import path, as a project's ``ADDONS`` names it
ADDON = "crawlproject.addon.FocusedCrawlAddon"


def addon_enabled(settings: BaseSettings) -> bool:
    """Whether the project's ``ADDONS`` holds the focused crawler's add-on (or a subclass of it)."""
    from scrapy.utils.misc import load_object

    for key, order in settings.getdict("ADDONS").items():
        if order is None:
            continue
        try:
            addon = load_object(key) if isinstance(key, str) else key
        except (ImportError, NameError, ValueError):
            continue  # Scrapy says so itself when it loads the add-ons
        if any(f"{cls.__module__}.{cls.__qualname__}" == ADDON for cls in getattr(addon, "__mro__", (type(addon),))):
            return True
    return False


def missing_addon(settings: BaseSettings, spider: str = "") -> str | None:
    """Why a crawl needs the add-on that is not enabled, in one line: a
    focused *spider* (its name), or a ``FOCUS_*`` setting the project or the
    command line set — without the add-on nothing reads it, and a replay
    setting ignored sends the crawl to the live web. None when all is well."""
    if addon_enabled(settings):
        return None
    from scrapy.settings import SETTINGS_PRIORITIES

    chosen = sorted(name for name in settings.attributes if name.startswith("FOCUS_")
                    and (settings.getpriority(name) or 0) >= SETTINGS_PRIORITIES["project"])
    if not spider and not chosen:
        return None
    need = f"spider {spider!r} is a focused spider" if spider else f"{chosen[0]} is set"
    return (
        f"{need} but crawlproject's add-on is not enabled: add ADDONS = {{{ADDON!r}: 0}} to the project's settings.py"
    )
