"""``python -m crawlproject.replay --warc PATH`` (or ``--synthetic PAGES
--paragraphs FILE``): the replay server as a process.

``scrapy replay`` and the replay middleware both run this. Once listening it
prints one line, ``REPLAY READY port=N responses=M``, on standard output, so
a parent process knows the port (``--port 0`` picks a free one).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import Any

from crawlproject.replay.process import serve_forever


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m crawlproject.replay",
        description="Serve a WARC, or a generated web, on 127.0.0.1 as an HTTP proxy (never forwards).",
    )
    add_arguments(parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--warc", default="", help="WARC file to serve")
    parser.add_argument(
        "--synthetic", type=int, default=0, metavar="PAGES",
        help="serve a generated web of about PAGES pages instead of a WARC (crawlproject.replay.synthetic)",
    )
    parser.add_argument("--paragraphs", default="", help="the synthetic web's paragraph pool file")
    parser.add_argument("--synthetic-seed", type=int, default=1, help="the synthetic web's seed (same seed, same web)")
    parser.add_argument(
        "--synthetic-shape", default="", metavar="JSON",
        help='more of the synthetic web\'s shape, e.g. \'{"hosts": 40, "mirror_hosts": 0.1}\'',
    )
    parser.add_argument("--port", type=int, default=8899, help="port (0: any free one)")
    parser.add_argument(
        "--robots",
        default="",
        help="robots.txt served for every host, or a .json {host: rules, '*': default}",
    )
    parser.add_argument(
        "--latency", type=float, default=0.0, help="delay every answer by MS milliseconds"
    )
    parser.add_argument("--access-log", default="", help="append one line per request here")
    parser.add_argument(
        "--faults", default="", help="JSON rules of injected faults and traps (crawlproject.replay.faults)"
    )
    parser.add_argument(
        "--as-of", default="",
        help="serve each URL as it was at this time (ISO 8601 or epoch seconds); POST /_replay/clock?t=… moves it",
    )
    parser.add_argument("--verbose", action="store_true", help="log start-up details")


def synthetic_options(args: argparse.Namespace) -> dict[str, Any] | None:
    """The synthetic web the arguments ask for, None for a WARC; a clear
    error when they ask for neither or both."""
    if bool(args.warc) == bool(args.synthetic):
        raise SystemExit("replay: give a WARC (--warc PATH) or a synthetic web (--synthetic PAGES), one of them")
    if not args.synthetic:
        return None
    try:
        shape = json.loads(args.synthetic_shape) if args.synthetic_shape else {}
    except json.JSONDecodeError as exc:
        raise SystemExit(f"replay: --synthetic-shape is not JSON: {exc}") from None
    if not isinstance(shape, dict):
        raise SystemExit("replay: --synthetic-shape must be a JSON object of WebShape fields")
    return {**shape, "pages": args.synthetic, "seed": args.synthetic_seed, "paragraphs": args.paragraphs}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr, format="replay: %(message)s"
    )
    return serve_forever(
        args.warc, args.port, args.robots, args.latency, args.access_log, args.faults, args.as_of,
        synthetic_options(args),
    )


if __name__ == "__main__":
    sys.exit(main())
