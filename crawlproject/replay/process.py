"""Running the replay server: in the foreground, or as a child process."""

from __future__ import annotations

import logging
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

logger = logging.getLogger(__name__)

READY_PREFIX = "REPLAY READY"


class ReplayError(RuntimeError):
    """The replay server could not be started."""


def serve_forever(
    warc: str, port: int, robots: str = "", latency_ms: float = 0.0, access_log: str = ""
) -> int:
    """Index *warc*, listen on 127.0.0.1:*port* and serve until stopped."""
    from twisted.internet import reactor

    from crawlproject.replay.archive import WarcArchive
    from crawlproject.replay.server import ReplayFactory, RobotsRules, listen

    if not Path(warc).is_file():
        print(f"replay: WARC file {warc} does not exist", file=sys.stderr)
        return 2
    try:
        rules = RobotsRules.from_file(robots or None)
    except (OSError, ValueError) as exc:
        print(f"replay: {exc}", file=sys.stderr)
        return 2
    started = time.monotonic()
    archive = WarcArchive(warc)
    log = open(access_log, "a", buffering=1, encoding="utf-8") if access_log else None  # noqa: SIM115
    factory = ReplayFactory(archive, rules, latency_ms=latency_ms, access_log=log)
    bound = listen(factory, port)
    logger.info(
        "Replaying %d responses from %s on 127.0.0.1:%d (indexed in %.1fs)",
        len(archive), warc, bound, time.monotonic() - started,
    )
    print(f"{READY_PREFIX} port={bound} responses={len(archive)}", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: reactor.callFromThread(reactor.stop))  # type: ignore
    reactor.run()  # type: ignore
    if log is not None:
        log.close()
    return 0


class ReplayProcess:
    """A replay server in a child process, on a free loopback port."""

    def __init__(
        self,
        warc: str,
        robots: str = "",
        latency_ms: float = 0.0,
        access_log: str = "",
        startup_timeout: float = 120.0,
    ):
        command = [sys.executable, "-m", "crawlproject.replay", "--warc", warc, "--port", "0"]
        if robots:
            command += ["--robots", robots]
        if latency_ms:
            command += ["--latency", str(latency_ms)]
        if access_log:
            command += ["--access-log", access_log]
        env = dict(os.environ, PYTHONPATH=_project_root() + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self._process = subprocess.Popen(  # noqa: S603 (our own module, fixed argv)
            command, stdout=subprocess.PIPE, text=True, env=env
        )
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
        self.stop()
        raise ReplayError(
            f"the replay server did not start within {timeout:.0f}s "
            f"(exit code {self._process.returncode}); see its messages above"
        )

    def stop(self) -> None:
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()

    def __enter__(self) -> ReplayProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def _project_root() -> str:
    return str(Path(__file__).resolve().parents[2])
