-- Pause task :task (at :now) until it is resumed; pausing a paused task keeps its instant.
INSERT INTO ferry_scheduler_paused_tasks (task, paused_at_ms) VALUES (:task, :now)
ON CONFLICT (task) DO NOTHING
