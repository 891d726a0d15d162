-- Every task's last-tick state (or task :task's alone).
SELECT task, checked_through_ms, last_occurrence_ms, last_fired_at_ms
FROM ferry_scheduler_ticks
WHERE :task IS NULL OR task = :task
