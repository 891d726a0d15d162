-- The newest :limit entries of the log of (:space, :key), newest first.
SELECT value FROM ferry_record_log WHERE space = :space AND key = :key ORDER BY id DESC LIMIT :limit
