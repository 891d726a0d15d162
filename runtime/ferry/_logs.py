"""Structured logs: a stable event name as the message, the facts as fields.

Every ferry log line's message is an event name (``jobs.heartbeat.failed``,
``jobs.lease.lost``, ``jobs.worker.draining``, …) and its details ride in ``extra=``.
``--log-format json`` prints one JSON object a line for a log pipeline; ``text`` prints
the same fields as ``key=value`` after the event, with control characters from data (a
job name, an error message) written as escapes (``ferry._printable``): a log line read on
a terminal cannot recolour it, plant a link or overwrite an earlier line.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any, Literal

from ferry._printable import printable

LogFormat = Literal["text", "json"]
LOG_FORMATS: tuple[LogFormat, ...] = ("text", "json")

# Attributes every LogRecord has; anything else on a record came from ``extra=``.
_STANDARD = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}


def record_fields(record: logging.LogRecord) -> dict[str, Any]:
    """The ``extra=`` fields a record carries."""
    return {k: v for k, v in vars(record).items() if k not in _STANDARD}


class JsonFormatter(logging.Formatter):
    """One JSON object a line: ``ts``, ``level``, ``logger``, ``event`` and the fields."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": record.getMessage(),
            **record_fields(record),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


class TextFormatter(logging.Formatter):
    """``<time> <LEVEL> <logger> <event> key=value …`` for a person at a terminal."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        fields = " ".join(f"{k}={printable(str(v))}" for k, v in record_fields(record).items())
        head, newline, trace = line.partition("\n")
        head, trace = printable(head), printable(trace, lines=True)
        return f"{head} {fields}{newline}{trace}" if fields else f"{head}{newline}{trace}"


def configure_logging(level: str = "INFO", log_format: LogFormat = "text") -> None:
    """Send every log record to stderr in ``log_format`` at ``level``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    logging.basicConfig(level=level.upper(), handlers=[handler], force=True)
