-- Store value $3 under ($1, $2), expiring at $4 (null: never), at $5 — if the fence holds:
-- lease $6 still held by $7 in term $8 at $5 (when $6 is not null), and run $9 still held
-- by worker $10 at $5 (when $10 is not null). Answers whether it landed. FOR SHARE holds
-- the fencing row until commit, so a takeover cannot slip between the check and the write.
WITH lease AS (
    SELECT FROM {schema}.leases
    WHERE name = $6 AND holder = $7 AND term = $8 AND expires_at_ms > $5
    FOR SHARE
),
run AS (
    SELECT FROM {schema}.jobs
    WHERE id = $9 AND state = 'running' AND locked_by = $10 AND lease_expires_at_ms > $5
    FOR SHARE
),
written AS (
    INSERT INTO {schema}.records AS r (space, key, value, expires_at_ms, updated_at_ms)
    SELECT $1, $2, $3::text::jsonb, $4, $5
    WHERE ($6::text IS NULL OR EXISTS (SELECT FROM lease))
      AND ($10::text IS NULL OR EXISTS (SELECT FROM run))
    ON CONFLICT (space, key) DO UPDATE
    SET value = excluded.value, expires_at_ms = excluded.expires_at_ms,
        updated_at_ms = excluded.updated_at_ms
    RETURNING 1
)
SELECT EXISTS (SELECT FROM written)
