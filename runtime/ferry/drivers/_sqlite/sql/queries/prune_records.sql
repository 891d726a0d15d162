-- Delete up to :batch records expired by :before.
DELETE FROM ferry_records WHERE rowid IN (
    SELECT rowid FROM ferry_records WHERE expires_at_ms <= :before LIMIT :batch
)
