"""The declared policies of a job: ``Retry``, ``Concurrency`` and ``RateLimit``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

from ferry._checks import require_count
from ferry._duration import Duration, to_ms
from ferry.errors import FerryError

InputT = TypeVar("InputT")


@dataclass(frozen=True, slots=True)
class Retry:
    """How many attempts a run gets and how long to wait between them.

    The defaults — 3 attempts, 1 s doubling, capped at 30 s — are the spec's. Backoff is
    deterministic (no jitter) so a frozen-clock test can name the instant of a retry.
    """

    attempts: int = 3
    backoff: Literal["exponential", "fixed"] = "exponential"
    base: Duration = "1s"
    max: Duration = "30s"
    base_ms: int = field(init=False)
    max_ms: int = field(init=False)

    def __post_init__(self) -> None:
        require_count(
            self.attempts,
            what="Retry(attempts={})",
            fix="use Retry(attempts=1) for a job that must not be retried",
        )
        if self.backoff not in ("exponential", "fixed"):
            raise FerryError(
                "X_INVARIANT",
                f"Retry(backoff={self.backoff!r}) is not a backoff",
                'use backoff="exponential" or backoff="fixed"',
            )
        object.__setattr__(self, "base_ms", to_ms(self.base, what="Retry.base"))
        object.__setattr__(self, "max_ms", to_ms(self.max, what="Retry.max"))

    def delay_ms(self, attempt: int) -> int:
        """The wait before the attempt after ``attempt`` (1-based)."""
        if self.backoff == "fixed":
            return min(self.base_ms, self.max_ms)
        if self.base_ms == 0:
            return 0
        # Past the doubling that reaches max_ms the answer is max_ms: stop there, so an
        # attempt in the billions never builds a power of two of a billion bits.
        doublings = max(attempt - 1, 0)
        if doublings >= max(self.max_ms // self.base_ms, 1).bit_length():
            return self.max_ms
        return min(self.base_ms << doublings, self.max_ms)


@dataclass(frozen=True, slots=True)
class Concurrency(Generic[InputT]):
    """At most ``limit`` runs at once per key, across every worker of the fleet.

    ``key`` maps the input to the key runs count under (``None``: one key for the whole
    job). ``when_busy="wait"`` defers a run with a later ``run_at`` (never dropped);
    ``"fail"`` fails it at once with ``X_CONCURRENCY_BUSY``.
    """

    key: Callable[[InputT], str] | None = None
    limit: int = 1
    when_busy: Literal["wait", "fail"] = "wait"

    def __post_init__(self) -> None:
        require_count(
            self.limit,
            what="Concurrency(limit={})",
            fix="set limit=1 for one run at a time per key",
        )
        if self.when_busy not in ("wait", "fail"):
            raise FerryError(
                "X_INVARIANT",
                f"Concurrency(when_busy={self.when_busy!r}) is not a policy",
                'use when_busy="wait" (defer) or when_busy="fail"',
            )


MAX_RATE_PER_MS = 7 * 86_400_000
"""The longest ``RateLimit.per``: a week. A window is a sliding log of start instants kept
per key, so a longer one would keep a key's log for longer than any retention."""

MAX_RATE_LIMIT = 100_000
"""The most starts one ``RateLimit`` window may hold: the log a claim reads and rewrites
per key is at most this long."""


@dataclass(frozen=True, slots=True)
class RateLimit(Generic[InputT]):
    """At most ``limit`` runs of one key *start* in any interval of length ``per``, across
    every worker of the fleet.

    ``key`` maps the input to the key runs count under (``None``: one key for the whole
    job). A run over the limit is deferred by the claim to the instant its key has room —
    never dropped, no attempt counted, no worker slot held; runs of other keys and jobs are
    not slowed. Every attempt is a start: a retry and a wake from ``step.sleep`` take a
    place in the window too.
    """

    limit: int
    per: Duration
    key: Callable[[InputT], str] | None = None
    per_ms: int = field(init=False)

    def __post_init__(self) -> None:
        if isinstance(self.limit, bool) or not isinstance(self.limit, int) or self.limit < 1:
            raise FerryError(
                "X_RATE_INVALID",
                f"RateLimit(limit={self.limit!r}) must be a whole number of at least 1",
                'give the most runs that may start per window, e.g. RateLimit(limit=100, per="1m")',
            )
        if self.limit > MAX_RATE_LIMIT:
            raise FerryError(
                "X_RATE_INVALID",
                f"RateLimit(limit={self.limit}) is over {MAX_RATE_LIMIT:,} starts per window",
                f'use a shorter window with a smaller limit (limit={self.limit} per "1m" is '
                f'limit={max(self.limit // 60, 1)} per "1s")',
            )
        try:
            per_ms = to_ms(self.per, what="RateLimit.per")
        except FerryError as error:
            raise FerryError("X_RATE_INVALID", error.message, error.fix) from None
        if not 1 <= per_ms <= MAX_RATE_PER_MS:
            raise FerryError(
                "X_RATE_INVALID",
                f"RateLimit(per={self.per!r}) is {per_ms} ms, outside 1 ms to 7 days",
                'give a window such as per="1s", per="1m" or per="1h"',
            )
        if self.key is not None and not callable(self.key):
            raise FerryError(
                "X_RATE_INVALID",
                f"RateLimit(key={self.key!r}) is not a function of the input",
                "pass key=lambda i: i.account_id, or leave key out to limit the job as a whole",
            )
        object.__setattr__(self, "per_ms", per_ms)


@dataclass(frozen=True, slots=True)
class Caps:
    """Fleet-wide caps on running runs, across every job: per tenant, per queue, in total.

    They are the worker fleet's policy, not a job's: give every worker of a fleet the same
    caps (one Deployment's env does). A run over a cap is deferred with a later ``run_at``,
    attempt uncounted — never dropped. A run without a tenant counts toward no tenant cap.
    """

    per_tenant: int | None = None
    per_queue: Mapping[str, int] = field(default_factory=dict)
    total: int | None = None

    def __post_init__(self) -> None:
        limits = {"per_tenant": self.per_tenant, "total": self.total}
        limits.update({f"per_queue[{q!r}]": n for q, n in self.per_queue.items()})
        for what, limit in limits.items():
            if limit is not None:
                require_count(
                    limit,
                    what=f"Caps({what}={{}})",
                    fix="leave a cap out for no cap, or give the most runs it may hold at once",
                )

    def slots_for(self, *, tenant: str | None, queue: str) -> list[tuple[str, int]]:
        """The ``(lease key, limit)`` pairs a run of ``tenant`` on ``queue`` must hold."""
        slots: list[tuple[str, int]] = []
        if self.per_tenant is not None and tenant is not None:
            slots.append((f"cap:tenant:{tenant}", self.per_tenant))
        if queue in self.per_queue:
            slots.append((f"cap:queue:{queue}", self.per_queue[queue]))
        if self.total is not None:
            slots.append(("cap:total", self.total))
        return slots
