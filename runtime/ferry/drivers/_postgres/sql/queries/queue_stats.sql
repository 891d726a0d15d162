-- Run counts per queue and state, plus every paused queue (with a NULL state). On the
-- queued row, oldest_due_at_ms is the run_at of the longest-waiting run due by $1 (now).
-- due counts the queued and sleeping runs due by $1, summed over a queue's rows.
SELECT queue, state, count(*) AS runs, false AS paused,
       min(run_at_ms) FILTER (WHERE state = 'queued' AND run_at_ms <= $1) AS oldest_due_at_ms,
       count(*) FILTER (WHERE state IN ('queued', 'sleeping') AND run_at_ms <= $1) AS due
FROM {schema}.jobs
GROUP BY queue, state
UNION ALL
SELECT queue, NULL, 0, true, NULL, 0
FROM {schema}.paused_queues
