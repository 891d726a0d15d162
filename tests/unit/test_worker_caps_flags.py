"""``ferry worker --tenant-cap/--queue-caps/--total-cap`` read into the fleet's Caps."""

from __future__ import annotations

import pytest

from ferry import FerryError
from ferry._cli import build_parser
from ferry._cli.worker_command import caps_from, queues_from
from ferry._worker import Caps


def parse(*words: str) -> Caps | None:
    return caps_from(build_parser().parse_args(["worker", *words]))


def test_no_cap_flags_means_no_caps() -> None:
    assert parse() is None


def test_cap_flags_become_caps() -> None:
    caps = parse("--tenant-cap", "2", "--queue-caps", "default=20,mail=5", "--total-cap", "50")
    assert caps == Caps(per_tenant=2, per_queue={"default": 20, "mail": 5}, total=50)
    assert caps is not None
    assert caps.slots_for(tenant="acme", queue="mail") == [
        ("cap:tenant:acme", 2),
        ("cap:queue:mail", 5),
        ("cap:total", 50),
    ]
    assert caps.slots_for(tenant=None, queue="other") == [("cap:total", 50)]


def test_a_malformed_queue_cap_is_refused_naming_it() -> None:
    with pytest.raises(FerryError) as refused:
        parse("--queue-caps", "default:20")
    assert refused.value.code == "X_INVARIANT" and "'default:20'" in refused.value.message


def test_queues_name_queues_and_an_empty_one_is_refused() -> None:
    assert queues_from(None) is None and queues_from("") is None
    assert queues_from("default,mail") == ["default", "mail"]
    with pytest.raises(FerryError) as refused:
        queues_from("default,,mail")
    assert refused.value.code == "X_INVARIANT" and "--queues item ''" in refused.value.message
