-- Delete up to :batch records expired by :before; a row per record deleted.
DELETE FROM {schema}.records
WHERE (space, key) IN (
    SELECT space, key FROM {schema}.records WHERE expires_at_ms <= :before LIMIT :batch
)
RETURNING 1
