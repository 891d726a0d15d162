-- A fragment of _settle.sql's `notified` (a UNION ALL arm): the ids of the runs this
-- statement ended, on the ended channel, comma-separated, at most 400 to a notification
-- (NOTIFY's payload limit is 8000 bytes) — what handle.result waiters listen for. One
-- notification per statement, not per run, and none when nothing ended. A parent that a
-- child's end makes due is announced by the trigger that wakes it (migration 0023).
SELECT pg_notify({ended_channel}, string_agg(ended.id::text, ','))
FROM (SELECT id, (row_number() OVER ()) / 400 AS chunk
      FROM settled
      WHERE state IN ('completed', 'dead', 'cancelled')) AS ended
GROUP BY ended.chunk
