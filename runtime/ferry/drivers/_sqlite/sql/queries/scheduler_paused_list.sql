-- Every paused task and when it was paused.
SELECT task, paused_at_ms FROM ferry_scheduler_paused_tasks
