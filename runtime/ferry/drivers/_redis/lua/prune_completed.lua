-- Delete up to p.batch completed or cancelled runs finished before p.before (prune_runs).
--! include prune_runs
return prune_runs({'completed', 'cancelled'})
