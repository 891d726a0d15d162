"""``python -m ferry_operator``: stand by, lead, reconcile, hand over.

One process per operator pod. It serves ``/healthz`` at once, stands by on its release's
leader Lease, and only once it leads does it start Kopf (so a standby watches nothing). While
leading it renews the Lease and, cluster-wide, keeps checking that no other release's operator
was here first. It stops leading by stopping Kopf: on SIGTERM it then empties the Lease so the
standby takes over on its next round; on a lost Lease it exits 1 without touching it, and the
restarted container stands by.

Exit codes: 0 stopped by a signal, 1 leadership lost or an API call refused, 2 refused to run
(``X_*`` on the last log line).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys

import kopf
from kubernetes_asyncio.client.exceptions import ApiException

from ferry._clock import Clock, SystemClock
from ferry.errors import FerryError
from ferry_operator.config import OperatorConfig, config_from_env
from ferry_operator.events import EventRecorder
from ferry_operator.exclusive import refuse_second_operator
from ferry_operator.handlers import operator_settings
from ferry_operator.health import serve_health
from ferry_operator.kube import Kube, connect, refusal
from ferry_operator.leader import LeaseElector

logger = logging.getLogger("ferry_operator")

FAILED = 1
REFUSED = 2


def main() -> None:
    """Read the configuration from the environment and run until stopped."""
    try:
        config = config_from_env()
    except FerryError as refused:
        print(refused, file=sys.stderr)
        sys.exit(REFUSED)
    kopf.configure(debug=config.log_level == "DEBUG", quiet=config.log_level == "WARNING")
    if config.log_level != "DEBUG":
        # One "Handler succeeded" line per watched event is noise; Kopf's warnings stay.
        logging.getLogger("kopf.objects").setLevel(logging.WARNING)
    sys.exit(asyncio.run(run(config)))


async def run(config: OperatorConfig, clock: Clock | None = None) -> int:
    """Stand by, lead and stop; the exit code."""
    clock = clock or SystemClock()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    kube = Kube(api := await connect())
    elector = LeaseElector(api, config, clock)
    health = await serve_health(config.health_port, lambda: elector.leading)
    try:
        if config.clusterwide:
            await refuse_second_operator(api, config, clock.now_ms())
        if not await elector.acquire(stop):
            return 0
        return await _lead(config, kube, elector, stop, clock)
    except FerryError as refused:
        logger.error("refusing to run: %s", refused)
        return REFUSED
    except ApiException as failed:
        # Before leading (the check for another operator): the restarted pod tries again.
        logger.error("the API server refused a call: %s", refusal(failed))
        return FAILED
    finally:
        await elector.release()
        await health.cleanup()
        await kube.close()


async def _lead(
    config: OperatorConfig, kube: Kube, elector: LeaseElector, stop: asyncio.Event, clock: Clock
) -> int:
    """Run Kopf while this replica holds the Lease; the exit code once it stops."""
    kopf_stop = asyncio.Event()
    # Created before Kopf starts, so Kopf's shutdown leaves them to us.
    holding = asyncio.create_task(_hold(config, kube, elector, clock))
    holding.add_done_callback(lambda _: kopf_stop.set())
    relay = asyncio.create_task(stop.wait())
    relay.add_done_callback(lambda _: kopf_stop.set())
    memo = kopf.Memo(
        config=config,
        kube=kube,
        clock=clock,
        stop=stop,
        recorder=EventRecorder(kube.api, config.election.identity, clock),
    )
    try:
        await kopf.operator(
            clusterwide=config.clusterwide,
            namespaces=list(config.watch_namespaces),
            standalone=True,  # the Lease elected this replica; no Kopf peering
            settings=operator_settings(config),
            memo=memo,
            stop_flag=kopf_stop,
        )
    finally:
        relay.cancel()
        ended = holding.done()
        holding.cancel()
    if not ended:
        return 0  # stopped by a signal
    refused = holding.result()
    if refused is not None:
        raise refused
    elector.leading = False  # nothing to release: someone else may hold it by now
    logger.error("leadership lost: the Lease was not renewed within the renew deadline")
    return FAILED


async def _hold(
    config: OperatorConfig, kube: Kube, elector: LeaseElector, clock: Clock
) -> FerryError | None:
    """Renew the Lease every retry period until this replica must stop leading: ``None`` when
    renewals failed for the renew deadline, the refusal when another release's operator is
    found (checked once a lease duration, cluster-wide only)."""
    election = config.election
    renewed = checked = clock.now_ms()
    while True:
        await clock.sleep_ms(election.retry_s * 1000)
        now = clock.now_ms()
        if await elector.renew():
            renewed = now
        elif now - renewed >= election.renew_deadline_s * 1000:
            return None
        if config.clusterwide and now - checked >= election.lease_s * 1000:
            checked = now
            try:
                await refuse_second_operator(kube.api, config, now)
            except FerryError as refused:
                return refused
            except ApiException as failed:
                logger.warning("checking for another ferry operator failed: %s", refusal(failed))
