-- Advance task $1 to checked_through $2, having fired occurrence $3 at $4 (both null: none).
-- Fenced on the lease: it lands only while holder $5 holds an unexpired row at $6, so a node
-- that lost leadership mid-round cannot move state its successor is already reading.
-- GREATEST keeps every column monotonic, whatever order two writers land in.
INSERT INTO {schema}.scheduler_ticks AS t
    (task, checked_through_ms, last_occurrence_ms, last_fired_at_ms)
SELECT $1::text, $2::bigint, $3::bigint, $4::bigint
WHERE EXISTS (
    SELECT FROM {schema}.scheduler_leader
    WHERE id = 1 AND holder = $5 AND expires_at_ms > $6::bigint
)
ON CONFLICT (task) DO UPDATE
SET checked_through_ms = GREATEST(t.checked_through_ms, excluded.checked_through_ms),
    last_occurrence_ms = GREATEST(t.last_occurrence_ms, excluded.last_occurrence_ms),
    last_fired_at_ms = GREATEST(t.last_fired_at_ms, excluded.last_fired_at_ms)
RETURNING task
