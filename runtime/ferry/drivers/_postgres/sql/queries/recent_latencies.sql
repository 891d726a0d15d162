-- The $1 runs that most recently ended completed or dead, newest first (ties: higher id
-- first), with latency = finished_at_ms - run_at_ms: from when the run last became due to
-- when it ended. Each arm walks its partial index backwards and stops after $1 rows.
SELECT id::text, queue, name, state, finished_at_ms,
       greatest(finished_at_ms - run_at_ms, 0) AS latency_ms
FROM (
    (SELECT id, queue, name, state, finished_at_ms, run_at_ms
     FROM {schema}.jobs
     WHERE state = 'completed' AND finished_at_ms IS NOT NULL
     ORDER BY finished_at_ms DESC, id DESC
     LIMIT $1)
    UNION ALL
    (SELECT id, queue, name, state, finished_at_ms, run_at_ms
     FROM {schema}.jobs
     WHERE state = 'dead' AND finished_at_ms IS NOT NULL
     ORDER BY finished_at_ms DESC, id DESC
     LIMIT $1)
) AS ended
ORDER BY finished_at_ms DESC, id DESC
LIMIT $1
