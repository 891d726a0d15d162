"""An empty name is no name: refused with its code wherever a command takes one."""

from __future__ import annotations

import pytest

from .conftest import Ferry


@pytest.mark.parametrize(
    ("command", "named"),
    [
        (["queues", "pause", ""], "queue ''"),
        (["queues", "resume", ""], "queue ''"),
        (["queues", "pause", " mail"], "queue ' mail'"),
        (["tasks", "pause", ""], "task name ''"),
        (["tasks", "show", ""], "task name ''"),
        (["worker", "--queues", "default,,mail", "--metrics-port", "0"], "--queues item ''"),
    ],
    ids=repr,
)
def test_an_empty_name_is_refused_with_x_invariant(
    ferry: Ferry, command: list[str], named: str
) -> None:
    result = ferry(*command, "--json")
    assert result.code == 1, result
    [finding] = result.envelope["findings"]
    assert finding["code"] == "X_INVARIANT"
    assert named in finding["message"] and finding["fix"]
    if command[0] == "queues":
        stats = ferry("jobs", "stats", "--json").envelope["data"]["queues"]
        assert [q for q in stats if q["paused"]] == [], "a nameless queue was paused"
