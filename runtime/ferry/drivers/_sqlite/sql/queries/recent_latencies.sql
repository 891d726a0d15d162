-- The :limit runs that most recently ended completed or dead, newest first (ties: higher
-- id first), with latency = finished_at_ms - run_at_ms (never below 0). Each arm walks its
-- partial index backwards and stops after :limit rows (the completed arm repeats
-- ferry_jobs_prune_order's term: SQLite uses a partial index only then). The outer ORDER BY
-- names ended.id, the integer: a bare `id` is the result's text alias there.
SELECT CAST(id AS TEXT) AS id, queue, name, state, finished_at_ms,
       max(finished_at_ms - run_at_ms, 0) AS latency_ms
FROM (
    SELECT * FROM (
        SELECT id, queue, name, state, finished_at_ms, run_at_ms
        FROM ferry_jobs
        WHERE state IN ('completed', 'cancelled') AND state = 'completed'
          AND finished_at_ms IS NOT NULL
        ORDER BY finished_at_ms DESC, id DESC
        LIMIT :limit
    )
    UNION ALL
    SELECT * FROM (
        SELECT id, queue, name, state, finished_at_ms, run_at_ms
        FROM ferry_jobs
        WHERE state = 'dead' AND finished_at_ms IS NOT NULL
        ORDER BY finished_at_ms DESC, id DESC
        LIMIT :limit
    )
) AS ended
ORDER BY ended.finished_at_ms DESC, ended.id DESC
LIMIT :limit
