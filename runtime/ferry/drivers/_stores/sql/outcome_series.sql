-- Runs that ended completed or dead at or after :since, counted per queue and per bucket
-- of :bucket ms (bucket k starts at :since + k * :bucket; integer division); only buckets
-- holding a run, by queue then start. Each arm reads its own partial index
-- (jobs_prune_order, jobs_dead_order) from :since on; the completed arm repeats
-- jobs_prune_order's term, as SQLite wants.
WITH ended AS (
    SELECT queue, finished_at_ms, 1 AS completed, 0 AS dead
    FROM {schema}.jobs
    WHERE state IN ('completed', 'cancelled') AND state = 'completed'
      AND finished_at_ms >= :since
    UNION ALL
    SELECT queue, finished_at_ms, 0, 1
    FROM {schema}.jobs
    WHERE state = 'dead' AND finished_at_ms >= :since
)
SELECT queue,
       :since + (finished_at_ms - :since) / :bucket * :bucket AS start_ms,
       sum(completed) AS completed,
       sum(dead) AS dead
FROM ended
GROUP BY queue, start_ms
ORDER BY queue, start_ms
