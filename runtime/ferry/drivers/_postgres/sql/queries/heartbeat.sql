-- Renew a batch of held leases and report progress, each fenced like a settle: $1..$5 are
-- parallel arrays (run id, worker, lease until, progress current/total — NULL: unchanged);
-- $6 is now. Answers, per run that was renewed, whether an operator asked to cancel it
-- meanwhile (the lease is still renewed: the worker aborts the body and settles it).
-- Every slot a renewed run holds (concurrency key and caps) is extended with it, so a
-- long run keeps its slots.
-- A worker renews all its leases in this one statement, so a row another session holds
-- locked is skipped (its renewal does not land this time) instead of waited for: one
-- stuck row must not stall the renewal of every other run the worker holds.
-- $7..$10, when $7 is not NULL, are a record put with the renewals (space, key, JSON value,
-- expiry): the worker's presence in the fleet registry, with no round trip of its own.
WITH requests AS (
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[])
        AS r(id, worker_id, lease_until, progress_current, progress_total)
),
held AS (
    SELECT j.id
    FROM {schema}.jobs AS j
    JOIN requests AS r ON j.id = r.id
    WHERE j.state = 'running' AND j.locked_by = r.worker_id AND j.lease_expires_at_ms > $6
    FOR UPDATE OF j SKIP LOCKED
),
renewed AS (
    UPDATE {schema}.jobs AS j
    SET lease_expires_at_ms = r.lease_until,
        progress_current = coalesce(r.progress_current, j.progress_current),
        progress_total = coalesce(r.progress_total, j.progress_total),
        updated_at_ms = $6
    FROM requests AS r, held
    WHERE j.id = r.id AND j.id = held.id
      AND j.state = 'running' AND j.locked_by = r.worker_id AND j.lease_expires_at_ms > $6
    RETURNING j.id, r.lease_until, j.cancel_requested_at_ms
),
extended AS (
    UPDATE {schema}.lease_slots AS s
    SET expires_at_ms = renewed.lease_until
    FROM renewed
    WHERE s.holder = renewed.id::text
),
presence AS (
    INSERT INTO {schema}.records (space, key, value, expires_at_ms, updated_at_ms)
    SELECT $7, $8, $9::jsonb, $10, $6
    WHERE $7::text IS NOT NULL
    ON CONFLICT (space, key) DO UPDATE SET value = excluded.value,
        expires_at_ms = excluded.expires_at_ms, updated_at_ms = excluded.updated_at_ms
)
SELECT id, cancel_requested_at_ms IS NOT NULL AS cancel_requested FROM renewed
