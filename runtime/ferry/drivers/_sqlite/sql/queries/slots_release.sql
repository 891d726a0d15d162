-- Every slot run :holder holds (its concurrency key and caps), released with its settle:
-- the next run of a limit-1 key can start the moment this commits.
DELETE FROM ferry_lease_slots WHERE holder = :holder
