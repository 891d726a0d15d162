-- Runs completed per queue since $1; reads the finished-order index, never the live rows.
SELECT queue, count(*) AS completed
FROM {schema}.jobs
WHERE state = 'completed' AND finished_at_ms > $1
GROUP BY queue
