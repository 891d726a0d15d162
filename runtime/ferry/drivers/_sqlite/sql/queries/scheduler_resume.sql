-- Let the dispatcher fire task :task again.
DELETE FROM ferry_scheduler_paused_tasks WHERE task = :task
