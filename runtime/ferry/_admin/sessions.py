"""Signed-out dashboard sessions, as records of the driver's ``RecordStore``.

A session cookie is signed, so without a server-side record a copy of it stays valid until
it expires. A sign-out writes a record of space ``revoked-sessions`` that expires with the
cookie it revokes; every dashboard replica reads the same store, so a sign-out holds
fleet-wide at once, and retention deletes the lapsed records.
"""

from __future__ import annotations

from ferry.drivers.capabilities import RECORDS, need
from ferry.drivers.protocol import JobDriver

REVOKED = "revoked-sessions"


class Sessions:
    """Revocation of dashboard sessions on ``driver``'s records (``X_DRIVER_CAPABILITY``
    on a driver without them, when the dashboard is built)."""

    def __init__(self, driver: JobDriver) -> None:
        self._records = need(driver, RECORDS, by="the dashboard's sign-out")
        self._clock = driver.clock

    async def revoke(self, session: str, *, until_ms: int) -> None:
        """Refuse ``session`` until ``until_ms`` (when its cookie lapses anyway); a later
        revocation of the same session never shortens an earlier one."""
        now = self._clock.now_ms()
        until = max(await self._records.get(REVOKED, session, now_ms=now) or 0, until_ms)
        await self._records.put(REVOKED, session, until, now_ms=now, expires_at_ms=until)

    async def revoked(self, session: str) -> bool:
        """Whether ``session`` is revoked and the revocation has not lapsed."""
        return await self._records.get(REVOKED, session, now_ms=self._clock.now_ms()) is not None
