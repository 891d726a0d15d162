"""Connection failures as refusals: which code, and never the password."""

from __future__ import annotations

import socket

import asyncpg
import pytest

from ferry.drivers._postgres.reach import redacted, refusal_for

DSN = "postgresql://app:s3cret@db.internal:5432/app?sslmode=require&sslpassword=k3y"


def test_the_url_is_shown_without_its_password_or_secret_parameters() -> None:
    assert (
        redacted(DSN) == "postgresql://app:***@db.internal:5432/app?sslmode=require&sslpassword=***"
    )
    assert redacted("postgresql://app@db/app") == "postgresql://app@db/app"
    assert redacted("postgresql://[::1") == "the database URL"


@pytest.mark.parametrize(
    "error",
    [
        ConnectionRefusedError(111, "Connect call failed"),
        socket.gaierror(-2, "Name or service not known"),
        TimeoutError(),
        asyncpg.ConnectionDoesNotExistError("connection was closed in the middle of operation"),
        asyncpg.InvalidPasswordError('password authentication failed for user "app"'),
        asyncpg.InvalidCatalogNameError('database "app" does not exist'),
        asyncpg.CannotConnectNowError("the database system is starting up"),
        asyncpg.TooManyConnectionsError("sorry, too many clients already"),
    ],
    ids=lambda error: type(error).__name__,
)
def test_every_way_of_not_reaching_the_server_is_x_db_unreachable(error: Exception) -> None:
    refusal = refusal_for(error, DSN)
    assert refusal is not None and refusal.code == "X_DB_UNREACHABLE"
    assert "app:***@db.internal:5432" in refusal.message
    assert "s3cret" not in str(refusal) and "k3y" not in str(refusal)


def test_an_error_that_echoes_the_password_is_scrubbed() -> None:
    refusal = refusal_for(OSError("could not connect with s3cret"), DSN)
    assert refusal is not None and "s3cret" not in refusal.message


def test_a_bug_is_not_mistaken_for_an_unreachable_database() -> None:
    assert refusal_for(KeyError("x"), DSN) is None
    assert refusal_for(asyncpg.UndefinedTableError("no such table"), DSN) is None


def test_a_connection_lost_inside_a_transaction_is_read_off_the_rollbacks_complaint() -> None:
    closed = asyncpg.InterfaceError("cannot call Transaction.__aexit__(): connection is closed")
    closed.__context__ = asyncpg.AdminShutdownError("terminating connection (admin command)")
    refusal = refusal_for(closed, DSN)
    assert refusal is not None and refusal.code == "X_DB_UNREACHABLE"
    assert "AdminShutdownError" in refusal.message
    assert refusal_for(asyncpg.InterfaceError("misuse"), DSN) is None
