-- Reserve up to :limit runs for drain :drain_id moving them to store :target (see
-- RunTransfer.reserve): they turn `moving`, which the claim never reads, with no lease to
-- lapse. :queues restricts queues (NULL: any), :include_dead also takes dead runs, :now is
-- now. Their steps are read after (step_load): a moving run records none, so the two reads
-- cannot disagree.
-- Taken in this order: runs an earlier drain left `moving` to the same store, then queued
-- runs in claim order, then dead ones — never a run of a fan-out (one with a parent or
-- children): a parent's steps name its children by their ids on this store. Each branch is
-- its own ordered index scan that stops after :limit rows: jobs_moving; the ready rows of
-- every partition (ready_claim_order, the runs due later included), locked as a claim locks
-- them so a claim and a drain never take the same row; jobs_dead_order. The runs are
-- locked on the outer scan, which re-checks the state on the row's newest version, so a
-- run a worker claimed (or another drain reserved) in between is skipped, never taken
-- twice.
WITH queued AS (
    SELECT r.tableoid, r.ctid, r.id
    FROM {schema}.ready AS r
    JOIN {schema}.jobs AS j ON j.id = r.id AND j.state = 'queued' AND j.run_at_ms = r.run_at_ms
    WHERE (:queues::text[] IS NULL OR r.queue = ANY (:queues::text[]))
      AND j.parent_id IS NULL
      AND NOT EXISTS (SELECT FROM {schema}.jobs AS c WHERE c.parent_id = j.id)
    ORDER BY r.priority DESC, r.run_at_ms, r.id
    LIMIT :limit
    FOR UPDATE OF r SKIP LOCKED
),
candidates AS (
    (SELECT id, 0 AS rank FROM {schema}.jobs
     WHERE state = 'moving' AND moving_to = :target AND locked_by <> :drain_id
     ORDER BY moving_to, id LIMIT :limit)
    UNION ALL
    SELECT id, 1 FROM queued
    UNION ALL
    (SELECT id, 2 FROM {schema}.jobs AS d
     WHERE :include_dead::boolean AND state = 'dead' AND (:queues::text[] IS NULL OR queue = ANY (:queues::text[]))
       AND parent_id IS NULL AND NOT EXISTS (SELECT FROM {schema}.jobs AS c WHERE c.parent_id = d.id)
     ORDER BY finished_at_ms, id LIMIT :limit)
),
picked AS (
    SELECT j.id
    FROM {schema}.jobs AS j
    JOIN (SELECT id, rank FROM candidates ORDER BY rank, id LIMIT :limit) AS c ON c.id = j.id
    WHERE (j.state = 'moving' AND j.moving_to = :target AND j.locked_by <> :drain_id)
       OR (j.state = 'queued' AND (:queues::text[] IS NULL OR j.queue = ANY (:queues::text[])))
       OR (:include_dead::boolean AND j.state = 'dead' AND (:queues::text[] IS NULL OR j.queue = ANY (:queues::text[])))
    FOR UPDATE OF j SKIP LOCKED
),
reserved AS (
    UPDATE {schema}.jobs AS j
    SET moving_from = CASE WHEN j.state = 'moving' THEN j.moving_from ELSE j.state END,
        state = 'moving',
        moving_to = :target,
        locked_by = :drain_id,
        lease_expires_at_ms = NULL,
        updated_at_ms = :now
    FROM picked
    WHERE j.id = picked.id
    RETURNING j.*
),
-- A reserved queued run leaves the ready set with it: a drain's next batch walks the ready
-- rows in claim order again, and must not walk the ones it already took.
unready AS (
    DELETE FROM {schema}.ready AS r
    WHERE r.ctid = ANY (ARRAY(SELECT ctid FROM queued))
      AND (r.tableoid, r.ctid) IN (
          SELECT tableoid, ctid FROM queued WHERE id IN (SELECT id FROM reserved))
)
SELECT r.id::text, r.name, r.queue, r.payload::text, r.idempotency_key, r.moving_from,
       r.attempts, r.max_attempts, r.priority, r.run_at_ms, r.tenant, r.actor,
       r.concurrency_key, r.last_error_code, r.last_error_message, r.progress_current,
       r.progress_total, r.created_at_ms, r.finished_at_ms, r.rate_key
FROM reserved AS r
ORDER BY r.id
