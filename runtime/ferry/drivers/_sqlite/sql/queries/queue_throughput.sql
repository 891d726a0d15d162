-- Runs completed per queue since :since. The state IN term is ferry_jobs_prune_order's own:
-- SQLite uses a partial index only when the query repeats its WHERE term.
SELECT queue, count(*) AS completed
FROM ferry_jobs
WHERE state IN ('completed', 'cancelled') AND state = 'completed' AND finished_at_ms > :since
GROUP BY queue
