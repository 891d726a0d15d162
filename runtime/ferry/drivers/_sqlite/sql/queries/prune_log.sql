-- Delete up to :batch log entries stamped before :before.
DELETE FROM ferry_record_log
WHERE id IN (SELECT id FROM ferry_record_log WHERE at_ms < :before ORDER BY id LIMIT :batch)
