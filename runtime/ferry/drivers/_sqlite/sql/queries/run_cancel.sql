-- Cancel queued or sleeping run :id at :now (checked under the write lock): it ends here.
UPDATE ferry_jobs
SET state = 'cancelled', finished_at_ms = :now, updated_at_ms = :now,
    last_error_code = :error_code, last_error_message = :error_message
WHERE id = :id
