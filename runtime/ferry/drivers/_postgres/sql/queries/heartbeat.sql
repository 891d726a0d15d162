-- Extend a held lease to $4 and report progress; fenced like a settle. Answers whether it
-- landed, and whether an operator asked to cancel the run meanwhile (the lease is still
-- renewed: the worker aborts the body and settles the run itself).
-- $1 run id, $2 worker, $3 now, $5/$6 progress (NULL: unchanged).
-- Every slot the run holds (concurrency key and caps) is extended with it, so a long run
-- keeps its slots.
WITH renewed AS (
    UPDATE {schema}.jobs
    SET lease_expires_at_ms = $4,
        progress_current = coalesce($5, progress_current),
        progress_total = coalesce($6, progress_total),
        updated_at_ms = $3
    WHERE id = $1 AND state = 'running' AND locked_by = $2 AND lease_expires_at_ms > $3
    RETURNING id, concurrency_key, cancel_requested_at_ms
),
extended AS (
    UPDATE {schema}.lease_slots AS s
    SET expires_at_ms = $4
    FROM renewed
    WHERE s.holder = renewed.id::text
)
SELECT EXISTS (SELECT FROM renewed) AS landed,
       EXISTS (SELECT FROM renewed WHERE cancel_requested_at_ms IS NOT NULL) AS cancel_requested
