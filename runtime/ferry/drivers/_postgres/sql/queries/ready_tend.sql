-- Tend the ready set, once per $2 ms for the whole fleet (ferry.drivers._postgres.ready):
-- whoever takes the turn (`turn`, skipping a row another process holds) puts the runs whose
-- lease lapsed by $1 (now) back in the queue and promotes the ready_later runs due within
-- the lookahead, $3 of each at most. Answers one row when it took the turn — the rotation's
-- state and the current partition's dead and live rows, from which the caller decides a
-- rotation — and none when another process tended less than $2 ms ago.
WITH turn AS (
    UPDATE {schema}.ready_rotation
    SET tended_at_ms = $1::bigint
    WHERE id = (SELECT id FROM {schema}.ready_rotation
                -- A turn taken in the future is a clock that moved back: tend now.
                WHERE tended_at_ms <= $1::bigint - $2::bigint OR tended_at_ms > $1::bigint
                FOR UPDATE SKIP LOCKED)
    RETURNING current_part, retiring_part, switched_at_ms
),
-- A run whose lease lapsed: its worker died or lost touch. The claim used to take such a
-- run over itself, walking every running run on its way to the due ones; this walks the
-- lapsed leases alone (jobs_lease_order, whose predicate it repeats). It waits for a row
-- another transaction holds (an operator's cancel, briefly): a skipped lapsed run would
-- wait a whole turn.
lapsed AS (
    SELECT j.id
    FROM {schema}.jobs AS j
    WHERE EXISTS (SELECT FROM turn)
      AND j.state = 'running' AND j.moving_to IS NULL AND j.lease_expires_at_ms <= $1
    ORDER BY j.lease_expires_at_ms
    LIMIT $3
    FOR UPDATE OF j
),
-- Back in the queue where it stood (its run_at is kept), its attempt counted as the claim
-- counted it: the next claim takes it as the claim took a lapsed run over before.
rescued AS (
    UPDATE {schema}.jobs AS j
    SET state = 'queued', locked_by = NULL, lease_expires_at_ms = NULL, updated_at_ms = $1
    FROM lapsed
    WHERE j.id = lapsed.id AND j.state = 'running' AND j.lease_expires_at_ms <= $1
    RETURNING j.id, j.priority, j.run_at_ms, j.queue, j.name, j.concurrency_key
),
-- The slots a lapsed run held lapsed with its lease; the next claim of it takes one anew.
unslotted AS (
    DELETE FROM {schema}.lease_slots AS s
    USING rescued
    WHERE s.holder = rescued.id::text
),
due_later AS (
    SELECT l.ctid
    FROM {schema}.ready_later AS l
    WHERE EXISTS (SELECT FROM turn) AND l.run_at_ms <= $1 + {ready_lookahead_ms}
    ORDER BY l.run_at_ms
    LIMIT $3
    FOR UPDATE OF l SKIP LOCKED
),
promoted AS (
    DELETE FROM {schema}.ready_later AS l
    WHERE l.ctid = ANY (ARRAY(SELECT ctid FROM due_later))
    RETURNING l.id, l.priority, l.run_at_ms, l.queue, l.name, l.concurrency_key
),
became_ready AS (
    SELECT id, priority, run_at_ms, queue, name, concurrency_key, $1::bigint AS now_ms
    FROM rescued
    UNION ALL
    SELECT id, priority, run_at_ms, queue, name, concurrency_key, $1::bigint
    FROM promoted
),
{_ready},
notified AS (
    SELECT pg_notify({channel}, due.queue)
    FROM (SELECT DISTINCT queue FROM rescued) AS due
)
SELECT t.current_part, t.retiring_part, t.switched_at_ms,
       (SELECT count(*) FROM rescued) AS rescued,
       (SELECT count(*) FROM promoted) AS promoted,
       (SELECT count(*) FROM notified) AS notified,
       pg_stat_get_dead_tuples(p.relid) AS current_dead,
       pg_stat_get_live_tuples(p.relid) AS current_live
FROM turn AS t,
     LATERAL (SELECT CASE t.current_part WHEN 0 THEN '{schema}.ready_0'::regclass
                                         ELSE '{schema}.ready_1'::regclass END AS relid) AS p
