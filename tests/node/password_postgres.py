"""A PostgreSQL that checks passwords, listening on the node's address.

The suite's server trusts every local connection (the embedded pgserver runs with ``trust``),
so a wrong password would go unnoticed there. This one is initialised with
``scram-sha-256`` for every connection: a pod given the wrong password gets the server's
own ``password authentication failed`` — the failure a mistyped Secret causes in a real
cluster. It runs pgserver's own binaries, as pgserver's system user (PostgreSQL refuses to
run as root), in a temporary directory that goes with it.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pgserver
from pgserver.utils import ensure_user_exists
from support.processes import free_port
from support.waiting import eventually_blocking

SYSTEM_USER = "pgserver"
BIN = Path(pgserver.__file__).parent / "pginstall" / "bin"


@contextlib.contextmanager
def password_postgres(host: str, password: str) -> Iterator[tuple[str, int]]:
    """A server on ``host`` whose user ``postgres`` has ``password``; yields (host, port)."""
    entry = ensure_user_exists(SYSTEM_USER)
    assert entry is not None
    workdir = Path(tempfile.mkdtemp(prefix="ferry-pw-pg-"))
    workdir.chmod(0o755)
    data, secret = workdir / "data", workdir / "password"
    secret.write_text(password)
    shutil.chown(workdir, entry.pw_uid, entry.pw_gid)
    shutil.chown(secret, entry.pw_uid, entry.pw_gid)
    port = free_port()
    server: subprocess.Popen[bytes] | None = None
    try:
        subprocess.run(
            [
                str(BIN / "initdb"),
                f"--pgdata={data}",
                "--username=postgres",
                "--auth=scram-sha-256",
                f"--pwfile={secret}",
            ],
            check=True,
            capture_output=True,
            user=SYSTEM_USER,
        )
        # initdb lets in loopback only; the pods come from the bridge.
        with (data / "pg_hba.conf").open("a") as hba:
            hba.write("host all all 0.0.0.0/0 scram-sha-256\n")
        server = subprocess.Popen(
            [
                str(BIN / "postgres"),
                "-D",
                str(data),
                "-c",
                f"listen_addresses={host}",
                "-p",
                str(port),
                "-k",
                str(workdir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=(workdir / "server.log").open("wb"),
            user=SYSTEM_USER,
        )
        eventually_blocking(
            lambda: _accepting(host, port),
            what="the password-checking PostgreSQL accepting connections",
            within_s=60,
            every_s=0.2,
        )
        yield host, port
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        shutil.rmtree(workdir, ignore_errors=True)


def _accepting(host: str, port: int) -> bool:
    done = subprocess.run(
        [str(BIN / "pg_isready"), "-h", host, "-p", str(port)], capture_output=True, check=False
    )
    return done.returncode == 0
