-- A fragment both claims pick with (settle_and_claim and settle_and_keyed_claim include it
-- after `WHERE`): the runs of `j` that are due, in the queues and names asked for ($8/$9,
-- NULL: any). A run is due when queued or sleeping with run_at <= now, or running with a
-- lapsed lease: the next claim takes it over, so no sweeper is needed. (A running row's
-- run_at is always in the past, which keeps the whole predicate on the one claim_order
-- index.) Paused queues are a hashed NOT IN: the planner then keeps the ordered
-- claim_order scan that stops after $6 rows (`<> ALL (ARRAY(...))` made it estimate one
-- row and sort the whole due backlog instead, 30 ms a claim at 100k due runs).
j.state IN ('queued', 'sleeping', 'running')
      AND j.run_at_ms <= $2
      AND (j.state <> 'running' OR j.lease_expires_at_ms <= $2)
      AND j.queue NOT IN (SELECT queue FROM {schema}.paused_queues)
      AND ($8::text[] IS NULL OR j.queue = ANY ($8::text[]))
      AND ($9::text[] IS NULL OR j.name = ANY ($9::text[]))
