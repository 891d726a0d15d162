-- Move up to $3 rows out of the retiring partition $1 at $2 (now), without locking the
-- partition: the rows still ready go to the current partition (or ready_later when due
-- after the lookahead), stale ones (_lease_picked.sql) are dropped. A row a claim holds is
-- skipped (the claim takes it). Answers how many rows left the partition: fewer than $3
-- means it is nearly empty, and ready_retire may truncate it under a short lock.
WITH leaving AS (
    SELECT r.tableoid, r.ctid
    FROM {schema}.ready AS r
    WHERE r.part = $1
    LIMIT $3
    FOR UPDATE OF r SKIP LOCKED
),
moved_out AS (
    DELETE FROM {schema}.ready AS r
    WHERE r.part = $1
      AND r.ctid = ANY (ARRAY(SELECT ctid FROM leaving))
      AND (r.tableoid, r.ctid) IN (SELECT tableoid, ctid FROM leaving)
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
