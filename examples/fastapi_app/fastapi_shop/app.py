"""The shop as a FastAPI app: ferry opened by the lifespan, the order and its receipt run in
one transaction of the app's own session, the dashboard behind the app's own auth."""

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, HTTPException, Request
from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncSession

from fastapi_shop import jobs
from fastapi_shop.database import engine, sessions
from fastapi_shop.jobs import send_receipt
from fastapi_shop.models import Base, Order
from ferry import define_api
from ferry.contrib.fastapi import dashboard, ferry_lifespan, transaction
from ferry.drivers import PostgresJobDriver, postgres_job_driver

api = define_api(jobs=[jobs], tasks=[jobs])


class NewOrder(BaseModel):
    email: str
    total_cents: int


def staff_only(request: Request) -> Literal["manage"] | None:
    """The app's own auth (here: a header its proxy sets for signed-in staff)."""
    return "manage" if request.headers.get("x-staff") == "yes" else None


def create_app(driver: PostgresJobDriver) -> FastAPI:
    @asynccontextmanager
    async def tables(app: FastAPI) -> AsyncIterator[None]:
        async with engine.begin() as connection:
            await connection.run_sync(Base.metadata.create_all)
        yield

    app = FastAPI(lifespan=ferry_lifespan(driver, then=tables))
    Transaction = Annotated[AsyncSession, Depends(transaction(sessions))]

    @app.post("/orders", status_code=201)
    async def place_order(order: NewOrder, session: Transaction) -> dict[str, Any]:
        row = Order(email=order.email, total_cents=order.total_cents)
        session.add(row)
        await session.flush()
        await send_receipt.enqueue({"order_id": row.id}, connection=session)  # same tx
        if order.total_cents <= 0:  # raised after the enqueue: both roll back
            raise HTTPException(422, "an order must cost something")
        return {"order_id": row.id}

    app.mount("/admin", dashboard(driver, authorize=staff_only, tasks=list(api.tasks.values())))
    return app


app = create_app(
    postgres_job_driver(
        os.environ.get("DATABASE_URL", "postgresql://postgres@localhost/shop"),
        schema=os.environ.get("FERRY_SCHEMA", "ferry"),
    )
)
