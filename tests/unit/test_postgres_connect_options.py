"""How the Postgres driver reads a URL to connect with: one URL per host it names, in
order, and its per-host ``connect_timeout`` and per-statement ``command_timeout`` taken out
of what asyncpg sees."""

from __future__ import annotations

import pytest

from ferry.drivers import job_driver_from_url
from ferry.drivers._postgres.connect import (
    DEFAULT_COMMAND_TIMEOUT_S,
    DEFAULT_CONNECT_TIMEOUT_S,
    ConnectOptions,
)
from ferry.drivers._urls import redacted
from ferry.errors import FerryError


def test_a_multi_host_url_is_tried_host_by_host_in_its_order() -> None:
    options = ConnectOptions.of(
        "postgresql://app:s%40cret@db-a:5432,db-b:5433/jobs"
        "?target_session_attrs=read-write&connect_timeout=3&command_timeout=20"
    )
    assert options.hosts == (
        "postgresql://app:s%40cret@db-a:5432/jobs?target_session_attrs=read-write",
        "postgresql://app:s%40cret@db-b:5433/jobs?target_session_attrs=read-write",
    )
    assert options.dsn == (
        "postgresql://app:s%40cret@db-a:5432,db-b:5433/jobs?target_session_attrs=read-write"
    )
    assert (options.connect_timeout_s, options.command_timeout_s) == (3.0, 20.0)


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://app@db/jobs",
        "postgresql://app@/jobs?host=/run/postgresql",
        "postgresql:///jobs",
        "postgresql://[::1]:5432/jobs",
    ],
)
def test_a_single_host_url_is_one_target_with_the_default_timeouts(url: str) -> None:
    options = ConnectOptions.of(url)
    assert len(options.hosts) == 1
    assert options.connect_timeout_s == DEFAULT_CONNECT_TIMEOUT_S
    assert options.command_timeout_s == DEFAULT_COMMAND_TIMEOUT_S


def test_zero_means_no_limit() -> None:
    options = ConnectOptions.of("postgresql://db/jobs?connect_timeout=0&command_timeout=0")
    assert (options.connect_timeout_s, options.command_timeout_s) == (None, None)
    assert "timeout" not in options.dsn


@pytest.mark.parametrize("parameter", ["connect_timeout", "command_timeout"])
def test_a_timeout_that_is_not_seconds_is_refused_naming_it(parameter: str) -> None:
    with pytest.raises(FerryError) as refused:
        job_driver_from_url(f"postgresql://db/jobs?{parameter}=soon")
    assert refused.value.code == "X_DB_URL_INVALID"
    assert parameter in refused.value.message and "'soon'" in refused.value.message
    assert f"{parameter}=10" in refused.value.fix


def test_a_multi_host_url_is_named_without_its_password_and_located_by_its_hosts() -> None:
    url = "postgresql://app:s3cret@db-a:5432,db-b:5433/app?target_session_attrs=read-write"
    driver = job_driver_from_url(url, schema="jobs")
    assert driver.location == "postgresql://db-a:5432,db-b:5433/app?schema=jobs"
    assert redacted(url) == (
        "postgresql://app:***@db-a:5432,db-b:5433/app?target_session_attrs=read-write"
    )
