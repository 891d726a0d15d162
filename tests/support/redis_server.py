"""A real ``redis-server`` for the tests: Debian's binary on a free loopback port, in a
temporary directory, append-only file on.

``make test-assets`` installs the binary (``scripts/install-redis.sh``). The session's
server is the ``redis_url`` fixture (``support.plugin``); ``REDIS_URL`` points the suite
at a server you run instead. A test that restarts or kills a server starts one of its own.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from support.processes import free_port
from support.waiting import eventually_blocking

T = TypeVar("T")

START_BOUND_S = 30.0
"""How long a start may take to answer PING before it fails (a guard, not a timing)."""


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
        self.port = free_port()
        self.directory = Path(tempfile.mkdtemp(prefix="ferry-test-redis-"))
        self.appendfsync = appendfsync
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start the server and return once it answers PING."""
        with (self.directory / "redis.log").open("ab") as log:
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
        eventually_blocking(
            self._answers,
            what=f"redis-server answering PING on port {self.port}",
            within_s=START_BOUND_S,
            every_s=0.02,
            context=self.log,
        )

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
        """Whether it answers PING yet; a server that exited fails the wait with its log."""
        if self.process is None or self.process.poll() is not None:
            raise AssertionError(f"redis-server exited:\n{self.log()}")
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


async def as_a_role_would(call: Callable[[], Awaitable[T]], *, tries: int = 3) -> T:
    """``call()``, tried again after a connection error the way a role's loop does: the
    first command after a server restart may meet the dead socket (the client does not
    retry a script itself: one whose reply was lost may have run)."""
    from redis.exceptions import ConnectionError as RedisConnectionError

    for _ in range(tries - 1):
        try:
            return await call()
        except RedisConnectionError:
            continue
    return await call()
