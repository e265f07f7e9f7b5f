"""Every ``FOCUS_*`` setting: its default and its range, and typed getters
that fail clearly.

This is the one place defaults live (the add-on installs them at
add-on priority, so ``scrapy settings --get`` shows them); docs/settings.md
documents each. Components read settings through :func:`get_int`,
:func:`get_float`, :func:`get_bool`, :func:`get_choice` and :func:`get_str`,
which check the range written here, and the add-on checks every setting
once before the crawl starts (:func:`check_settings`), so that a bad value
or a misspelled name stops the crawl with one line naming the setting, its
range and what was given, instead of failing somewhere mid-crawl.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping

    from scrapy.settings import BaseSettings


@dataclass(frozen=True)
class Setting:
    """A setting's default and what values it takes."""

    default: Any
    kind: str = "str"  # str | int | float | bool | choice
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()


def _int(default: int, minimum: int | None = 0, maximum: int | None = None) -> Setting:
    return Setting(default, "int", minimum, maximum)


def _float(default: float, minimum: float | None = 0.0, maximum: float | None = None) -> Setting:
    return Setting(
        default, "float", None if minimum is None else float(minimum), None if maximum is None else float(maximum)
    )


def _bool(default: bool) -> Setting:
    return Setting(default, "bool")


def _choice(default: str, *choices: str) -> Setting:
    return Setting(default, "choice", choices=choices)


def _str(default: str = "") -> Setting:
    return Setting(default)


