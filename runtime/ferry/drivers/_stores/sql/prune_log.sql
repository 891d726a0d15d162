-- Delete up to :batch log entries stamped before :before; a row per entry deleted.
DELETE FROM {schema}.record_log
WHERE id IN (SELECT id FROM {schema}.record_log WHERE at_ms < :before ORDER BY id LIMIT :batch)
RETURNING 1
