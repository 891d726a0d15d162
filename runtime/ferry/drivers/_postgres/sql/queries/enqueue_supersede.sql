-- Before an enqueue writes its runs: the runs holding keys $1 that fall outside the
-- enqueue's dedupe rule give their key up, so the write that follows (in the same
-- transaction) takes it. $2: dedupe only against unfinished runs; $3: only against runs
-- created less than this many ms before $4, now (NULL: no window); parallel arrays, one
-- element per request with a rule other than "retained". The run keeps its row; its key
-- becomes `<key> [superseded: run <id>]` padded with spaces to $5 bytes, one more than an
-- enqueued key may have: no enqueue can take it, and it is unique per run.
-- The rows are locked in id order, so two batches superseding the same keys queue up
-- rather than deadlock; the one that waited finds the keys moved (the lock re-reads the
-- row) and then dedupes against the runs the first one wrote.
WITH stale AS (
    SELECT j.id
    FROM unnest($1::text[], $2::boolean[], $3::bigint[])
        AS r(idempotency_key, active_only, window_ms)
    JOIN {schema}.jobs AS j ON j.idempotency_key = r.idempotency_key
    WHERE (r.active_only AND j.state IN ('completed', 'dead', 'cancelled'))
       OR j.created_at_ms <= $4 - r.window_ms
    ORDER BY j.id
    FOR UPDATE OF j
)
UPDATE {schema}.jobs AS j
SET idempotency_key = j.idempotency_key || ' [superseded: run ' || j.id || ']' || repeat(
    ' ', greatest(0, $5 - octet_length(j.idempotency_key || ' [superseded: run ' || j.id || ']'))
)
FROM stale
WHERE j.id = stale.id
RETURNING j.id