SETTINGS: dict[str, Setting] = {
    # Replay (crawlproject.replay)
    "FOCUS_REPLAY_WARC": _str(),
    "FOCUS_REPLAY_PROXY": _str(),
    "FOCUS_REPLAY_ROBOTS": _str(),
    "FOCUS_REPLAY_FAULTS": _str(),
    "FOCUS_REPLAY_AS_OF": _str(),
    "FOCUS_REPLAY_LATENCY_MS": _float(0.0),
    "FOCUS_REPLAY_STARTUP_TIMEOUT": _float(120.0, 1),
    # Network safety (policy.netsafety) and spider traps
    "FOCUS_ALLOWED_NETWORKS": _str(),
    "FOCUS_MAX_SEGMENT_REPEATS": _int(3),
    "FOCUS_MAX_COUNTER_HOPS": _int(20),
    "FOCUS_MAX_LINKS_PER_PAGE": _int(1000),
    "FOCUS_MAX_PAGES_PER_HOST": _int(0),
    # Crawl scope (policy.scope): any | domain | host of the seeds
    "FOCUS_SCOPE": _choice("any", "any", "domain", "host"),
    # The home sites of a topic bound to them (policy.scope.HomeSites): URLs or host names
    "FOCUS_HOME": _str(),
    # robots.txt (middlewares.robotstxt; Scrapy's ROBOTSTXT_OBEY turns it on)
    "FOCUS_ROBOTSTXT_EXPIRY": _float(86400.0, 1),
    "FOCUS_ROBOTSTXT_RETRY_AFTER": _float(300.0, 1),
    "FOCUS_ROBOTSTXT_MAX_BYTES": _int(512000, 1024),
    "FOCUS_ROBOTSTXT_MAX_CRAWL_DELAY": _float(30.0),
    # Sitemaps (spiders.sitemaps): robots.txt's and the spider's, read into the frontier
    "FOCUS_SITEMAPS": _bool(True),
    "FOCUS_SITEMAP_MAX_BYTES": _int(50 * 1024 * 1024, 1024),
    "FOCUS_SITEMAP_MAX_URLS": _int(50_000, 1),
    "FOCUS_SITEMAP_MAX_DEPTH": _int(2),
    # Near-duplicate pages (policy.near_duplicates): Jaccard threshold, 0 = off
    "FOCUS_NEAR_DUPLICATES": _float(0.8, 0, 1),
    "FOCUS_NEAR_DUPLICATES_PERMUTATIONS": _int(64, 2),
    "FOCUS_NEAR_DUPLICATES_SHINGLE": _int(5, 1),
    "FOCUS_NEAR_DUPLICATES_KEEP": _int(100_000, 1),
    # Page size and type (middlewares.pagesize)
    "FOCUS_MAX_PAGE_BYTES": _int(102400, 1024),
    # Frontier (frontier.scheduler)
    "FOCUS_FRONTIER_BACKEND": _str("crawlproject.frontier.memory.MemoryFrontier"),
    "FOCUS_FRONTIER_MAX": _int(100000, 1),
    "FOCUS_FRONTIER_ORDER": _choice("score", "score", "fifo"),
    # Hand out the best request whose download slot can take one now (off: the global best)
    "FOCUS_SLOT_AWARE": _bool(True),
    # What a crawl's budget is (frontier.scheduler): pages (a ready slot takes a URL only
    # among the N best queued; focused spiders) or time (fill every ready slot; plain spiders)
    "FOCUS_OBJECTIVE": _choice("time", "time", "pages"),
    # N of the pages objective: the best queued URLs a ready slot may take (0: CONCURRENT_REQUESTS)
    "FOCUS_PAGES_WINDOW": _int(0),
    # Delays a free host's best below the window waits for the busy hosts holding the URLs above
    # (0: as long as they take)
    "FOCUS_PAGES_WAIT": _float(0.0),
    # Exploration by rule (frontier.exploration): every seed's site, and every site that pays, probed
    # before the crawl commits (focused spiders turn it on), then kept while it may be the best
    "FOCUS_EXPLORE": _bool(False),
    "FOCUS_EXPLORE_PROBES": _int(4),
    "FOCUS_EXPLORE_SHARE": _float(0.2, 0.0, 1.0),
    "FOCUS_EXPLORE_CONFIDENCE": _float(1.0),
    "FOCUS_EXPLORE_MAX_ARMS": _int(50, 1),
    "FOCUS_EXPLORE_SEED_WAIT": _float(10.0),
    # Past FOCUS_FRONTIER_MAX: spill the lowest-ranked to disk, or drop them (counted)
    "FOCUS_FRONTIER_OVERFLOW": _choice("spill", "spill", "drop"),
    "FOCUS_FRONTIER_HOST_BATCH": _int(1, 1),
    "FOCUS_BATCH_SIZE": _int(1, 1),
    "FOCUS_REPEATABLE": _bool(False),
    # The seen set of fetched URLs (frontier.seen): exact, then a Bloom filter
    "FOCUS_SEEN_EXACT_MAX": _int(1_000_000),
    "FOCUS_SEEN_BLOOM_CAPACITY": _int(10_000_000, 1),
    "FOCUS_SEEN_BLOOM_ERROR": _float(1e-4, 1e-9, 0.5),
    # The shared frontier on Redis (distributed)
    "FOCUS_REDIS_KEY": _str("%(spider)s:frontier"),
    "FOCUS_REDIS_LEASE_SECONDS": _float(120.0, 1),
    "FOCUS_REDIS_PREFETCH": _int(16, 1),
    "FOCUS_REDIS_BATCH": _int(256, 1),
    "FOCUS_REDIS_SEEDS_KEY": _str(),
    "FOCUS_REDIS_IDLE_GRACE": _float(10.0, 0),
    "FOCUS_REDIS_WAIT_FOR_SEEDS": _bool(False),
    "FOCUS_SHARED_POLITENESS": _bool(False),
    # Budgets (extensions.closespider)
    "FOCUS_OK_PAGECOUNT": _int(0),
    # Refresh (spiders.refresh)
    "FOCUS_REFRESH_POLICY": _str("uniform"),
    "FOCUS_REFRESH_BUDGET": _int(100, 1),
    # Search index (pipelines.index, search)
    "FOCUS_INDEX_DIR": _str(),
    "FOCUS_INDEX_COMMIT_PAGES": _int(100, 1),
    "FOCUS_INDEX_VOTE_WINDOW": _int(10),
    "FOCUS_SEARCH_WEIGHTS": _str("votes:1,text:1,title:1"),
    "FOCUS_IDF_INDEX": _str(),
    # Strategy and text
    "FOCUS_STRATEGY": _str(),
    "FOCUS_STEMMING": _bool(True),
    # The page judge (crawlproject.judges): auto = a model's own, else the query's TF cosine
    "FOCUS_JUDGE": _str("auto"),
    "FOCUS_JUDGE_LABELS": _bool(True),
    "FOCUS_SHARK_GAMMA": _float(0.7, 0, 1),
    "FOCUS_SHARK_DELTA": _float(0.5, 0, 1),
    "FOCUS_SHARK_BETA": _float(0.8, 0, 1),
    "FOCUS_SHARK_DEPTH": _int(3, 1),
    "FOCUS_CONTEXT_WORDS": _int(10),
    "FOCUS_RANDOM_SEED": _int(0, None),
    "FOCUS_LINK_VALUE_ONLINE": _bool(True),
    "FOCUS_LINK_VALUE_SIBLINGS": _bool(True),
    "FOCUS_LEARN_MEMORY": _int(200000),
    # The online link learner (strategies.link_learner, models.link_learner)
    "FOCUS_LEARNER_EXPLORE": _float(0.1, 0, 1),
    "FOCUS_LEARNER_RATE": _float(0.1, 0),
    "FOCUS_LEARNER_BATCH": _int(16, 1),
    "FOCUS_LEARNER_RESCORE_EVERY": _int(10),
    "FOCUS_LEARNER_RESCORE_LINKS": _int(25, 1),
    "FOCUS_LEARNER_SIBLINGS_MOVED": _float(0.02, 0, 1),
    "FOCUS_LEARNER_SIBLINGS_EVERY": _int(4, 1),
    "FOCUS_LEARNER_PROBE_HOLD": _float(1.0, 0, 1),
    "FOCUS_LEARNER_IN_FLIGHT": _float(0.0, -1, 10),
    "FOCUS_LEARNER_STRENGTH": _float(3.0, 0.01),
    "FOCUS_LEARNER_SHARED": _bool(False),
    # The link learner's prior: SharkSearch's score, the shipped link model learnt across topics, or a file
    "FOCUS_LEARNER_PRIOR": _str("shark-search"),
    # How much is left (models.remaining, extensions.progress): verdicts from the judge or the labels; stop rule
    "FOCUS_REMAINING_FROM": _choice("judge", "judge", "labels"),
    "FOCUS_STOP_BELOW": _float(0.0, 0, 1),
    "FOCUS_INFOSPIDERS_AGENTS": _int(8, 1),
    "FOCUS_INFOSPIDERS_MAX_AGENTS": _int(64, 1),
    "FOCUS_INFOSPIDERS_ALPHA": _float(0.5, 0, 1),
    "FOCUS_INFOSPIDERS_BETA": _float(5.0),
    "FOCUS_INFOSPIDERS_HIDDEN": _int(4, 1),
    "FOCUS_INFOSPIDERS_LEARNING_RATE": _float(0.1),
    "FOCUS_ORACLE_WARC": _str(),
    "FOCUS_CACHE_DIR": _str(".cache"),
    # Focused crawler (strategies.focused)
    "FOCUS_MODEL": _str(),
    "FOCUS_GOOD": _str(),
    "FOCUS_FOCUSED_MODE": _choice("learn", "learn", "soft", "hard"),
    "FOCUS_HARD_RESERVE": _bool(False),
    "FOCUS_CLASSIFY_BATCH": _int(16, 1),
    "FOCUS_CLASSIFY_WAIT": _float(0.02),
    "FOCUS_DISTILL_EVERY": _int(0),
    "FOCUS_DISTILL_HUBS": _int(10, 1),
    "FOCUS_DISTILL_SAME_HOST": _bool(False),
    "FOCUS_RETRAIN_EVERY": _int(0),
    "FOCUS_RETRAIN_CONFIDENCE": _float(0.9, 0, 1),
    "FOCUS_RETRAIN_RESCORE_RATIO": _float(0.5),
    # Dashboard, metrics and labels (extensions.dashboard, dashboard)
    "FOCUS_DASHBOARD_PORT": _int(0, -1),
    "FOCUS_DASHBOARD_HOST": _str("127.0.0.1"),
    "FOCUS_DASHBOARD_TOKEN": _str(),
    "FOCUS_METRICS_LINGER": _float(10.0),
    "FOCUS_METRICS_TARGETS": _str(),
    "FOCUS_WORKER_NAME": _str(),
    # Output (pipelines, extensions)
    "FOCUS_OUTPUT_DIR": _str("crawls/%(name)s-%(job)s"),
    "FOCUS_STORE_PAGES": _bool(True),
    "FOCUS_WARC_OUTPUT": _bool(False),
    "FOCUS_COLLECTION": _bool(False),
    "FOCUS_REPORT": _bool(True),
    # Rendering where scripts build the page (middlewares.render): never | auto | always
    "FOCUS_RENDER": _choice("never", "never", "auto", "always"),
    "FOCUS_RENDER_WAIT": _float(10.0, 0.5),  # seconds a render waits for the page's scripts at most
    "FOCUS_BROWSER": _str("/usr/bin/chromium"),
    "FOCUS_LABELS": _str(),
    "FOCUS_RELEVANT": _str(),
}
DEFAULTS: dict[str, Any] = {name: setting.default for name, setting in SETTINGS.items()}
#: Settings renamed: the old name still works, with a warning (check_settings).
RENAMED: dict[str, str] = {"FOCUS_FOCUS_MODE": "FOCUS_FOCUSED_MODE"}

