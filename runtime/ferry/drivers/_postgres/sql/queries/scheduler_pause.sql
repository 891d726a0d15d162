-- Pause task $1 (at $2) until it is resumed; pausing a paused task keeps its first instant.
INSERT INTO {schema}.scheduler_paused_tasks (task, paused_at_ms) VALUES ($1, $2)
ON CONFLICT (task) DO NOTHING
