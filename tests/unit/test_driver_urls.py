"""A database URL picks its driver, and a URL no driver can use is refused before any file
or connection is made."""

from __future__ import annotations

from pathlib import Path

import pytest

from ferry.drivers import (
    PostgresJobDriver,
    SqliteJobDriver,
    job_driver_from_url,
    sqlite_job_driver,
)
from ferry.errors import FerryError


@pytest.mark.parametrize(
    "url", ["postgresql://app@db:5432/app", "postgres://app@db/app", "POSTGRESQL://h/d"]
)
def test_a_postgres_url_builds_the_postgres_driver_on_the_schema(url: str) -> None:
    driver = job_driver_from_url(url, schema="jobs")
    assert isinstance(driver, PostgresJobDriver) and driver.schema == "jobs"
    assert driver.where == 'schema "jobs"'


def test_a_sqlite_url_builds_the_sqlite_driver_on_its_file(tmp_path: Path) -> None:
    driver = job_driver_from_url(f"sqlite:///{tmp_path}/q.db")
    assert isinstance(driver, SqliteJobDriver)
    assert driver.path == str(tmp_path / "q.db")
    assert not (tmp_path / "q.db").exists(), "building a driver touches nothing"


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("sqlite:///jobs.db", Path.cwd() / "jobs.db"),
        ("sqlite:///data/jobs.db", Path.cwd() / "data" / "jobs.db"),
        ("sqlite:////srv/q/jobs.db", Path("/srv/q/jobs.db")),
        ("sqlite://localhost//srv/q/jobs.db", Path("/srv/q/jobs.db")),
        ("sqlite:////srv/q/my%20jobs.db", Path("/srv/q/my jobs.db")),
    ],
)
def test_sqlite_urls_read_three_slashes_as_relative_and_four_as_absolute(
    url: str, path: Path
) -> None:
    assert sqlite_job_driver(url).path == str(path)


def test_a_plain_path_is_a_file_too(tmp_path: Path) -> None:
    assert sqlite_job_driver(tmp_path / "a.db").path == str(tmp_path / "a.db")


@pytest.mark.parametrize(
    ("url", "named"),
    [
        ("mysql://db/app", '"mysql://"'),
        ("redis-cluster://h", '"redis-cluster://"'),
        ("just-a-path.db", "no scheme"),
    ],
)
def test_a_url_no_driver_serves_is_refused_naming_the_schemes_ferry_serves(
    url: str, named: str
) -> None:
    with pytest.raises(FerryError) as refused:
        job_driver_from_url(url)
    assert refused.value.code == "X_DB_URL_INVALID"
    assert "scheme" in refused.value.message and named in refused.value.message
    assert "postgresql://" in refused.value.fix and "sqlite:///" in refused.value.fix


@pytest.mark.parametrize(
    ("url", "code", "named"),
    [
        ("sqlite://db-host/jobs.db", "X_DB_URL_INVALID", "names a host"),
        ("sqlite://", "X_DB_URL_INVALID", "no file path"),
        ("sqlite:///:memory:", "X_DB_URL_INVALID", "memory_job_driver"),
        ("sqlite:///q.db?cache=shared", "X_DB_URL_INVALID", "cache"),
        ("sqlite:///q.db?busy_timeout_ms=soon", "X_DB_URL_INVALID", "'soon'"),
        ("sqlite:///q.db?busy_timeout_ms=0", "X_INVARIANT", "busy_timeout_ms"),
        ("sqlite:///q.db?synchronous=off", "X_INVARIANT", "'off'"),
    ],
)
def test_a_sqlite_url_the_driver_cannot_use_is_refused(url: str, code: str, named: str) -> None:
    with pytest.raises(FerryError) as refused:
        sqlite_job_driver(url)
    assert refused.value.code == code
    assert named in f"{refused.value.message} {refused.value.fix}"


def test_keyword_settings_win_over_the_urls() -> None:
    driver = sqlite_job_driver("sqlite:///q.db?synchronous=normal", synchronous="full")
    assert driver._db.target.synchronous == "full"
    assert sqlite_job_driver("sqlite:///q.db?synchronous=NORMAL")._db.target.synchronous == (
        "normal"
    )


@pytest.mark.parametrize("poll", [0, -5, True])
def test_a_wake_poll_below_one_millisecond_is_refused(poll: int) -> None:
    with pytest.raises(FerryError) as refused:
        sqlite_job_driver("q.db", wake_poll_ms=poll)
    assert refused.value.code == "X_INVARIANT" and "wake_poll_ms" in refused.value.message