#: Scrapy's own settings whose values a focused crawl relies on, with their
#: ranges: a negative budget would otherwise mean "no budget at all".
#: 0 keeps Scrapy's meaning (no limit) where Scrapy gives it one.
SCRAPY_RANGES: dict[str, Setting] = {
    "CLOSESPIDER_PAGECOUNT": _int(0),
    "CLOSESPIDER_ITEMCOUNT": _int(0),
    "CLOSESPIDER_ERRORCOUNT": _int(0),
    "CLOSESPIDER_TIMEOUT": _float(0.0),
    "CONCURRENT_REQUESTS": _int(16, 1),
    "CONCURRENT_REQUESTS_PER_DOMAIN": _int(8, 1),
    "DOWNLOAD_DELAY": _float(0.0),
    "DOWNLOAD_TIMEOUT": Setting(180.0, "float", 0.001),
    "DEPTH_LIMIT": _int(0),
    "RETRY_TIMES": _int(2),
    "REDIRECT_MAX_TIMES": _int(20),
    "URLLENGTH_LIMIT": _int(2083),
    "LOGSTATS_INTERVAL": _float(60.0),
}


class SettingsError(ValueError):
    """A setting or spider argument has a value the crawler cannot use."""


def _spec(name: str) -> Setting:
    spec = SETTINGS.get(name) or SCRAPY_RANGES.get(name)
    if spec is None:
        raise KeyError(f"{name} is not a crawlproject setting")
    return spec


