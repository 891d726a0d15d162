-- Move up to $3 rows out of the retiring partition $1 at $2 (now), without locking the
-- partition: the rows still ready go to the current partition (or ready_later when due
-- after the lookahead), stale ones (_lease_picked.sql) are dropped. A row a claim holds is
-- skipped (the claim takes it). Answers how many rows left the partition: fewer than $3
-- means it is nearly empty, and ready_retire may truncate it under a short lock.
WITH leaving AS (
    SELECT r.ctid
    FROM {schema}.ready AS r
    WHERE r.part = $1
    LIMIT $3
    FOR UPDATE OF r SKIP LOCKED
),
-- Found by ctid alone, a TID scan of the one partition: every locked row is partition $1's,
-- where a ctid names one row. Never joined back to `leaving` as the claim's _dropped.sql
-- is (it must tell two partitions apart): joined that way, a batch of thousands is planned
-- as a nested loop over `leaving` whenever the partition was never analyzed (a backlog
-- enqueued at once): 12.5 million comparisons, 3 s for 5,000 rows, the claims waiting.
moved_out AS (
    DELETE FROM {schema}.ready AS r
    WHERE r.part = $1
      AND r.ctid = ANY (ARRAY(SELECT ctid FROM leaving))
    RETURNING r.id, r.priority, r.run_at_ms, r.queue, r.name, r.concurrency_key
),
became_ready AS (
    SELECT l.id, l.priority, l.run_at_ms, l.queue, l.name, l.concurrency_key,
           $2::bigint AS now_ms
    FROM moved_out AS l
    JOIN {schema}.jobs AS j ON j.id = l.id
    WHERE j.state IN ('queued', 'sleeping') AND j.run_at_ms = l.run_at_ms
),
{_ready}
SELECT count(*) AS moved FROM moved_out
