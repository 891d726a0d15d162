"""An enqueue batch on a SQL driver: the write, then the runs holding the keys it skipped.

Both SQL drivers enqueue with the same two statements whatever the batch size —
``enqueue`` writes the runs whose keys are free (one per key: a repeated key in the batch
resolves to its first request's run) and ``enqueue_existing`` reads the runs already
holding the others — on their own connection or on the application's, inside its
transaction. A key whose run was pruned between the two is free again and written on
the next round. A request whose dedupe rule is not "retained" first has the stored run
outside its rule give the key up (``enqueue_supersede``, in the same transaction), so the
write that follows takes it. A parent's fan-out (``enqueue_children``) resolves alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ferry.drivers._columns import Row
from ferry.drivers.protocol import EnqueueRequest, EnqueueResult


class EnqueueBatch:
    """Requests in, one result per request out (in request order)."""

    def __init__(self, requests: Sequence[EnqueueRequest]) -> None:
        self._requests = requests
        self._first: dict[str, int] = {}  # key -> the request that writes it; later ones dedupe
        for index, request in enumerate(requests):
            self._first.setdefault(request.idempotency_key, index)
        self._runs: dict[str, EnqueueResult] = {}
        self.woke = False
        """A run due at once was written (noted when ``written`` is given the instant)."""
        self.due_later: int | None = None
        """When the soonest run written for later falls due (likewise)."""

    def pending(self) -> list[EnqueueRequest]:
        """The requests ``enqueue`` writes next: one per key not resolved yet."""
        return [self._requests[i] for key, i in self._first.items() if key not in self._runs]

    def superseding(self) -> list[EnqueueRequest]:
        """The pending requests whose dedupe rule may move a stored run's key aside (any
        rule but "retained"): ``enqueue_supersede`` runs for them before ``enqueue``."""
        return [r for r in self.pending() if not r.dedupe.retained]

    def written(self, rows: Iterable[Row], now_ms: int | None = None) -> list[str]:
        """Take the runs ``enqueue`` wrote (``id``, ``idempotency_key``; with ``now_ms``
        also ``run_at_ms``, to note when idle workers should wake); answers the keys it
        skipped, for ``enqueue_existing``."""
        for row in rows:
            self._runs[row["idempotency_key"]] = EnqueueResult(row["id"], deduplicated=False)
            if now_ms is None:
                continue
            if row["run_at_ms"] <= now_ms:
                self.woke = True
            elif self.due_later is None or row["run_at_ms"] < self.due_later:
                self.due_later = row["run_at_ms"]
        return [key for key in self._first if key not in self._runs]

    def existing(self, rows: Iterable[Row]) -> None:
        """Take the runs already holding skipped keys (``id``, ``idempotency_key``)."""
        for row in rows:
            self._runs[row["idempotency_key"]] = EnqueueResult(row["id"], deduplicated=True)

    @property
    def runs_written(self) -> int:
        """How many runs the batch wrote (not deduplicated): what a fan-out counts."""
        return sum(not result.deduplicated for result in self._runs.values())

    def results(self) -> list[EnqueueResult]:
        """One result per request, in request order (a repeated key is deduplicated)."""
        return [
            EnqueueResult(self._runs[r.idempotency_key].job_id, True)
            if self._first[r.idempotency_key] != index
            else self._runs[r.idempotency_key]
            for index, r in enumerate(self._requests)
        ]
