"""Starting the servers a distributed crawl uses — a real Redis and a real
Scrapyd — on free loopback ports, and stopping them: for the tests, the
distributed benchmark and scripts/cluster.py (what a user would run)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import Self


class ServerError(RuntimeError):
    """A server could not be started."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait(ready: Any, process: subprocess.Popen[bytes], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ServerError(f"{what} exited at start-up (code {process.returncode})")
        if ready():
            return
        time.sleep(0.05)
    process.terminate()
    raise ServerError(f"{what} did not answer within {timeout:.0f}s")


class _Server:
    """A server process of ours: stopped on exit, its files cleaned up."""

    process: subprocess.Popen[bytes]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
        self._cleanup()

    def _cleanup(self) -> None:
        pass

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


class RedisServer(_Server):
    """``redis-server`` (Debian's package, installed by ``make setup``) on a
    free loopback port, its data in a temporary folder (or *folder*, to
    restart one on its data); no persistence unless *persistent* (an
    append-only file: what docs/distributed.md asks of a shared frontier)."""

    def __init__(self, port: int | None = None, folder: Path | None = None, persistent: bool = False):
        binary = shutil.which("redis-server")
        if binary is None:
            raise ServerError("redis-server is not installed: `make setup` installs it (apt-get install redis-server)")
        self.port = port or free_port()
        self.folder = folder or Path(tempfile.mkdtemp(prefix="crawlproject-redis-"))
        self.process = subprocess.Popen(  # noqa: S603
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder),
             "--save", "", "--appendonly", "yes" if persistent else "no", "--protected-mode", "yes"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        self.url = f"redis://127.0.0.1:{self.port}/0"
        _wait(self._answers, self.process, "redis-server")

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as connection:
                connection.sendall(b"PING\r\n")
                return connection.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def _cleanup(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


class ScrapydServer(_Server):
    """Scrapyd (pip, installed by ``make setup``) on a free loopback port,
    its eggs, logs and items in a folder of its own."""

    def __init__(self, folder: str | Path | None = None, port: int | None = None, max_proc: int = 4):
        self.port = port or free_port()
        self.folder = Path(folder) if folder else Path(tempfile.mkdtemp(prefix="crawlproject-scrapyd-"))
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "scrapyd.conf").write_text(
            "[scrapyd]\n"
            f"bind_address = 127.0.0.1\nhttp_port = {self.port}\n"
            f"eggs_dir = {self.folder / 'eggs'}\nlogs_dir = {self.folder / 'logs'}\n"
            f"items_dir = {self.folder / 'items'}\ndbs_dir = {self.folder / 'dbs'}\n"
            f"max_proc = {max_proc}\npoll_interval = 0.5\n",
            encoding="utf-8",
        )
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = (self.folder / "scrapyd.log").open("wb")
        self.process = subprocess.Popen(  # noqa: S603
            [sys.executable, "-m", "scrapyd"], cwd=self.folder, stdout=self.log, stderr=subprocess.STDOUT,
        )
        _wait(self._answers, self.process, "scrapyd")

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/daemonstatus.json", timeout=1) as answer:  # noqa: S310
                return bool(answer.status == 200)
        except OSError:
            return False

    def _cleanup(self) -> None:
        self.log.close()
