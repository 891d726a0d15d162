"""Who this process is: a worker id per process start (who holds a lease, readable in
``jobs show``) and the ferry version it runs."""

from __future__ import annotations

import os
import secrets
import socket
from functools import cache
from importlib.metadata import PackageNotFoundError, version


def new_worker_id() -> str:
    """``<host>:<pid>:<random>`` — unique per process start, so a restarted pod on the same
    host and pid can never settle the runs its predecessor held."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


@cache
def ferry_version() -> str:
    """The installed ferry's version (``ferry --version``, the worker registry)."""
    try:
        return version("ferry")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"
