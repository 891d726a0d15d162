-- The :limit runs that most recently ended completed or dead, newest first (ties: higher
-- id first), with latency = finished_at_ms - run_at_ms (never below 0): from when the run
-- last became due to when it ended. Each arm walks its partial index backwards and stops
-- after :limit rows (the completed arm repeats jobs_prune_order's term, as SQLite wants).
-- The outer ORDER BY names ended.id, the integer: a bare `id` is the result's text alias.
SELECT CAST(id AS TEXT) AS id, queue, name, state, finished_at_ms,
       CASE WHEN finished_at_ms > run_at_ms THEN finished_at_ms - run_at_ms ELSE 0 END
           AS latency_ms
FROM (
    SELECT * FROM (
        SELECT id, queue, name, state, finished_at_ms, run_at_ms
        FROM {schema}.jobs
        WHERE state IN ('completed', 'cancelled') AND state = 'completed'
          AND finished_at_ms IS NOT NULL
        ORDER BY finished_at_ms DESC, id DESC
        LIMIT :limit
    ) AS completed
    UNION ALL
    SELECT * FROM (
        SELECT id, queue, name, state, finished_at_ms, run_at_ms
        FROM {schema}.jobs
        WHERE state = 'dead' AND finished_at_ms IS NOT NULL
        ORDER BY finished_at_ms DESC, id DESC
        LIMIT :limit
    ) AS dead
) AS ended
ORDER BY ended.finished_at_ms DESC, ended.id DESC
LIMIT :limit