def _raw(settings: BaseSettings, name: str) -> Any:
    spec = _spec(name)
    value = settings.get(name)
    if value is None:
        olds = (settings.get(old) for old, new in RENAMED.items() if new == name and settings.get(old) is not None)
        value = next(olds, None)
    return spec.default if value is None else value


def get_int(
    settings: BaseSettings, name: str, minimum: int | None = None, maximum: int | None = None
) -> int:
    """The whole number *name* holds, within its range (this module's, or
    *minimum* / *maximum* when a caller asks for a narrower one)."""
    raw = _raw(settings, name)
    minimum, maximum = _bounds(name, minimum, maximum)
    try:
        value = int(raw)
        if isinstance(raw, float) and raw != value:
            raise ValueError
    except (TypeError, ValueError):
        raise SettingsError(
            f"{name} must be a whole number{_range(minimum, maximum)}, got {raw!r}"
        ) from None
    _check_range(name, value, minimum, maximum)
    return value


def get_float(
    settings: BaseSettings,
    name: str,
    minimum: float | None = None,
    maximum: float | None = None,
) -> float:
    raw = _raw(settings, name)
    minimum, maximum = _bounds(name, minimum, maximum)
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise SettingsError(
            f"{name} must be a number{_range(minimum, maximum)}, got {raw!r}"
        ) from None
    if value != value:  # NaN passes every comparison
        raise SettingsError(f"{name} must be a number, got NaN")
    _check_range(name, value, minimum, maximum)
    return value


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def get_bool(settings: BaseSettings, name: str) -> bool:
    raw = _raw(settings, name)
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise SettingsError(f"{name} must be true or false, got {raw!r}")


