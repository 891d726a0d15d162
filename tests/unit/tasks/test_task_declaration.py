"""``task(...)``: a name that is no name is refused where it is written."""

from __future__ import annotations

import pytest

from ferry import FerryError, task


@pytest.mark.parametrize(
    ("name", "code"),
    [("", "X_INVARIANT"), (" nightly", "X_INVARIANT"), ("night\x00ly", "X_TEXT_NOT_STORABLE")],
)
def test_a_task_name_that_is_no_name_is_refused(name: str, code: str) -> None:
    with pytest.raises(FerryError) as refused:
        task(cron="0 3 * * *", tz="UTC", enqueue=lambda occurrence_ms: [], name=name)
    assert refused.value.code == code
    assert "task name" in refused.value.message and refused.value.fix
