-- Fan-out and fan-in (step.enqueue, step.wait), as on Postgres (its migration 0023): a
-- run's parent, the count of its children that have not ended, and whether it is parked
-- waiting for them. The rules are ferry.drivers.fan_in's, applied by the driver in the
-- transaction of each change (ferry.drivers._sqlite.runs): every write here holds the
-- file's write lock, so no count can race another.
ALTER TABLE ferry_jobs ADD COLUMN parent_id INTEGER;
ALTER TABLE ferry_jobs ADD COLUMN children_pending INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ferry_jobs ADD COLUMN awaiting_children INTEGER NOT NULL DEFAULT 0;

-- A parent's children, oldest first: `jobs show`, an operator's cancel of the parent, and
-- prune (a child is kept while its parent has not ended: the parent's wait reads it).
CREATE INDEX ferry_jobs_children ON ferry_jobs (parent_id, id) WHERE parent_id IS NOT NULL;
