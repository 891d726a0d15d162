"""The shop against a real PostgreSQL: the order and its receipt run commit together (and a
listening worker hears of it at once), roll back together, the outbox joins the same
transaction, and the harness runs the ORM job and the nightly task."""

from collections.abc import Iterator

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.test import Client
from shop.jobs import send_receipt
from shop.models import DailyReport, Order
from shop.views import place

from ferry.contrib.django.settings import dsn_of, ferry_settings
from ferry.contrib.django.testing import FerryHarness
from ferry.errors import FerryError


def _count(sql: str, *params: object) -> int:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return int(cursor.fetchone()[0])


def _runs(key: str) -> int:
    schema = ferry_settings().schema
    return _count(f'SELECT count(*) FROM "{schema}".jobs WHERE idempotency_key = %s', key)


@pytest.fixture
def listener(ferry: FerryHarness) -> Iterator[psycopg.Connection]:
    """A worker's LISTEN session on the runs channel of the test database."""
    with psycopg.connect(dsn_of(connection.settings_dict), autocommit=True) as listening:
        listening.execute(f'LISTEN "{ferry_settings().schema}_jobs"')
        yield listening


def test_a_placed_order_commits_with_its_receipt_run_and_wakes_a_listener(
    ferry: FerryHarness, listener: psycopg.Connection
) -> None:
    response = Client().post(
        "/orders", {"email": "ada@example.com", "total_cents": 1200}, "application/json"
    )
    assert response.status_code == 201
    order_id = response.json()["order_id"]
    [woken] = list(listener.notifies(timeout=10, stop_after=1))
    assert woken.payload == "default", "the commit's NOTIFY reached the listener"
    assert _runs(f"receipt:{order_id}") == 1

    trace = ferry.drain()
    assert trace.outcomes(send_receipt) == ["completed"]
    assert Order.objects.get(pk=order_id).receipt_sent, "the sync ORM body ran"


def test_a_rolled_back_order_leaves_neither_the_order_nor_the_run(ferry: FerryHarness) -> None:
    with pytest.raises(RuntimeError), transaction.atomic():
        order = Order.objects.create(email="bob@example.com", total_cents=500)
        send_receipt.enqueue_sync({"order_id": order.pk})
        raise RuntimeError("payment declined")
    assert not Order.objects.exists()
    assert _runs(f"receipt:{order.pk}") == 0


def test_an_outbox_entry_joins_the_atomic_block(ferry: FerryHarness) -> None:
    outbox = ferry.driver.outbox
    with transaction.atomic():
        kept = Order.objects.create(email="cy@example.com", total_cents=100)
        entry = outbox.append_sync("send_receipt", {"order_id": kept.pk})
    with pytest.raises(RuntimeError), transaction.atomic():
        lost = Order.objects.create(email="di@example.com", total_cents=100)
        outbox.append_sync("send_receipt", {"order_id": lost.pk})
        raise RuntimeError("rolled back")
    schema = ferry_settings().schema
    assert _count(f'SELECT count(*) FROM "{schema}".outbox') == 1
    assert _count(f'SELECT count(*) FROM "{schema}".outbox WHERE id = %s', int(entry)) == 1
    with pytest.raises(FerryError) as refused:
        outbox.append_sync("send_receipt", {"order_id": kept.pk})  # autocommit: no atomic
    assert refused.value.code == "X_INVARIANT"
    assert 'outside a transaction on the Django connection "default"' in refused.value.message


def test_the_nightly_task_is_fired_by_the_harness_without_importing_it(
    ferry: FerryHarness,
) -> None:
    place("eve@example.com", 900)
    ferry.advance("1d")
    ferry.drain()
    [report] = DailyReport.objects.all()
    assert report.orders == 1


@pytest.mark.django_db
def test_draining_inside_the_tests_open_transaction_is_refused() -> None:
    harness = FerryHarness()
    try:
        with pytest.raises(FerryError) as refused:
            harness.drain()
    finally:
        harness.close()
    assert refused.value.code == "X_INVARIANT"
    assert "transactional_db" in refused.value.fix


def test_manage_py_ferry_migrate_runs_the_cli_on_the_project_database(
    ferry: FerryHarness, capsys: pytest.CaptureFixture[str]
) -> None:
    call_command("ferry", "migrate", "--json")
    assert '"ok":true' in capsys.readouterr().out.replace(" ", "")
