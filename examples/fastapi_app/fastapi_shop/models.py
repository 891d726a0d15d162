"""The shop's tables (SQLAlchemy 2, async)."""

from sqlalchemy import BigInteger, Boolean, Integer, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class Order(Base):
    __tablename__ = "orders"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    email: Mapped[str] = mapped_column(String(254))
    total_cents: Mapped[int] = mapped_column(Integer)
    receipt_sent: Mapped[bool] = mapped_column(Boolean, default=False)


class DailyReport(Base):
    __tablename__ = "daily_reports"

    occurrence_ms: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    orders: Mapped[int] = mapped_column(Integer)
