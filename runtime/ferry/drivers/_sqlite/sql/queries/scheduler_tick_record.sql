-- Store task :task's last-tick state, already merged forward (protocol.advanced) under the
-- write lock while :holder was checked to lead.
INSERT INTO ferry_scheduler_ticks (task, checked_through_ms, last_occurrence_ms, last_fired_at_ms)
VALUES (:task, :checked_through_ms, :last_occurrence_ms, :last_fired_at_ms)
ON CONFLICT (task) DO UPDATE
SET checked_through_ms = excluded.checked_through_ms,
    last_occurrence_ms = excluded.last_occurrence_ms,
    last_fired_at_ms = excluded.last_fired_at_ms
