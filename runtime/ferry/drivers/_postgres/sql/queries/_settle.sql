-- A fragment both round trips of the worker begin with (settle_and_claim and
-- settle_and_keyed_claim include it): settle a batch of attempts. $1..$12 are parallel
-- arrays, one element per settle (runs distinct); $13 is now; $14/$15 the error a cancel
-- override leaves. `settled` holds the runs whose settle landed; `notified` wakes idle
-- workers for the runs put straight back and tells result waiters of the runs that ended.
requests AS (
    SELECT *
    FROM unnest(
        $1::bigint[], $2::text[], $3::text[], $4::integer[], $5::boolean[], $6::boolean[],
        $7::bigint[], $8::text[], $9::text[], $10::text[], $11::bigint[], $12::bigint[]
    ) AS r(
        id, worker_id, state, attempts_given_back, requeues, finishes,
        run_at_ms, result, error_code, error_message, progress_current, progress_total
    )
),
-- The rules are ferry.drivers.settle's: the caller passes each settle's planned state,
-- whether it gives the attempt back, whether it requeues and whether it finishes the run.
-- Each settle is fenced on its claimer: it lands only while that worker holds an
-- unexpired lease, so a worker whose run was taken over changes nothing. The cancel
-- override (settle.with_cancel_request): a run an operator asked to cancel while it ran
-- never goes back to the queue. Each test reads `j`, the locked row, so a cancel
-- committed while this statement waited for the row counts.
settled AS (
    UPDATE {schema}.jobs AS j
    SET state = CASE WHEN j.cancel_requested_at_ms IS NOT NULL AND r.requeues
                     THEN 'cancelled' ELSE r.state END,
        attempts = j.attempts - r.attempts_given_back,
        -- A run the settle ends keeps the instant it last became due (its latency).
        run_at_ms = CASE WHEN r.finishes
                              OR (j.cancel_requested_at_ms IS NOT NULL AND r.requeues)
                         THEN j.run_at_ms ELSE coalesce(r.run_at_ms, j.run_at_ms) END,
        result = CASE WHEN r.state = 'completed' THEN r.result::jsonb ELSE j.result END,
        last_error_code = CASE WHEN j.cancel_requested_at_ms IS NOT NULL AND r.requeues
                               THEN $14 ELSE coalesce(r.error_code, j.last_error_code) END,
        last_error_message = CASE WHEN j.cancel_requested_at_ms IS NOT NULL AND r.requeues
                                  THEN $15
                                  WHEN r.error_code IS NULL THEN j.last_error_message
                                  ELSE r.error_message END,
        progress_current = coalesce(r.progress_current, j.progress_current),
        progress_total = coalesce(r.progress_total, j.progress_total),
        finished_at_ms = CASE WHEN r.finishes
                                   OR (j.cancel_requested_at_ms IS NOT NULL AND r.requeues)
                              THEN $13 ELSE j.finished_at_ms END,
        locked_by = NULL,
        lease_expires_at_ms = NULL,
        updated_at_ms = $13
    FROM requests AS r
    WHERE j.id = r.id
      AND j.state = 'running'
      AND j.locked_by = r.worker_id
      AND j.lease_expires_at_ms > $13
    RETURNING j.id, j.id::text AS holder, j.queue, j.state, j.run_at_ms
),
-- A run put straight back (interrupted by a drain, retried at once) wakes idle workers;
-- the runs that ended are told to result waiters (_settle_news.sql).
notified AS (
    SELECT pg_notify({channel}, due.queue)
    FROM (SELECT DISTINCT queue FROM settled WHERE state = 'queued' AND run_at_ms <= $13) AS due
    UNION ALL
    {_settle_news}
)
