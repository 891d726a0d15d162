-- Delete run :id (no worker or drain holds it: checked under the write lock); its steps
-- go with it (ON DELETE CASCADE).
DELETE FROM ferry_jobs WHERE id = :id
