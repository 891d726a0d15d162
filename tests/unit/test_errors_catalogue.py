"""Every code ferry can raise is in one catalogue and on one docs page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ferry.errors import CODES, FerryError

ROOT = Path(__file__).resolve().parents[2]


def test_docs_errors_page_lists_exactly_the_catalogue() -> None:
    page = (ROOT / "docs" / "errors.md").read_text()
    documented = set(re.findall(r"^\| `(X_[A-Z_]+)` \|", page, flags=re.MULTILINE))
    assert documented == set(CODES)


def test_every_code_raised_in_the_source_is_catalogued() -> None:
    raised: set[str] = set()
    for source in (ROOT / "runtime").rglob("*.py"):
        raised |= set(re.findall(r'"(X_[A-Z_]+)"', source.read_text()))
    assert raised <= set(CODES), raised - set(CODES)


def test_an_error_renders_code_message_and_fix() -> None:
    error = FerryError("X_INVARIANT", 'task "t" has tz "Bogota"', 'use tz="America/Bogota"')
    assert str(error) == 'X_INVARIANT: task "t" has tz "Bogota"\nfix: use tz="America/Bogota"'
    assert error.to_dict()["fix"] == 'use tz="America/Bogota"'


def test_an_uncatalogued_code_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="X_MADE_UP"):
        FerryError("X_MADE_UP", "m", "f")
