-- The newest $3 entries of the log of ($1, $2), newest first.
SELECT value::text AS value FROM {schema}.record_log
WHERE space = $1 AND key = $2 ORDER BY id DESC LIMIT $3
