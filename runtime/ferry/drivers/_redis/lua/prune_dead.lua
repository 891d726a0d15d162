-- Delete up to p.batch dead runs finished before p.before (prune_runs).
--! include prune_runs
return prune_runs({'dead'})
