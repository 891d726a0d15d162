-- A fragment both claims pick with (settle_and_claim and settle_and_keyed_claim include it
-- after `WHERE`): the ready rows `r` that are due, in the queues and names asked for
-- ($8/$9, NULL: any). `part < 2` keeps the plan on the rotating pair (ready_later is never
-- due: promotion moves its runs over before they are), so the claim is one ordered merge of
-- two index scans that stops after $6 rows. Paused queues are a hashed NOT IN: the planner
-- then keeps that ordered scan (`<> ALL (ARRAY(...))` made it estimate one row and sort the
-- whole due backlog instead, 30 ms a claim at 100k due runs).
r.part < 2
      AND r.run_at_ms <= $2
      AND r.queue NOT IN (SELECT queue FROM {schema}.paused_queues)
      AND ($8::text[] IS NULL OR r.queue = ANY ($8::text[]))
      AND ($9::text[] IS NULL OR r.name = ANY ($9::text[]))
