"""What every crawlproject command shares: a bad input ends in one line —
``scrapy train: error: not a WARC file: PATH`` — and exit code 2, not a
traceback.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from scrapy.commands import ScrapyCommand, ScrapyHelpFormatter

if TYPE_CHECKING:
    import argparse

    from scrapy.settings import Settings

#: Exceptions that mean "the input is wrong", with a message that says how.
INPUT_ERRORS: tuple[type[BaseException], ...] = (ValueError, OSError, KeyError)


def input_error_message(exc: BaseException) -> str:
    """What to tell the user about a bad input."""
    from warcio.exceptions import ArchiveLoadFailed

    if isinstance(exc, FileNotFoundError):
        return f"no such file: {exc.filename}"
    if isinstance(exc, IsADirectoryError):
        return f"a folder, not a file: {exc.filename}"
    if isinstance(exc, PermissionError):
        return f"not allowed to read: {exc.filename}"
    if isinstance(exc, ArchiveLoadFailed):
        return f"not a WARC file ({str(exc).strip()})"
    return str(exc) or type(exc).__name__


class HelpFormatter(ScrapyHelpFormatter):
    """Scrapy's help layout (underlined headings) without its mistakes: only
    the parser's section titles are headings — not an option's help whose
    wrapped line happens to end in a colon — and titles keep their own case
    (``--kind``, not ``--Kind``)."""

    def __init__(self, prog: str, titles: set[str]):
        super().__init__(prog)
        self.titles = titles

    def format_part_strings(self, part_strings: list[str]) -> list[str]:
        if part_strings and part_strings[0].startswith("usage: "):
            part_strings[0] = "Usage\n=====\n  " + part_strings[0].removeprefix("usage: ")
        headings = [
            i for i, part in enumerate(part_strings) if part.endswith(":\n") and part[:-2] in self.titles
        ]
        for index in reversed(headings):
            title = part_strings[index].removesuffix(":\n")
            title = title[:1].upper() + title[1:]
            char = "-" if "Global Options" in title or "global options" in title else "="
            part_strings[index] = title
            part_strings.insert(index + 1, f"\n{char * len(title)}\n")
        return part_strings


class ProjectCommand(ScrapyCommand):
    """A command whose bad inputs end in one line on stderr and exit code 2."""

    #: the command's name, for its error lines
    command_name = ""

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        # the section titles as they are when help is asked for (subclasses add groups)
        parser.formatter_class = lambda prog: HelpFormatter(  # type: ignore[assignment]
            prog, {str(group.title) for group in parser._action_groups}
        )

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        from scrapy.exceptions import UsageError
        from warcio.exceptions import ArchiveLoadFailed

        try:
            self.execute(args, opts)
        except UsageError:
            raise
        except (*INPUT_ERRORS, ArchiveLoadFailed) as exc:
            print(f"scrapy {self.command_name}: error: {input_error_message(exc)}", file=sys.stderr)
            self.exitcode = 2

    def execute(self, args: list[str], opts: argparse.Namespace) -> Any:
        raise NotImplementedError

    @property
    def project_settings(self) -> Settings:
        """The settings (set by Scrapy before the command runs)."""
        assert self.settings is not None
        return self.settings
