"""Running the replay server: in the foreground, or as a child process."""

from __future__ import annotations

import atexit
import ctypes
import json
import logging
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from crawlproject.replay.server import Archive

logger = logging.getLogger(__name__)

READY_PREFIX = "REPLAY READY"


class ReplayError(RuntimeError):
    """The replay server could not be started."""


def serve_forever(
    warc: str, port: int, robots: str = "", latency_ms: float = 0.0, access_log: str = "", faults: str = "",
    as_of: str = "", synthetic: dict[str, Any] | None = None,
) -> int:
    """Index *warc* — or generate the web *synthetic* describes (its shape's
    fields, and ``paragraphs``: the pool file) — listen on 127.0.0.1:*port*
    and serve until stopped."""
    from twisted.internet import reactor

    from crawlproject.replay.archive import parse_time
    from crawlproject.replay.faults import FaultRules
    from crawlproject.replay.server import ReplayFactory, RobotsRules, listen

    try:
        rules = RobotsRules.from_file(robots or None)
        fault_rules = FaultRules.from_file(faults or None)
        clock = parse_time(as_of) if as_of else None
    except (OSError, ValueError) as exc:
        print(f"replay: {exc}", file=sys.stderr)
        return 2
    started = time.monotonic()
    try:
        archive = _open_archive(warc, synthetic)
    except ValueError as exc:  # ArchiveError, SyntheticError
        print(f"replay: {exc}", file=sys.stderr)
        return 2
    log = open(access_log, "a", buffering=1, encoding="utf-8") if access_log else None  # noqa: SIM115
    factory = ReplayFactory(archive, rules, latency_ms=latency_ms, access_log=log, faults=fault_rules, as_of=clock)
    bound = listen(factory, port)
    logger.info(
        "Replaying %d responses from %s on 127.0.0.1:%d (ready in %.1fs)",
        len(archive), warc or "a synthetic web", bound, time.monotonic() - started,
    )
    print(f"{READY_PREFIX} port={bound} responses={len(archive)}", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: reactor.callFromThread(reactor.stop))  # type: ignore
    reactor.run()  # type: ignore
    if log is not None:
        log.close()
    return 0


def _open_archive(warc: str, synthetic: dict[str, Any] | None) -> Archive:
    from crawlproject.replay.archive import WarcArchive

    if synthetic is not None:
        from crawlproject.replay.synthetic import SyntheticWeb
        from crawlproject.replay.web_shape import SyntheticError, WebShape, load_paragraphs

        options = dict(synthetic)
        paragraphs = options.pop("paragraphs", "")
        if not paragraphs:
            raise SyntheticError("a synthetic web needs a paragraph file (--paragraphs)")
        try:
            shape = WebShape(**options)
        except TypeError as exc:
            raise SyntheticError(f"bad synthetic web shape: {exc}") from None
        return SyntheticWeb(shape, load_paragraphs(paragraphs))
    if not Path(warc).is_file():
        raise ValueError(f"no such file: {warc}")
    return WarcArchive(warc)


class ReplayProcess:
    """A replay server in a child process, on a free loopback port."""

    def __init__(
        self,
        warc: str,
        robots: str = "",
        latency_ms: float = 0.0,
        access_log: str = "",
        startup_timeout: float = 120.0,
        faults: str = "",
        as_of: str = "",
        synthetic: dict[str, Any] | None = None,
    ):
        command = [sys.executable, "-m", "crawlproject.replay", "--port", "0"]
        if synthetic is not None:
            options = dict(synthetic)
            command += [
                "--synthetic", str(options.pop("pages")), "--paragraphs", str(options.pop("paragraphs")),
                "--synthetic-seed", str(options.pop("seed", 1)), "--synthetic-shape", json.dumps(options),
            ]
        else:
            command += ["--warc", warc]
        if as_of:
            command += ["--as-of", as_of]
        if faults:
            command += ["--faults", faults]
        if robots:
            command += ["--robots", robots]
        if latency_ms:
            command += ["--latency", str(latency_ms)]
        if access_log:
            command += ["--access-log", access_log]
        # The child imports crawlproject from wherever this process did (a
        # checkout, a virtualenv, a Scrapyd egg).
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        self._errors = tempfile.TemporaryFile(mode="w+", encoding="utf-8")  # noqa: SIM115 (closed in stop)
        self._process = subprocess.Popen(  # noqa: S603 (our own module, fixed argv)
            command, stdout=subprocess.PIPE, stderr=self._errors, text=True, env=env,
            preexec_fn=_die_with_parent,  # noqa: PLW1509 (a Linux prctl only)
        )
        # A crawl that fails, or whose engine never starts, still stops it.
        atexit.register(self.stop)
        self.port = self._wait_ready(startup_timeout)
        self.proxy_url = f"http://127.0.0.1:{self.port}"

    def _wait_ready(self, timeout: float) -> int:
        assert self._process.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            readable, _, _ = select.select([self._process.stdout], [], [], 0.5)
            if readable:
                line = self._process.stdout.readline()
                if line.startswith(READY_PREFIX):
                    return int(line.split("port=")[1].split()[0])
                if not line and self._process.poll() is not None:
                    break
            elif self._process.poll() is not None:
                break
        exited = self._process.poll() is not None
        if not exited:
            self._process.terminate()
            self._process.wait()
        self._errors.seek(0)
        said = " ".join(line.strip() for line in self._errors.read().splitlines()[-3:] if line.strip())
        self.stop()
        if exited:
            raise ReplayError(
                f"the replay server stopped at start-up (exit code {self._process.returncode}): {said or 'no message'}"
            )
        raise ReplayError(f"the replay server did not start within {timeout:.0f}s{': ' + said if said else ''}")

    def clock(self, moved_to: str | float | None = None) -> dict[str, object]:
        """The replay's clock (``/_replay/clock``); with *moved_to*, move it there first."""
        import urllib.parse

        if moved_to is None:
            return self._control("clock")
        return self._control("clock?" + urllib.parse.urlencode({"t": str(moved_to)}), post=True)

    def synthetic(self) -> dict[str, object]:
        """What the synthetic web served holds (``/_replay/synthetic``)."""
        return self._control("synthetic")

    def _control(self, path: str, post: bool = False) -> dict[str, object]:
        import urllib.error
        import urllib.request

        address = f"{self.proxy_url}/_replay/{path}"
        request = urllib.request.Request(address, data=b"" if post else None, method="POST" if post else "GET")  # noqa: S310
        # Straight to the replay, never through an environment proxy.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with opener.open(request, timeout=30) as answer:
                state: dict[str, object] = json.loads(answer.read())
        except urllib.error.HTTPError as exc:
            raise ValueError(json.loads(exc.read()).get("error", str(exc))) from None
        return state

    def stop(self) -> None:
        atexit.unregister(self.stop)
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()
        self._errors.close()

    def __enter__(self) -> ReplayProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def _die_with_parent() -> None:
    """In the child, before exec: get SIGTERM when the parent dies, even by
    SIGKILL (Linux's PR_SET_PDEATHSIG), so no replay outlives its crawl."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: atexit still stops it on any normal exit
