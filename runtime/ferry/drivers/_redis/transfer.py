"""``RunTransfer`` on Redis: the shared store (``_stores.transfer``) over the driver's
scripts, but for the import of a batch, which is one script of its own
(``lua/transfer_import_batch.lua``): the runs, their steps and the holders of the keys it
skipped, atomic on the server — where a SQL store runs them as a plan in one transaction,
with Python between its statements, which a Redis script cannot have.

A reserved run is ``moving``: out of the claim index, in ``{prefix}:moving:<target>`` (so a
rerun to the same target finds what an interrupted drain left), held by the drain's id in
``locked_by``, with the state it had in ``moving_from``.
"""

from __future__ import annotations

from typing import Any

from ferry.drivers._columns import stored_columns
from ferry.drivers._stores.statements import Statements
from ferry.drivers._stores.steps import step_parameters
from ferry.drivers._stores.transfer import ImportBatch
from ferry.drivers._transfer import judged
from ferry.drivers.protocol import ImportResult, MovedRun


def in_one_script(statements: Statements) -> ImportBatch:
    """Redis' ``ImportBatch``: ``transfer_import_batch``, which wakes the queues given a due
    run itself."""

    async def batch(runs: list[MovedRun], now: int) -> tuple[dict[str, ImportResult], bool]:
        rows = await statements.write(
            "transfer_import_batch", runs=list(map(_carried, runs)), now=now
        )
        return {
            run.idempotency_key: judged(row, run)
            if row["held"]
            else ImportResult("imported", row["id"])
            for run, row in zip(runs, rows, strict=True)
        }, False

    return batch


def _carried(run: MovedRun) -> dict[str, Any]:
    """One run as the script takes it: its columns as the strings its hash keeps (every
    digit of a large integer with them, which a JSON number would lose in Lua), and its
    steps; an absent value is left out (JSON's null is no nil in Lua)."""
    columns = {name: str(value) for name, value in stored_columns(run).items() if value is not None}
    steps = [
        {name: value for name, value in step_parameters(step).items() if value is not None}
        for step in run.steps
    ]
    return {**columns, "steps": steps}
