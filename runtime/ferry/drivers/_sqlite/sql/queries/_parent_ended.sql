-- A fragment of prune_completed and prune_dead: run `j` may go only once it has no parent
-- that has not ended (a child is kept while its parent has not: the parent's step.wait
-- reads its outcome).
(j.parent_id IS NULL
 OR NOT EXISTS (SELECT 1 FROM ferry_jobs AS p
                WHERE p.id = j.parent_id AND p.state NOT IN ('completed', 'dead', 'cancelled')))
