-- Under ready_lock's lock on the retiring partition $1, at $2 (now): copy the rows still
-- ready to the current partition (or ready_later), and mark the rotation done. The caller
-- then truncates the partition in the same transaction (ready_truncate). Answers how many
-- rows were kept; no row when the rotation changed meanwhile (another process retired it).
WITH rotation AS (
    UPDATE {schema}.ready_rotation
    SET retiring_part = NULL
    WHERE retiring_part = $1
    RETURNING current_part
),
became_ready AS (
    SELECT r.id, r.priority, r.run_at_ms, r.queue, r.name, r.concurrency_key,
           $2::bigint AS now_ms
    FROM {schema}.ready AS r
    JOIN {schema}.jobs AS j ON j.id = r.id
    WHERE EXISTS (SELECT FROM rotation) AND r.part = $1
      AND j.state IN ('queued', 'sleeping') AND j.run_at_ms = r.run_at_ms
),
{_ready}
SELECT (SELECT count(*) FROM became_ready) AS kept FROM rotation
