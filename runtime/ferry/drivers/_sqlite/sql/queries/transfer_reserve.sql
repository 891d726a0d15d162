-- Reserve up to :limit runs for drain :drain_id moving them to store :target (see
-- RunTransfer.reserve): they turn `moving`, which the claim never reads, with no lease to
-- lapse. :queues (a JSON array; NULL: any) restricts queues, :include_dead also takes dead
-- runs, :now is now. One UPDATE … RETURNING under the write lock, so a run a worker is
-- claiming cannot be taken as well; the steps are read after it, in the same transaction.
-- Taken in this order: runs an earlier drain left `moving` to the same store, then queued
-- runs in claim order, then dead ones by when they died — never a run of a fan-out (one
-- with a parent or children): a parent's steps name its children by their ids here. Each arm is an ordered walk of its
-- own index (ferry_jobs_moving, ferry_jobs_claim_order — whose term the queued arm
-- repeats, as SQLite wants — and ferry_jobs_dead_order) that stops after :limit rows.
UPDATE ferry_jobs
SET moving_from = CASE WHEN state = 'moving' THEN moving_from ELSE state END,
    state = 'moving',
    moving_to = :target,
    locked_by = :drain_id,
    lease_expires_at_ms = NULL,
    updated_at_ms = :now
WHERE id IN (
    SELECT id FROM (
        SELECT id, 0 AS arm, id AS o1, 0 AS o2, 0 AS o3 FROM (
            SELECT id FROM ferry_jobs
            WHERE state = 'moving' AND moving_to = :target AND locked_by <> :drain_id
            ORDER BY moving_to, id
            LIMIT :limit
        )
        UNION ALL
        SELECT id, 1, -priority, run_at_ms, id FROM (
            SELECT id, priority, run_at_ms FROM ferry_jobs AS q
            WHERE state IN ('queued', 'sleeping', 'running') AND state = 'queued'
              AND (:queues IS NULL OR queue IN (SELECT value FROM json_each(:queues)))
              AND parent_id IS NULL
              AND NOT EXISTS (SELECT 1 FROM ferry_jobs AS c WHERE c.parent_id = q.id)
            ORDER BY priority DESC, run_at_ms, id
            LIMIT :limit
        )
        UNION ALL
        SELECT id, 2, finished_at_ms, id, 0 FROM (
            SELECT id, finished_at_ms FROM ferry_jobs AS d
            WHERE :include_dead AND state = 'dead'
              AND (:queues IS NULL OR queue IN (SELECT value FROM json_each(:queues)))
              AND parent_id IS NULL
              AND NOT EXISTS (SELECT 1 FROM ferry_jobs AS c WHERE c.parent_id = d.id)
            ORDER BY finished_at_ms, id
            LIMIT :limit
        )
    )
    ORDER BY arm, o1, o2, o3
    LIMIT :limit
)
RETURNING id AS pk, CAST(id AS TEXT) AS id, name, queue, payload, idempotency_key,
          moving_from, attempts, max_attempts, priority, run_at_ms, tenant, actor,
          concurrency_key, last_error_code, last_error_message, progress_current,
          progress_total, created_at_ms, finished_at_ms