def get_choice(settings: BaseSettings, name: str, choices: Collection[str] = ()) -> str:
    raw = str(_raw(settings, name)).strip().lower()
    choices = choices or _spec(name).choices
    if raw not in choices:
        raise SettingsError(
            f"{name} must be one of {', '.join(sorted(choices))}, got {raw!r}"
        )
    return raw


def get_str(settings: BaseSettings, name: str) -> str:
    return str(_raw(settings, name) or "")


def named_class(setting: str, name: str, registry: Mapping[str, str], base: type, kind: str, extra: str = "") -> Any:
    """The class *setting*'s value names: a name of *registry* (name → import
    path) or the import path of a subclass of *base*; one line when it names none.
    *extra* is a value the caller reads itself (``auto``), offered in the line."""
    import difflib

    from scrapy.utils.misc import load_object

    path = registry.get(name.strip().lower(), name)
    try:
        found = load_object(path)
    except ValueError:  # not a dotted path
        names = sorted(registry)
        close = difflib.get_close_matches(name.lower(), [*names, *([extra] if extra else [])], n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise SettingsError(
            f"{setting}={name!r} names no {kind}: {hint}Give {extra + ', ' if extra else ''}a {kind} name "
            f"({', '.join(names)}) or the import path of a {base.__name__} class"
        ) from None
    except (ImportError, NameError, AttributeError) as exc:
        raise SettingsError(f"{setting}={name!r} cannot be imported: {exc}") from None
    if not (isinstance(found, type) and issubclass(found, base)):
        raise SettingsError(f"{setting}={name!r} is not a {base.__name__} class")
    return found


GETTERS: dict[str, Callable[..., Any]] = {
    "int": get_int, "float": get_float, "bool": get_bool, "choice": get_choice, "str": get_str
}


def load_class(settings: BaseSettings, name: str) -> Any:
    """The class or function the import path in setting *name* names, or
    one line saying why it cannot be had."""
    from scrapy.utils.misc import load_object

    path = get_str(settings, name)
    try:
        return load_object(path)
    except ValueError:
        raise SettingsError(f"{name}={path!r} is not a full import path (module.Name)") from None
    except (ImportError, NameError, AttributeError) as exc:
        raise SettingsError(f"{name}={path!r} cannot be imported: {exc}") from None


def _bounds(name: str, minimum: float | None, maximum: float | None) -> tuple[Any, Any]:
    spec = _spec(name)
    return (spec.minimum if minimum is None else minimum, spec.maximum if maximum is None else maximum)


def _range(minimum: float | None, maximum: float | None) -> str:
    if minimum is not None and maximum is not None:
        return f" from {minimum} to {maximum}"
    if minimum is not None:
        return f" ≥ {minimum}"
    if maximum is not None:
        return f" ≤ {maximum}"
    return ""


def _check_range(
    name: str, value: float, minimum: float | None, maximum: float | None
) -> None:
    if (minimum is not None and value < minimum) or (
        maximum is not None and value > maximum
    ):
        raise SettingsError(f"{name} must be{_range(minimum, maximum)}, got {value!r}")
