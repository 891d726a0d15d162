"""The one local ``redis-server`` the ``ferry-redis`` system runs against.

Debian's binary (``scripts/install-redis.sh``) on a free loopback port in a temporary
directory, append-only file on with ``appendfsync everysec`` (Redis' own default once AOF
is on; docs/drivers.md says what each setting loses), deleted afterwards.
``FERRY_BENCH_REDIS_URL`` points the bench at a server you run instead.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

from bench.systems.ferry_redis_system import REDIS_URL_VARIABLE

APPENDFSYNC = "everysec"


@contextmanager
def local_redis() -> Iterator[str]:
    """A running Redis's URL, exported as ``FERRY_BENCH_REDIS_URL`` for the workers."""
    configured = os.environ.get(REDIS_URL_VARIABLE)
    if configured:
        yield configured
        return
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    directory = tempfile.mkdtemp(prefix="ferry-bench-redis-")
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", directory,
         "--appendonly", "yes", "--appendfsync", APPENDFSYNC, "--save", ""],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"redis://127.0.0.1:{port}/0"
    try:
        for _ in range(500):
            with socket.socket() as connection:
                if connection.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.02)
        os.environ[REDIS_URL_VARIABLE] = url
        yield url
    finally:
        os.environ.pop(REDIS_URL_VARIABLE, None)
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(directory, ignore_errors=True)


def describe(url: str) -> str:
    """The server's version and persistence, as the table header reports them."""
    from redis import Redis

    with Redis.from_url(url, decode_responses=True) as client:
        version = client.info("server")["redis_version"]
        settings = {**client.config_get("appendonly"), **client.config_get("appendfsync")}
    return (
        f"Redis {version}, appendonly={settings.get('appendonly')}, "
        f"appendfsync={settings.get('appendfsync')}"
    )
