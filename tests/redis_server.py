"""A real ``redis-server`` for the tests: Debian's binary on a free loopback port, in a
temporary directory, append-only file on; started and stopped by the test session.

``make test-assets`` installs the binary (``scripts/install-redis.sh``). ``REDIS_URL``
points the suite at a server you run instead.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RedisServer:
    """One ``redis-server`` process; ``restart()`` keeps its port and its data."""

    def __init__(self, *, appendfsync: str = "everysec") -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError(
                "redis-server is not installed: run `make test-assets` "
                "(scripts/install-redis.sh installs Debian's redis-server), or set REDIS_URL"
            )
        self.binary = binary
        self.port = _free_port()
        self.directory = Path(tempfile.mkdtemp(prefix="ferry-test-redis-"))
        self.appendfsync = appendfsync
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start the server and return once it answers PING (bounded: a guard)."""
        log = (self.directory / "redis.log").open("ab")
        self.process = subprocess.Popen(
            [
                self.binary,
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--dir", str(self.directory),
                "--appendonly", "yes",
                "--appendfsync", self.appendfsync,
                "--save", "",
                "--daemonize", "no",
            ],
            stdout=log,
            stderr=log,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited:\n{self.log()}")
            if self._answers():
                return
            time.sleep(0.02)
        raise RuntimeError(f"redis-server did not answer within 30 s:\n{self.log()}")

    def stop(self) -> None:
        """Stop the server (SIGTERM: it finishes writing its append-only file)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
        self.process = None

    def kill(self) -> None:
        """SIGKILL the server: what a crash of the host process looks like."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)

    def log(self) -> str:
        path = self.directory / "redis.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as connection:
                connection.sendall(b"PING\r\n")
                return connection.recv(64).startswith(b"+PONG")
        except OSError:
            return False


def delete_prefix(url: str, prefix: str) -> None:
    """Delete every key of driver prefix ``prefix`` on the server at ``url``."""
    from redis import Redis

    with Redis.from_url(url) as client:
        for key in client.scan_iter(match="{" + prefix + "}:*", count=1_000):
            client.unlink(key)
