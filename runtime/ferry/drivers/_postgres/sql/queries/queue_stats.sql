-- Run counts per queue and state, plus every paused queue (with a NULL state). On the
-- queued row, oldest_due_at_ms is the run_at of the longest-waiting run due by $1 (now).
SELECT queue, state, count(*) AS runs, false AS paused,
       min(run_at_ms) FILTER (WHERE state = 'queued' AND run_at_ms <= $1) AS oldest_due_at_ms
FROM {schema}.jobs
GROUP BY queue, state
UNION ALL
SELECT queue, NULL, 0, true, NULL
FROM {schema}.paused_queues
