-- A child of run :id was enqueued, ended or came back (ferry.drivers.fan_in): its count
-- changes by :change, and a parent sleeping awaiting its children whose count reaches 0
-- is due at :now. Answers whether it just became due so (idle workers should wake).
UPDATE ferry_jobs
SET children_pending = children_pending + :change,
    run_at_ms = CASE WHEN state = 'sleeping' AND awaiting_children
                          AND children_pending + :change <= 0
                     THEN :now ELSE run_at_ms END
WHERE id = :id
RETURNING state = 'sleeping' AND awaiting_children AND children_pending <= 0 AS woken
