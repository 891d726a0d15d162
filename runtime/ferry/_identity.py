"""A worker id per process start: who holds a lease, readable in ``jobs show``."""

from __future__ import annotations

import os
import secrets
import socket


def new_worker_id() -> str:
    """``<host>:<pid>:<random>`` — unique per process start, so a restarted pod on the same
    host and pid can never settle the runs its predecessor held."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
