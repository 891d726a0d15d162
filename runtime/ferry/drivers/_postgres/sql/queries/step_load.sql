-- Every step runs :job_ids have recorded, each run's in the order they ran.
SELECT job_id::text, name, kind, result::text, started_at_ms, finished_at_ms, wake_at_ms
FROM {schema}.steps
WHERE job_id = ANY (:job_ids::bigint[])
ORDER BY job_id, started_at_ms, seq
