-- Run counts per queue and state, plus every paused queue (with a NULL state).
SELECT queue, state, count(*) AS runs, false AS paused
FROM {schema}.jobs
GROUP BY queue, state
UNION ALL
SELECT queue, NULL, 0, true
FROM {schema}.paused_queues
