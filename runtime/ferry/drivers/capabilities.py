"""What a driver offers beyond the core, and the one refusal for what it lacks.

A capability is an attribute of the driver named after it, holding the store that
implements its protocol (``driver.slots`` is a ``SlotStore``). A driver declares one by
having the attribute; a driver without it simply has none. Everything that needs a
capability asks for it here with ``need``, at its start — a role when it is built, a
command before it reads anything, a worker before it claims — so a missing one refuses by
name (``X_DRIVER_CAPABILITY``: the driver, the capability, what needed it) instead of
degrading silently. The one exception is the spec's: job concurrency on a driver without
``slots`` is ``X_JOB_CONCURRENCY_UNENFORCEABLE`` (``ferry._jobs.policy``).

Adding a capability is a protocol in
``ferry.drivers.protocol``, an entry in ``CAPABILITIES`` and the attribute on each driver
that offers it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

from ferry.drivers.protocol import (
    ChildRuns,
    JobDriver,
    JobIntrospection,
    LeaseStore,
    OutboxStore,
    RateBuckets,
    RecordStore,
    RunResults,
    RunTransfer,
    SlotStore,
)
from ferry.errors import FerryError

StoreT = TypeVar("StoreT")


@dataclass(frozen=True, slots=True)
class Capability(Generic[StoreT]):
    """One capability: its name (the driver attribute holding a store of protocol
    ``StoreT``) and what it is for."""

    name: str
    what: str
    """What it stores, as a refusal words it."""


SLOTS: Capability[SlotStore] = Capability("slots", "fleet-wide concurrency slots and caps")
RATES: Capability[RateBuckets] = Capability("rates", "fleet-wide rate windows")
LEASES: Capability[LeaseStore] = Capability("leases", "fenced expiring leases")
RECORDS: Capability[RecordStore] = Capability("records", "keyed records and logs")
OUTBOX: Capability[OutboxStore] = Capability("outbox", "a transactional outbox")
TRANSFER: Capability[RunTransfer] = Capability("transfer", "moving runs to another store")
INTROSPECT: Capability[JobIntrospection] = Capability("introspect", "operator reads and actions")
RESULTS: Capability[RunResults] = Capability("results", "run statuses and news of runs ending")
CHILDREN: Capability[ChildRuns] = Capability("children", "child runs and a parent waiting for them")

CAPABILITIES: tuple[Capability[Any], ...] = (
    SLOTS,
    RATES,
    LEASES,
    RECORDS,
    OUTBOX,
    TRANSFER,
    INTROSPECT,
    RESULTS,
    CHILDREN,
)
"""Every capability, in the order ``ferry doctor`` lists them."""


def offered(driver: JobDriver, capability: Capability[StoreT]) -> StoreT | None:
    """The driver's store for ``capability``, or None when it does not offer it."""
    return cast("StoreT | None", getattr(driver, capability.name, None))


def need(driver: JobDriver, capability: Capability[StoreT], *, by: str) -> StoreT:
    """The driver's store for ``capability``; ``X_DRIVER_CAPABILITY`` naming the driver,
    the capability and ``by`` (what needed it: ``"the scheduler"``) when it has none."""
    store = offered(driver, capability)
    if store is None:
        raise FerryError(
            "X_DRIVER_CAPABILITY",
            f'{by} needs {capability.what} (capability "{capability.name}"), and the '
            f"{driver.name} driver does not offer it",
            f"run {by} on a driver that offers {capability.name} (postgres, sqlite, redis and "
            "memory offer every capability; `ferry doctor` lists a driver's)",
        )
    return store


def capabilities_of(driver: JobDriver) -> list[str]:
    """The names of the capabilities ``driver`` offers, in ``CAPABILITIES`` order."""
    return [c.name for c in CAPABILITIES if offered(driver, c) is not None]
