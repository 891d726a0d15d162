-- A fragment every statement that makes runs claimable includes (enqueue, a fan-out's
-- children, the settle, retry, a drain's import, the rescue and promotion, a rate
-- deferral; a drain's release and a fan-in's wake are written by migration 0030's trigger
-- instead): a ready row for each run of the statement's `became_ready` part (id,
-- priority, run_at_ms, queue, name, concurrency_key, now_ms). A run due within the
-- lookahead goes to the current rotating partition, where claims find it; a later one to
-- ready_later, promoted before it falls due (migration 0029, ferry.drivers._postgres.ready).
readied AS (
    INSERT INTO {schema}.ready (part, id, priority, run_at_ms, queue, name, concurrency_key)
    SELECT CASE WHEN b.run_at_ms <= b.now_ms + {ready_lookahead_ms}
                THEN (SELECT current_part FROM {schema}.ready_rotation)
                ELSE 2 END,
           b.id, b.priority, b.run_at_ms, b.queue, b.name, b.concurrency_key
    FROM became_ready AS b
)
