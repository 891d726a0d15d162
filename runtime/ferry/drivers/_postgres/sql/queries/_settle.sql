-- A fragment both round trips of the worker begin with (settle_and_claim and
-- settle_and_keyed_claim include it): settle a batch of attempts. $1 is the batch as one
-- JSON array, an array per settle (runs distinct): row id, worker, planned state, attempts
-- given back, requeues, finishes, run_at, result (a JSON value), error code and message,
-- progress current and total, a failed attempt's record. One text parameter, not twelve
-- arrays: the driver encodes the batch with one call, where an array parameter costs a
-- check per element. $2 is now; $3/$4 the error a cancel override leaves. `settled` holds
-- the runs whose settle landed; `requeued` those it put back in the queue (a retry, a
-- sleep, an interruption), which the statement makes ready (_ready.sql) with whatever else
-- it makes claimable; `notified` wakes idle workers for the runs put straight back and
-- tells result waiters of the runs that ended.
requests AS (
    SELECT (r ->> 0)::bigint AS id, r ->> 1 AS worker_id, r ->> 2 AS state,
           (r ->> 3)::integer AS attempts_given_back, (r ->> 4)::boolean AS requeues,
           (r ->> 5)::boolean AS finishes, (r ->> 6)::bigint AS run_at_ms,
           (r -> 7)::jsonb AS result, r ->> 8 AS error_code, r ->> 9 AS error_message,
           (r ->> 10)::bigint AS progress_current, (r ->> 11)::bigint AS progress_total,
           r ->> 12 AS failure
    FROM json_array_elements($1::json) AS r
),
-- The rules are ferry.drivers.settle's: the caller passes each settle's planned state,
-- whether it gives the attempt back, whether it requeues and whether it finishes the run.
-- Each settle is fenced on its claimer: it lands only while that worker holds an
-- unexpired lease, so a worker whose run was taken over changes nothing. The cancel
-- override (settle.with_cancel_request): a run an operator asked to cancel while it ran
-- never goes back to the queue. Each test reads `j`, the locked row, so a cancel
-- committed while this statement waited for the row counts. The runs are found by their
-- ids as one array (`= ANY`), which the planner probes on the primary key: joined to the
-- JSON rows alone (estimated 100), a table of thousands of runs whose statistics say none
-- is running was read whole instead, on every settle.
settled AS (
    UPDATE {schema}.jobs AS j
    SET state = CASE WHEN j.cancel_requested_at_ms IS NOT NULL AND r.requeues
                     THEN 'cancelled' ELSE r.state END,
        attempts = j.attempts - r.attempts_given_back,
        -- A run the settle ends keeps the instant it last became due (its latency).
        run_at_ms = CASE WHEN r.finishes
                              OR (j.cancel_requested_at_ms IS NOT NULL AND r.requeues)
                         THEN j.run_at_ms ELSE coalesce(r.run_at_ms, j.run_at_ms) END,
        result = CASE WHEN r.state = 'completed' THEN r.result ELSE j.result END,
        last_error_code = CASE WHEN j.cancel_requested_at_ms IS NOT NULL AND r.requeues
                               THEN $3 ELSE coalesce(r.error_code, j.last_error_code) END,
        last_error_message = CASE WHEN j.cancel_requested_at_ms IS NOT NULL AND r.requeues
                                  THEN $4
                                  WHEN r.error_code IS NULL THEN j.last_error_message
                                  ELSE r.error_message END,
        -- A failed attempt's record (ferry.drivers.failures) joins the run's newest 16 kB.
        failures = CASE WHEN r.failure IS NULL THEN j.failures
                        ELSE right(coalesce(j.failures, '') || r.failure, 16384) END,
        progress_current = coalesce(r.progress_current, j.progress_current),
        progress_total = coalesce(r.progress_total, j.progress_total),
        finished_at_ms = CASE WHEN r.finishes
                                   OR (j.cancel_requested_at_ms IS NOT NULL AND r.requeues)
                              THEN $2 ELSE j.finished_at_ms END,
        locked_by = NULL,
        lease_expires_at_ms = NULL,
        updated_at_ms = $2
    FROM requests AS r
    WHERE j.id = r.id
      AND j.id = ANY (ARRAY(SELECT (e ->> 0)::bigint FROM json_array_elements($1::json) AS e))
      AND j.state = 'running'
      AND j.locked_by = r.worker_id
      AND j.lease_expires_at_ms > $2
    RETURNING j.id, j.id::text AS holder, j.queue, j.state, j.run_at_ms, j.priority, j.name,
              j.concurrency_key
),
requeued AS (
    SELECT id, priority, run_at_ms, queue, name, concurrency_key, $2::bigint AS now_ms
    FROM settled
    WHERE state IN ('queued', 'sleeping')
),
-- A run put straight back (interrupted by a drain, retried at once) wakes idle workers;
-- the runs that ended are told to result waiters (_settle_news.sql).
notified AS (
    SELECT pg_notify({channel}, due.queue)
    FROM (SELECT DISTINCT queue FROM settled WHERE state = 'queued' AND run_at_ms <= $2) AS due
    UNION ALL
    {_settle_news}
)
