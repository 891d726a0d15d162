"""The Kopf layer: every watched event asks for its namespace to be reconciled.

``python -m ferry_operator`` runs it once this replica leads (see ``main``). Handlers hold no
logic: they name a namespace; ``reconcile`` does the work, coalesced per namespace.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from typing import Any

import aiohttp
import kopf

from ferry_operator.coalesce import Coalescer
from ferry_operator.config import OperatorConfig
from ferry_operator.names import FIELD_MANAGER, GROUP, MANAGED_BY, OWNED_SELECTOR, VERSION
from ferry_operator.reconcile import reconcile_namespace
from ferry_operator.scaling import Autoscaler

SCRAPE_TIMEOUT = aiohttp.ClientTimeout(total=3)
"""A scheduler pod's /metrics answers in milliseconds; one that does not is skipped."""

REFRESH_SECONDS = 60.0
"""How often every namespace holding ferry resources is reconciled anyway (nextFire/lastFire
move with time; a Secret created after its DurableJob is noticed; nothing watches Secrets)."""


def operator_settings(config: OperatorConfig) -> kopf.OperatorSettings:
    """Kopf's settings for this operator."""
    settings = kopf.OperatorSettings()
    # Handler log lines are not news for `kubectl describe`; verdicts are posted explicitly.
    settings.posting.level = logging.WARNING
    # Server-side: the API server streams only the Deployments the operator wrote, never every
    # Deployment of the cluster (the handler's `labels=` alone would filter client-side).
    settings.watching.label_selectors["apps", "v1", "deployments"] = OWNED_SELECTOR
    # Likewise the pods of those Deployments: their status names why they do not run (an
    # image that cannot be pulled, a crash loop, no node) the moment the kubelet knows.
    settings.watching.label_selectors["v1", "pods"] = OWNED_SELECTOR
    # Namespaced, the operator may list neither CRDs nor namespaces (it has Roles only): the
    # resources are discovered once at start and the namespaces are exactly the ones named.
    settings.scanning.disabled = not config.clusterwide
    return settings


@kopf.on.login()
def login(**kwargs: Any) -> kopf.ConnectionInfo | None:
    """Kopf's own credential readers, in-cluster first: they read ``$KUBECONFIG`` when
    called, where the async client library's login (Kopf's default) fixed it at import."""
    return kopf.login_with_service_account(**kwargs) or kopf.login_with_kubeconfig(**kwargs)


@kopf.on.startup()
async def start(memo: kopf.Memo, **_: Any) -> None:
    """Open the per-namespace coalescer over the client ``main`` made; start the refresh
    and the autoscale loop."""
    # Kopf installs its own SIGTERM/SIGINT handlers as it starts (right after this handler
    # first yields), which stop it without its stop flag and leave that flag's waiter to time
    # out for 5 s. Put back the operator's, which stop Kopf through the flag: the Lease is
    # then handed over within milliseconds of SIGTERM. (Should Kopf's win after all, a stop
    # still works, 5 s later.)
    await asyncio.sleep(0)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, memo.stop.set)

    config: OperatorConfig = memo.config
    scrapes = memo.scrapes = aiohttp.ClientSession(timeout=SCRAPE_TIMEOUT)

    async def fetch(url: str) -> str:
        async with scrapes.get(url) as answer:
            answer.raise_for_status()
            return await answer.text()

    autoscaler = Autoscaler(
        memo.kube, fetch, config.default_secret, memo.clock, every_s=config.autoscale_s
    )

    async def reconcile(namespace: str) -> bool:
        return await reconcile_namespace(
            memo.kube,
            namespace,
            memo.recorder.post,
            config.default_secret,
            memo.clock,
            autoscaled=autoscaler.follow,
            fetch=fetch,
        )

    memo.coalescer = Coalescer(reconcile)
    memo.loops = [
        asyncio.create_task(_refresh(memo.coalescer)),
        asyncio.create_task(autoscaler.run()),
    ]


@kopf.on.cleanup()
async def stop(memo: kopf.Memo, **_: Any) -> None:
    """Stop the refresh and the autoscaling."""
    for loop in memo.loops:
        loop.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await loop
    await memo.scrapes.close()


@kopf.on.event(GROUP, VERSION, "durablejobs")
@kopf.on.event(GROUP, VERSION, "scheduledtasks")
@kopf.on.event("apps", "v1", "deployments", labels={MANAGED_BY: FIELD_MANAGER})
@kopf.on.event("v1", "pods", labels={MANAGED_BY: FIELD_MANAGER})
async def namespace_changed(namespace: str | None, memo: kopf.Memo, **_: Any) -> None:
    """A ferry resource, an owned Deployment or one of its pods changed: reconcile its
    namespace."""
    if namespace:
        await memo.coalescer.request(namespace)


async def _refresh(coalescer: Coalescer) -> None:
    while True:
        await asyncio.sleep(REFRESH_SECONDS)
        for namespace in coalescer.known():
            await coalescer.request(namespace)
