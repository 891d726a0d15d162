-- Runs that ended completed or dead at or after $1, counted per queue and per bucket of $2
-- ms (bucket k starts at $1 + k * $2); only buckets holding a run, by queue then start.
-- Each arm reads its own partial index (jobs_prune_order, jobs_dead_order) from $1 on.
WITH ended AS (
    SELECT queue, finished_at_ms, 1 AS completed, 0 AS dead
    FROM {schema}.jobs
    WHERE state = 'completed' AND finished_at_ms >= $1
    UNION ALL
    SELECT queue, finished_at_ms, 0, 1
    FROM {schema}.jobs
    WHERE state = 'dead' AND finished_at_ms >= $1
)
SELECT queue,
       $1 + (finished_at_ms - $1) / $2 * $2 AS start_ms,
       sum(completed)::bigint AS completed,
       sum(dead)::bigint AS dead
FROM ended
GROUP BY queue, start_ms
ORDER BY queue, start_ms
