"""The shop on the real PostgreSQL at DATABASE_URL: its tables emptied per test, ferry's in a
schema of the test's own, time frozen."""

import os
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import asyncpg
import httpx
import pytest
from fastapi import FastAPI
from fastapi_shop.app import api, create_app
from fastapi_shop.database import engine
from fastapi_shop.models import Base
from sqlalchemy import text

from ferry.drivers import PostgresJobDriver, postgres_job_driver
from ferry.testing import FrozenClock, Harness


@dataclass
class Shop:
    app: FastAPI
    driver: PostgresJobDriver
    harness: Harness
    client: httpx.AsyncClient


@pytest.fixture
async def tables() -> AsyncIterator[None]:
    async with engine.begin() as connection:
        await connection.run_sync(Base.metadata.create_all)
        await connection.execute(text("TRUNCATE orders, daily_reports"))
    yield
    await engine.dispose()  # its connections belong to this test's event loop


@pytest.fixture
async def shop(tables: None) -> AsyncIterator[Shop]:
    dsn = os.environ["DATABASE_URL"]
    schema = f"ferry_t_{uuid.uuid4().hex[:12]}"
    clock = FrozenClock()
    driver = postgres_job_driver(dsn, schema=schema, clock=clock)
    app = create_app(driver)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://shop") as client:
            harness = Harness(driver=driver, clock=clock, tasks=list(api.tasks.values()))
            with harness.installed():
                yield Shop(app, driver, harness, client)
    connection = await asyncpg.connect(dsn)
    await connection.execute(f'DROP SCHEMA "{schema}" CASCADE')
    await connection.close()
