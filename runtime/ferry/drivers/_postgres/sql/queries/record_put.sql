-- Store :value under (:space, :key), expiring at :expires_at_ms (null: never), at :now —
-- if the fence holds: lease :lease_name still held by :lease_holder in term :lease_term at
-- :now (when :lease_name is not null), and run :run_id still held by :worker_id at :now
-- (when :worker_id is not null). Answers a row when it landed. FOR SHARE holds the fencing
-- row until commit, so a takeover cannot slip between the check and the write.
WITH lease AS (
    SELECT FROM {schema}.leases
    WHERE name = :lease_name AND holder = :lease_holder AND term = :lease_term
      AND expires_at_ms > :now
    FOR SHARE
),
run AS (
    SELECT FROM {schema}.jobs
    WHERE id = :run_id AND state = 'running' AND locked_by = :worker_id
      AND lease_expires_at_ms > :now
    FOR SHARE
),
written AS (
    INSERT INTO {schema}.records AS r (space, key, value, expires_at_ms, updated_at_ms)
    SELECT :space, :key, :value::text::jsonb, :expires_at_ms, :now
    WHERE (:lease_name::text IS NULL OR EXISTS (SELECT FROM lease))
      AND (:worker_id::text IS NULL OR EXISTS (SELECT FROM run))
    ON CONFLICT (space, key) DO UPDATE
    SET value = excluded.value, expires_at_ms = excluded.expires_at_ms,
        updated_at_ms = excluded.updated_at_ms
    RETURNING 1
)
SELECT true AS landed FROM written
