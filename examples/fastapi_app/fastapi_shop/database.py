"""The application's own database: one async engine and its sessions (SQLAlchemy over asyncpg)."""

import os

from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine


def engine_for(dsn: str) -> AsyncEngine:
    return create_async_engine(dsn.replace("postgresql://", "postgresql+asyncpg://", 1))


engine = engine_for(os.environ.get("DATABASE_URL", "postgresql://postgres@localhost/shop"))
sessions = async_sessionmaker(engine, expire_on_commit=False)
