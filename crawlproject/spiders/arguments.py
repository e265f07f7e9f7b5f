"""Spider arguments (``-a name=value``) checked against what the spider
takes: an unknown name is a typo far more often than a wish."""

from __future__ import annotations

import difflib
import inspect
from typing import Any, ClassVar

from scrapy import Spider

from crawlproject.config import SettingsError

__all__ = ["ArgumentsMixin"]


class ArgumentsMixin:
    """``-a name=value`` checked against what the spider takes: an unknown
    name is a typo far more often than a wish."""

    name: str
    #: Spider arguments besides those of ``__init__``, read by reports.
    extra_arguments: ClassVar[tuple[str, ...]] = ("topic_id", "task", "strategy_label")

    @classmethod
    def _check_arguments(cls, given: dict[str, Any]) -> None:
        known = cls.known_arguments()
        for name in given:
            if name.startswith("_") or name in known:
                continue  # _job and the like: Scrapyd's
            shown = sorted(cls.arguments())
            close = difflib.get_close_matches(name, shown, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise SettingsError(
                f"unknown spider argument -a {name}: {hint}{cls.name!r} takes "
                f"{', '.join(shown)} (a spider subclass declares its own as class attributes)"
            )

    @classmethod
    def arguments(cls) -> set[str]:
        """The spider arguments worth listing: ``__init__``'s and the documented extras."""
        names = set(cls.extra_arguments)
        for klass in cls.__mro__:
            init = klass.__dict__.get("__init__")
            if init is not None and issubclass(klass, ArgumentsMixin):
                names.update(
                    name for name, p in inspect.signature(init).parameters.items()
                    if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and name != "self"
                )
        return names

    @classmethod
    def known_arguments(cls) -> set[str]:
        """Every name ``-a`` may set: the arguments, and any attribute a
        subclass declares (a user's topic spider reads its own)."""
        known = cls.arguments()
        for klass in cls.__mro__:
            if klass is not Spider and issubclass(klass, Spider):
                known.update(name for name in vars(klass) if not name.startswith("_"))
        known.update(("name", "start_urls", "allowed_domains", "custom_settings"))
        return known
