-- Runs completed per queue since :since; reads the finished-order index, never the live
-- rows. The state IN term is the partial index's own (jobs_prune_order): SQLite uses a
-- partial index only when the query repeats its WHERE term.
SELECT queue, count(*) AS completed
FROM {schema}.jobs
WHERE state IN ('completed', 'cancelled') AND state = 'completed' AND finished_at_ms > :since
GROUP BY queue
