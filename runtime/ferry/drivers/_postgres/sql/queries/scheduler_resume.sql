-- Let the dispatcher fire task $1 again.
DELETE FROM {schema}.scheduler_paused_tasks WHERE task = $1
