"""The Kopf layer: every watched event asks for its namespace to be reconciled.

Run it with ``kopf run -m ferry_operator.handlers --all-namespaces --standalone``. Handlers
hold no logic: they name a namespace; ``reconcile`` does the work, coalesced per namespace.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import kopf

from ferry_operator.coalesce import Coalescer
from ferry_operator.kube import Kube, connect
from ferry_operator.names import GROUP, MANAGED_BY, VERSION
from ferry_operator.reconcile import reconcile_namespace

REFRESH_SECONDS = 60.0
"""How often every known namespace is reconciled anyway (nextFire/lastFire move with time)."""


@kopf.on.login()
def login(**kwargs: Any) -> kopf.ConnectionInfo | None:
    """Kopf's own credential readers, in-cluster first: they read ``$KUBECONFIG`` when
    called, where the async client library's login (Kopf's default) fixed it at import."""
    return kopf.login_with_service_account(**kwargs) or kopf.login_with_kubeconfig(**kwargs)


@kopf.on.startup()
async def start(settings: kopf.OperatorSettings, memo: kopf.Memo, **_: Any) -> None:
    """Open the client and the per-namespace coalescer; start the periodic refresh."""
    # Handler log lines are not news for `kubectl describe`; refusals are posted explicitly.
    settings.posting.level = logging.WARNING
    kube = Kube(await connect())
    memo.kube = kube
    memo.coalescer = Coalescer(lambda namespace: reconcile_namespace(kube, namespace, kube.warn))
    memo.refresh = asyncio.create_task(_refresh(memo.coalescer))


@kopf.on.cleanup()
async def stop(memo: kopf.Memo, **_: Any) -> None:
    """Stop the refresh and close the client."""
    memo.refresh.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await memo.refresh
    await memo.kube.close()


@kopf.on.event(GROUP, VERSION, "durablejobs")
@kopf.on.event(GROUP, VERSION, "scheduledtasks")
@kopf.on.event("apps", "v1", "deployments", labels={MANAGED_BY: "ferry-operator"})
async def namespace_changed(namespace: str | None, memo: kopf.Memo, **_: Any) -> None:
    """A ferry resource or an owned Deployment changed: reconcile its namespace."""
    if namespace:
        await memo.coalescer.request(namespace)


async def _refresh(coalescer: Coalescer) -> None:
    while True:
        await asyncio.sleep(REFRESH_SECONDS)
        for namespace in coalescer.known():
            await coalescer.request(namespace)
