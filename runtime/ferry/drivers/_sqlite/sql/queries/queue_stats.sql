-- Run counts per queue and state, plus every paused queue (with a NULL state). On the
-- queued row, oldest_due_at_ms is the run_at of the longest-waiting run due by :now.
-- due counts the queued and sleeping runs due by :now, summed over a queue's rows.
SELECT queue, state, count(*) AS runs, 0 AS paused,
       min(run_at_ms) FILTER (WHERE state = 'queued' AND run_at_ms <= :now) AS oldest_due_at_ms,
       count(*) FILTER (WHERE state IN ('queued', 'sleeping') AND run_at_ms <= :now) AS due
FROM ferry_jobs
GROUP BY queue, state
UNION ALL
SELECT queue, NULL, 0, 1, NULL, 0
FROM ferry_paused_queues
