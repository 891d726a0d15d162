-- Every task's last-tick state.
SELECT task, checked_through_ms, last_occurrence_ms, last_fired_at_ms
FROM {schema}.scheduler_ticks
